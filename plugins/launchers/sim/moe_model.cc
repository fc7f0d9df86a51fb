// Copyright attune authors.
//
// The MoE terms of the step-time model (docs/sim.md, "MoE"): the busiest expert-parallel rank's
// load, the experts' GEMMs at their per-expert row counts, the router and token permutation, and
// the dispatch and combine over NVLink and the network.
#include <algorithm>
#include <cmath>

#include "perf_terms.h"

namespace attune::sim {

double MoeBusiestLoad(const TrainingSetup& setup, const ModelFactors& factors) {
  const ModelShape& m = setup.model;
  const Parallelism& p = setup.par;
  if (m.experts <= 0) return 1.0;
  // Padding every expert to its capacity makes every rank compute the capacity.
  if (setup.feat.moe_pad_to_capacity) return std::max(1.0, setup.feat.moe_capacity_factor);
  if (p.ep <= 1 || setup.feat.moe_force_balance) return 1.0;
  double experts = static_cast<double>(m.experts), ep = p.ep;
  // One expert's load per micro-batch varies by the router's preference (cv) and by sampling
  // the tokens of the EP group's micro-batch (Poisson: 1/√(mean rows per expert)).
  double tokens_group = static_cast<double>(p.micro_batch) * static_cast<double>(m.seq_length) /
                        p.cp / p.tp * ep;
  double mean_rows = std::max(1.0, tokens_group * static_cast<double>(m.topk) / experts);
  double cv_expert = std::sqrt(factors.moe_expert_load_cv * factors.moe_expert_load_cv + 1.0 / mean_rows);
  // A rank holds E/EP experts (their sum varies less), and the busiest of EP ranks sits about
  // √(2 ln EP) standard deviations above the mean (the expected maximum of EP normal draws).
  double cv_rank = cv_expert / std::sqrt(experts / ep);
  double load = 1.0 + cv_rank * std::sqrt(2.0 * std::log(ep));
  if (setup.feat.moe_capacity_factor > 0) load = std::min(load, std::max(1.0, setup.feat.moe_capacity_factor));
  return load;
}

namespace step_internal {

void AddExperts(const Ctx& x, LayerCost* cost) {
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden);
  double e = MlpFactor(m);
  const Parallelism& p = x.s.par;
  double fe = static_cast<double>(m.moe_ffn_hidden);
  double k = static_cast<double>(m.topk);
  // A GPU runs its local experts over tokens·topk·ETP/TP routed rows in all (reference §1.1:
  // ETP shards the expert width), times the busiest rank's load: every rank waits for it at the
  // combine. Each expert's GEMM sees only its own rows, so σ(rows) and the roofline apply per
  // expert: fine-grained experts with few tokens each run far below the large-GEMM rate.
  double local_experts = static_cast<double>(m.experts) / p.ep;
  double rows = x.tokens * k * p.etp / x.tp / local_experts * x.moe_load;
  double per_expert = GemmTime(x, std::max(1.0, rows), fe * (e - 1) / p.etp, h) +
                      GemmTime(x, std::max(1.0, rows), h, fe / p.etp);
  cost->mlp = local_experts * per_expert;
  cost->gemm += cost->mlp;
  // Without grouped GEMM, SequentialMLP loops over experts: four kernels each, launched and
  // synchronised one by one.
  if (!x.s.feat.grouped_gemm) cost->gemm += local_experts * 4 * kSequentialExpertKernelS;
  if (m.shared_expert_hidden > 0) {
    double fs = static_cast<double>(m.shared_expert_hidden);
    cost->shared = GemmTime(x, x.tokens, fs * (e - 1) / x.tp, h) + GemmTime(x, x.tokens, h, fs / x.tp);
    cost->gemm += cost->shared;
  }
}

// Router and permutation, memory-bound [Megatron's TopKRouter and moe_utils.permute]: the router
// GEMM (BF16, tokens × E), its softmax/top-k/aux-loss passes over the FP32 scores (~6 passes),
// and the permutation before dispatch and unpermutation after combine of the routed rows (read
// and write BF16 each; the received side scaled by the busiest rank's load). A fused permute
// (--moe-permute-fusion) makes each one pass.
void AddRouterAndPermutation(const Ctx& x, LayerCost* cost) {
  const ModelShape& m = x.s.model;
  Ctx bf16 = x;
  bf16.prec = GemmPrecision::kBf16;
  double sp = x.s.feat.sequence_parallel ? x.tp : 1.0;
  double tokens = x.tokens / sp;
  double experts = static_cast<double>(m.experts);
  double h = static_cast<double>(m.hidden);
  double t = GemmTime(bf16, tokens, experts, h);
  t += tokens * experts * 4.0 * 6.0 / x.hbm;
  double routed = x.tokens / x.tp * static_cast<double>(m.topk) * h * kBytesBf16;
  double passes = x.s.feat.moe_permute_fusion ? 1.0 : 2.0;
  t += routed * (1.0 + x.moe_load) * 2.0 * passes / x.hbm;
  cost->moe += t * x.ew;
}

// All-to-all of `bytes` per rank among `ep` ranks `stride` apart: the share bound for peers in
// the same NVLink domain goes over NVLink, the rest over the inter-node network (at
// `inter_eff` of its bus bandwidth: many small messages), both at once.
double AllToAll(const Ctx& x, double ep, double stride, double bytes, double inter_eff,
                double nvlink_eff = 1.0) {
  double domain = static_cast<double>(x.c.NvlinkDomain());
  double peers_nvlink = std::max(1.0, std::min(ep, std::floor(domain / stride)));
  double nvlink = (peers_nvlink - 1) / ep * bytes / (x.c.NvlinkBusBytesPerS() * nvlink_eff);
  double inter = (ep - peers_nvlink) / ep * bytes / (x.c.InterNodeBusBytesPerS() * inter_eff);
  double latency = peers_nvlink < ep ? x.c.inter_node_latency_us * 1e-6 : 2e-6;
  // One message per peer, issued together; ~0.5 µs of NCCL work each.
  return std::max(nvlink, inter) + latency + (ep - 1) * 0.5e-6;
}

// The expert grid orders ranks etp-ep-edp-pp (MoE parallel folding): a rank's ETP peers are
// adjacent, its EP peers ETP apart, and Megatron's dispatchers move tokens within that grid
// [Megatron `token_dispatcher.py`: the dispatchers' tensor-parallel group is the expert TP group,
// and allgather and flex work over the expert TP×EP group]:
//   allgather  gathers every token of the ETP×EP group on every rank and reduce-scatters the
//              outputs back;
//   alltoall   all-to-all over EP (to the peer of the same ETP index), then an all-gather over
//              ETP (every ETP rank of an expert needs all its tokens), reversed in the combine;
//   flex       DeepEP over the ETP×EP group with top-k × ETP destinations: every ETP rank of a
//              chosen expert receives the token; across the network once per destination node,
//              forwarded over NVLink there, at the network's full bus bandwidth (DeepEP's README:
//              43-47 GB/s RDMA per H800 on a ~50 GB/s CX7 NIC).
// Every routed copy of a token goes to its expert's ranks; the busiest rank receives `moe_load`
// times the mean.
void AddExpertComm(const Ctx& x, LayerCost* cost) {
  const Parallelism& p = x.s.par;
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden);
  double local = x.tokens / x.tp * h * kBytesBf16;
  double k = static_cast<double>(m.topk);
  const double ep = p.ep, etp = p.etp;
  double t = 0;
  if (x.s.feat.dispatcher == Dispatcher::kAllgather) {
    double n = ep * etp;
    t = 2 * AllGather(GroupLink(x, 1, n), n, local * n);
  } else if (x.s.feat.dispatcher == Dispatcher::kFlex) {
    double n = ep * etp;
    if (n > 1) {
      double bytes = local * k * etp * x.moe_load;
      double domain = static_cast<double>(x.c.NvlinkDomain());
      double per_node = std::max(1.0, std::min(n, domain));
      double nodes = n / per_node;
      double node_copies = nodes * (1.0 - std::pow(1.0 - 1.0 / nodes, k));
      double dedup = nodes > 1 ? std::min(1.0, node_copies / (k * etp)) : 1.0;
      t = 2 * AllToAll(x, n, 1, bytes * dedup, 1.0);
    }
  } else {
    double bytes = local * k * x.moe_load;
    if (ep > 1) {
      // NCCL's all-to-all reaches the bus bandwidth on an 8-GPU NVSwitch board but not across a
      // multi-node NVLink domain (mnnvl_alltoall_efficiency).
      const double nvlink_eff = x.c.NvlinkDomain() > 8 ? x.f.mnnvl_alltoall_efficiency : 1.0;
      t = 2 * AllToAll(x, ep, etp, bytes, 0.5, nvlink_eff);
    }
    t += 2 * AllGather(GroupLink(x, 1, etp), etp, bytes * etp);
  }
  if (x.s.feat.overlap_moe_comm) {
    // The 1F1B overlap runs one micro-batch's dispatch and combine (forward and backward: 2t)
    // under another's layer compute (forward and backward: about three forwards): it hides its
    // share of the traffic only up to that compute. Cross-node EP on Hopper moves more than the
    // layer computes, and the rest stays exposed.
    const double compute = 3 * (cost->gemm + cost->attention + cost->elementwise);
    t -= x.f.comm_overlap_hidden * std::min(t, compute / 2);
  }
  // --moe-shared-expert-overlap runs the shared experts on another stream during the dispatch
  // and combine.
  if (x.s.feat.moe_shared_expert_overlap) t = std::max(0.0, t - cost->shared);
  cost->ep += t;
}

}  // namespace step_internal
}  // namespace attune::sim
