#include "perf_model.h"

#include <algorithm>
#include <cmath>

namespace attune::sim {
namespace {

// Share of HBM bandwidth that streaming (elementwise) kernels reach.
constexpr double kHbmEfficiency = 0.8;
// Host time per kernel with CUDA graphs, relative to eager launches.
constexpr double kGraphHostShare = 0.1;
constexpr double kBytesBf16 = 2;
// Fixed cost of one expert GEMM launched from SequentialMLP's Python loop.
constexpr double kSequentialExpertKernelS = 10e-6;

// Large-GEMM efficiency by generation (the order cuBLAS reaches on big BF16 shapes; the A100
// value is fitted to the A100 calibration rows; docs/sim.md).
double GemmPeakFraction(const GpuSpec& gpu) {
  if (gpu.compute_capability_major <= 8) return 0.72;
  if (gpu.compute_capability_major == 9) return 0.72;
  return 0.70;
}

struct Ctx {
  const TrainingSetup& s;
  const ClusterSpec& c;
  const ModelFactors& f;
  double b, seq, cp, tp, tokens;  // tokens = b·s/CP handled by one GPU per micro-batch
  double peak, hbm;               // FLOP/s, bytes/s

  Ctx(const TrainingSetup& setup, const ClusterSpec& cluster, const ModelFactors& factors)
      : s(setup), c(cluster), f(factors) {
    b = static_cast<double>(setup.par.micro_batch);
    seq = static_cast<double>(setup.model.seq_length);
    cp = setup.par.cp;
    tp = setup.par.tp;
    tokens = b * seq / cp;
    peak = cluster.gpu.peak_bf16_tflops * 1e12;
    hbm = cluster.gpu.hbm_tb_s * 1e12 * kHbmEfficiency;
  }
};

double Sat(double x, double half) { return x / (x + half); }

// Seconds for one forward GEMM (m×k)·(k×n).
double GemmTime(const Ctx& x, double m, double n, double k) {
  double frac = GemmPeakFraction(x.c.gpu) * Sat(m, x.f.gemm_half_dim) *
                Sat(n, x.f.gemm_half_dim) * Sat(k, x.f.gemm_half_dim);
  double peak = x.peak;
  if (x.s.feat.fp8 && x.c.gpu.peak_fp8_tflops > 0) {
    peak = x.c.gpu.peak_fp8_tflops * 1e12;
    frac *= x.f.fp8_gemm_fraction;
  }
  return 2.0 * m * n * k / (peak * frac);
}

// Bandwidth (bytes/s) and latency (s) of a group of `size` ranks `stride` apart.
struct Link {
  double bw;
  double latency;
};
Link GroupLink(const Ctx& x, double stride, double size) {
  bool nvlink = stride * size <= x.c.NvlinkDomain();
  if (nvlink) return {x.c.NvlinkBusBytesPerS(), 2e-6};
  return {x.c.InterNodeBusBytesPerS(), x.c.inter_node_latency_us * 1e-6};
}

double AllReduce(const Link& l, double n, double bytes) {
  if (n <= 1) return 0;
  return 2 * (n - 1) / n * bytes / l.bw + 2 * (n - 1) * l.latency;
}
double AllGather(const Link& l, double n, double bytes_out) {
  if (n <= 1) return 0;
  return (n - 1) / n * bytes_out / l.bw + (n - 1) * l.latency;
}

// One layer's forward cost for one micro-batch on one GPU.
struct LayerCost {
  double gemm = 0, attention = 0, elementwise = 0, tp = 0, cp = 0, ep = 0;
  double scores = 0;  // unfused attention's softmax/dropout passes (part of elementwise)
};

double MlpFactor(const ModelShape& m) { return m.swiglu ? 3.0 : 2.0; }

void AddAttention(const Ctx& x, LayerCost* cost) {
  const ModelShape& m = x.s.model;
  double nd = static_cast<double>(m.heads * m.kv_channels);
  double gd = static_cast<double>(m.query_groups * m.kv_channels);
  double h = static_cast<double>(m.hidden);
  cost->gemm += GemmTime(x, x.tokens, (nd + 2 * gd) / x.tp, h);
  cost->gemm += GemmTime(x, x.tokens, h, nd / x.tp);
  // Core attention: QKᵀ and AV over the local queries against the whole sequence.
  double heads_local = std::max(1.0, static_cast<double>(m.heads) / x.tp);
  double d = static_cast<double>(m.kv_channels);
  double full = 4.0 * x.b * (x.seq / x.cp) * x.seq * d * heads_local;
  if (x.s.feat.flash_attention) {
    double frac = GemmPeakFraction(x.c.gpu) * x.f.attention_fraction;
    cost->attention += 0.5 * full / (x.peak * frac);
  } else {
    // Unfused: the full score matrix is computed, then masked, softmaxed and dropped out in
    // separate kernels that stream it through HBM (~8 bytes per score forward).
    cost->attention += full / (x.peak * GemmPeakFraction(x.c.gpu) * Sat(d, x.f.gemm_half_dim));
    double scores = x.b * heads_local * (x.seq / x.cp) * x.seq;
    cost->scores = scores * 8.0 / x.hbm;
    cost->elementwise += cost->scores;
  }
}

void AddMlp(const Ctx& x, bool moe, LayerCost* cost) {
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden);
  double e = MlpFactor(m);
  if (!moe) {
    double f = static_cast<double>(m.ffn_hidden);
    cost->gemm += GemmTime(x, x.tokens, f * (e - 1) / x.tp, h);
    cost->gemm += GemmTime(x, x.tokens, h, f / x.tp);
    return;
  }
  const Parallelism& p = x.s.par;
  double fe = static_cast<double>(m.moe_ffn_hidden);
  double k = static_cast<double>(m.topk);
  // Balanced routing: a GPU runs its local experts over tokens·topk·ETP/TP rows in all, each
  // expert over an equal share (reference §1.1: ETP shards the expert width).
  double local_experts = static_cast<double>(m.experts) / p.ep;
  double rows = x.tokens * k * p.etp / x.tp / local_experts;
  double per_expert = GemmTime(x, std::max(1.0, rows), fe * (e - 1) / p.etp, h) +
                      GemmTime(x, std::max(1.0, rows), h, fe / p.etp);
  cost->gemm += local_experts * per_expert;
  // Without grouped GEMM, SequentialMLP loops over experts: four kernels each, launched and
  // synchronised one by one.
  if (!x.s.feat.grouped_gemm) cost->gemm += local_experts * 4 * kSequentialExpertKernelS;
  if (m.shared_expert_hidden > 0) {
    double fs = static_cast<double>(m.shared_expert_hidden);
    cost->gemm += GemmTime(x, x.tokens, fs * (e - 1) / x.tp, h) + GemmTime(x, x.tokens, h, fs / x.tp);
  }
}

// Bytes that LayerNorm, dropout, residual adds, bias and activation kernels stream (forward).
void AddElementwise(const Ctx& x, bool moe, LayerCost* cost) {
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden);
  double sp = x.s.feat.sequence_parallel ? x.tp : 1.0;
  double f = moe ? static_cast<double>(m.moe_ffn_hidden) * m.topk : static_cast<double>(m.ffn_hidden);
  double act = f * (m.swiglu ? 3.0 : 2.0) / x.tp;   // read fc1 output, write activation
  double norms = 12.0 * h / sp;                      // 2 norms, 2 dropout+residual, bias adds
  double bytes = x.tokens * (norms + act) * kBytesBf16;
  if (x.s.feat.fp8) bytes += x.tokens * (2 * h + f / x.tp + h) * 3.0;  // casts to FP8
  if (moe) bytes += x.tokens * m.topk * h * kBytesBf16 * 4.0 / x.tp;   // permute/unpermute
  cost->elementwise += bytes * x.f.elementwise_traffic / x.hbm;
}

void AddTensorParallelComm(const Ctx& x, bool moe, LayerCost* cost) {
  if (x.tp <= 1) return;
  Link l = GroupLink(x, 1, x.tp);
  double bytes = x.tokens * static_cast<double>(x.s.model.hidden) * kBytesBf16;
  // One all-reduce (or all-gather + reduce-scatter with SP: same volume) per block per pass;
  // a MoE block exchanges tokens through the dispatcher instead.
  double collectives = moe ? 1.0 : 2.0;
  double t = collectives * AllReduce(l, x.tp, bytes);
  if (x.s.feat.tp_comm_overlap) t *= 1.0 - x.f.comm_overlap_hidden;
  cost->tp += t;
}

void AddExpertComm(const Ctx& x, LayerCost* cost) {
  const Parallelism& p = x.s.par;
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden);
  double local = x.tokens / x.tp * h * kBytesBf16;
  double t = 0;
  if (x.s.feat.dispatcher == Dispatcher::kAllgather) {
    double n = static_cast<double>(p.ep) * p.tp;
    Link l = GroupLink(x, 1, n);
    t = 2 * AllGather(l, n, local * n);
  } else if (p.ep > 1) {
    Link l = GroupLink(x, x.tp * x.cp, p.ep);
    bool crosses = x.tp * x.cp * p.ep > x.c.NvlinkDomain();
    // All-to-all across nodes reaches less bus bandwidth than a ring (many small messages);
    // DeepEP-style flex dispatch recovers most of it.
    double a2a_eff = crosses ? (x.s.feat.dispatcher == Dispatcher::kFlex ? 0.8 : 0.5) : 1.0;
    double bytes = local * m.topk;
    t = 2 * ((p.ep - 1.0) / p.ep * bytes / (l.bw * a2a_eff) + (p.ep - 1) * l.latency);
  }
  if (x.s.feat.overlap_moe_comm) t *= 1.0 - x.f.comm_overlap_hidden;
  cost->ep += t;
}

void AddContextParallelComm(const Ctx& x, LayerCost* cost) {
  if (x.cp <= 1) return;
  const ModelShape& m = x.s.model;
  Link l = GroupLink(x, x.tp, x.cp);
  double kv_heads = std::max(1.0, static_cast<double>(m.query_groups) / x.tp);
  double kv = x.b * (x.seq / x.cp) * 2 * kv_heads * m.kv_channels * kBytesBf16;
  double comm = (x.cp - 1) * (kv / l.bw + l.latency);
  // Ring attention overlaps each KV exchange with the attention of the previous chunk.
  cost->cp += std::max(0.0, comm - cost->attention) + (x.cp - 1) * l.latency;
}

LayerCost LayerForward(const Ctx& x, bool moe) {
  LayerCost cost;
  AddAttention(x, &cost);
  AddMlp(x, moe, &cost);
  AddElementwise(x, moe, &cost);
  AddTensorParallelComm(x, moe, &cost);
  if (moe) AddExpertComm(x, &cost);
  AddContextParallelComm(x, &cost);
  return cost;
}

double ForwardTime(const LayerCost& c) { return c.gemm + c.attention + c.elementwise + c.tp + c.cp + c.ep; }

// Forward + backward (+ recompute) of `layers` layers of one kind for one micro-batch.
struct MicroBatchCost {
  double gemm = 0, attention = 0, elementwise = 0, tp = 0, cp = 0, ep = 0, recompute = 0;
  double Gpu() const { return gemm + attention + elementwise + tp + cp + ep + recompute; }
};

double RecomputedShare(const TrainingSetup& s, double layers_on_stage) {
  if (s.feat.recompute != Recompute::kFull) return 0;
  if (s.feat.recompute_method == RecomputeMethod::kUniform) return 1.0;
  return std::min(1.0, s.feat.recompute_layers * static_cast<double>(s.par.vpp) / layers_on_stage);
}

void AddLayers(const Ctx& x, bool moe, double layers, double stage_layers, MicroBatchCost* mb) {
  if (layers <= 0) return;
  LayerCost f = LayerForward(x, moe);
  double attn_bwd = x.s.feat.flash_attention ? 2.5 : 2.0;
  mb->gemm += layers * 3 * f.gemm;
  mb->attention += layers * (1 + attn_bwd) * f.attention;
  mb->elementwise += layers * 3 * f.elementwise;
  mb->tp += layers * 2 * f.tp;
  mb->cp += layers * 3 * f.cp;
  mb->ep += layers * 2 * f.ep;
  double share = RecomputedShare(x.s, stage_layers);
  mb->recompute += layers * share * ForwardTime(f);
  if (x.s.feat.recompute == Recompute::kSelective) mb->recompute += layers * (f.attention + f.scores);
}

void AddLogits(const Ctx& x, MicroBatchCost* mb) {
  const ModelShape& m = x.s.model;
  double v = static_cast<double>(m.vocab) / x.tp;
  mb->gemm += 3 * GemmTime(x, x.tokens, v, static_cast<double>(m.hidden));
  double passes = x.s.feat.cross_entropy_fusion ? 2.0 : 6.0;  // fp32 logits read/written
  mb->elementwise += x.tokens * v * 4.0 * passes / x.hbm;
}

double ParamBytes(double params, bool bf16_grads) { return params * (bf16_grads ? 2.0 : 4.0); }

// Exposed data-parallel communication per iteration (grad reduce and param all-gather).
double DataParallelComm(const Ctx& x, const ParamCounts& pc, double window_bwd, double window_fwd) {
  const Parallelism& p = x.s.par;
  const Features& f = x.s.feat;
  double dp_dense = static_cast<double>(p.dp) * p.cp;
  double dp_expert = std::max(1.0, static_cast<double>(p.world) / (p.etp * p.ep * p.pp));
  double grad = 0, gather = 0;
  auto group = [&](double params, double n, double stride) {
    if (n <= 1 || params <= 0) return;
    Link l = GroupLink(x, stride, n);
    double bytes = ParamBytes(params, f.grad_reduce_in_bf16);
    if (f.distributed_optimizer) {
      grad += AllGather(l, n, bytes);  // a reduce-scatter moves the same bytes
      gather += AllGather(l, n, params * kBytesBf16);
    } else {
      grad += AllReduce(l, n, bytes);
    }
  };
  group(pc.dense_per_gpu, dp_dense, x.tp);
  group(pc.expert_per_gpu, dp_expert, static_cast<double>(p.etp) * p.ep);
  double exposed_grad = f.overlap_grad_reduce ? std::max(0.1 * grad, grad - window_bwd) : grad;
  double exposed_gather =
      f.overlap_param_gather ? std::max(0.1 * gather, gather - window_fwd) : gather;
  return exposed_grad + exposed_gather;
}

double OptimizerTime(const Ctx& x, const ParamCounts& pc) {
  const Parallelism& p = x.s.par;
  double local = pc.dense_per_gpu + pc.expert_per_gpu;
  double shard = x.s.feat.distributed_optimizer ? local / (static_cast<double>(p.dp) * p.cp) : local;
  // Adam: read master, m, v, grad (16 B), write master, m, v (12 B) and the bf16 param (2 B);
  // grad-norm and unscale passes read the local grads twice.
  double bytes = shard * 30.0 + local * 8.0;
  return bytes / x.hbm;
}

}  // namespace

ParamCounts CountParams(const TrainingSetup& setup) {
  const ModelShape& m = setup.model;
  const Parallelism& p = setup.par;
  double h = static_cast<double>(m.hidden);
  double nd = static_cast<double>(m.heads * m.kv_channels);
  double gd = static_cast<double>(m.query_groups * m.kv_channels);
  double e = MlpFactor(m);
  double attn = h * (nd + 2 * gd) + nd * h;
  double dense_mlp = h * static_cast<double>(m.ffn_hidden) * e;
  double experts = static_cast<double>(m.experts) * h * static_cast<double>(m.moe_ffn_hidden) * e;
  double shared = h * static_cast<double>(m.shared_expert_hidden) * e;
  double router = h * static_cast<double>(m.experts);
  double embed = static_cast<double>(m.vocab) * h + (m.learned_positions ? m.seq_length * h : 0.0);
  double output = m.untied_embeddings ? static_cast<double>(m.vocab) * h : 0.0;
  double dl = static_cast<double>(m.DenseLayers()), ml = static_cast<double>(m.MoeLayers());
  ParamCounts pc;
  pc.total = dl * (attn + dense_mlp + 2 * h) + ml * (attn + experts + shared + router + 2 * h) +
             embed + output;
  double tp = p.tp, pp = p.pp;
  double layer_dense = (dl * (attn + dense_mlp) + ml * (attn + shared)) / tp / pp +
                       (dl + ml) * (2 * h) / pp + ml * router / pp;
  double vocab_shard = static_cast<double>(m.vocab) * h / tp;
  pc.first_stage_per_gpu = layer_dense + vocab_shard;
  pc.last_stage_per_gpu = layer_dense + (p.pp > 1 || m.untied_embeddings ? vocab_shard : 0.0);
  if (p.pp == 1) pc.first_stage_per_gpu = layer_dense + vocab_shard + (m.untied_embeddings ? vocab_shard : 0.0);
  pc.dense_per_gpu = std::max(pc.first_stage_per_gpu, pc.last_stage_per_gpu);
  pc.expert_per_gpu = ml * experts / pp / (static_cast<double>(p.ep) * p.etp);
  return pc;
}

double MegatronModelFlops(const ModelShape& m, int64_t global_batch, bool causal_half) {
  double h = static_cast<double>(m.hidden);
  double T = static_cast<double>(global_batch) * static_cast<double>(m.seq_length);
  double S2 = T * static_cast<double>(m.seq_length);
  double e = MlpFactor(m);
  double nd = static_cast<double>(m.heads * m.kv_channels);
  double gd = static_cast<double>(m.query_groups * m.kv_channels);
  double mlp = 6 * h *
               (static_cast<double>(m.ffn_hidden) * e * m.DenseLayers() +
                (static_cast<double>(m.moe_ffn_hidden) * m.topk * e +
                 static_cast<double>(m.shared_expert_hidden) * e) * m.MoeLayers());
  double proj = 6 * (h * (nd + 2 * gd) + nd * h) * static_cast<double>(m.layers);
  double logits = 6 * h * static_cast<double>(m.vocab);
  double core = (causal_half ? 6.0 : 12.0) * nd * static_cast<double>(m.layers);
  return T * (mlp + proj + logits) + S2 * core;
}

double NarayananFlops(const ModelShape& m, int64_t global_batch) {
  double B = static_cast<double>(global_batch), s = static_cast<double>(m.seq_length);
  double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  double V = static_cast<double>(m.vocab);
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

StepBreakdown EstimateStep(const TrainingSetup& setup, const ClusterSpec& cluster,
                           const ModelFactors& factors) {
  Ctx x(setup, cluster, factors);
  const Parallelism& p = setup.par;
  double stage_layers = static_cast<double>(setup.model.layers) / p.pp;
  double moe_layers = static_cast<double>(setup.model.MoeLayers()) / p.pp;
  MicroBatchCost mb;
  AddLayers(x, false, stage_layers - moe_layers, stage_layers, &mb);
  AddLayers(x, true, moe_layers, stage_layers, &mb);
  AddLogits(x, &mb);
  double host = stage_layers * factors.host_us_per_layer * 1e-6 *
                (setup.feat.cuda_graphs ? kGraphHostShare : 1.0);
  double gpu = mb.Gpu();
  double t_mb = std::max(gpu, host);
  double m = static_cast<double>(p.MicroBatches());
  double vpp = p.vpp;

  StepBreakdown out;
  double scale = m;  // per-iteration totals over all micro-batches
  out.gemm_s = mb.gemm * scale;
  out.attention_s = mb.attention * scale;
  out.elementwise_s = mb.elementwise * scale;
  out.recompute_s = mb.recompute * scale;
  out.tp_comm_s = mb.tp * scale;
  out.cp_comm_s = mb.cp * scale;
  out.ep_comm_s = mb.ep * scale;
  out.host_exposed_s = (t_mb - gpu) * scale;
  out.bubble_s = p.pp > 1 ? (p.pp - 1) / vpp * t_mb : 0.0;
  if (p.pp > 1) {
    double bytes = x.tokens * static_cast<double>(setup.model.hidden) * kBytesBf16 /
                   (setup.feat.sequence_parallel ? x.tp : 1.0);
    Link l = GroupLink(x, x.tp * x.cp * p.dp, p.pp);
    double one = bytes / l.bw + l.latency;
    double exposed = (vpp > 1 && setup.feat.overlap_p2p) ? 1.0 - factors.comm_overlap_hidden : 1.0;
    out.pp_p2p_s = m * vpp * 2 * one * exposed;
  }
  ParamCounts pc = CountParams(setup);
  double bwd_window = (mb.gemm * 2.0 / 3.0 + mb.attention * 0.7);
  double fwd_window = (mb.gemm / 3.0 + mb.attention * 0.3);
  out.dp_comm_s = DataParallelComm(x, pc, bwd_window, fwd_window);
  out.optimizer_s = OptimizerTime(x, pc);
  out.step_s = m * t_mb + out.bubble_s + out.pp_p2p_s + out.dp_comm_s + out.optimizer_s;
  out.model_flops = MegatronModelFlops(setup.model, p.global_batch);
  out.tflops_per_gpu = out.model_flops / (out.step_s * 1e12 * p.world);
  out.tokens_per_s_per_gpu = static_cast<double>(p.global_batch) * static_cast<double>(setup.model.seq_length) /
                             out.step_s / p.world;
  return out;
}

}  // namespace attune::sim
