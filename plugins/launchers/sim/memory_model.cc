#include "memory_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "perf_model.h"

namespace attune::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// CUDA context, NCCL communicators and buffers, cuBLAS/TE workspaces (outside the allocator's
// accounting; ~1 GiB is what nvidia-smi shows above max reserved on an idle Megatron rank).
constexpr double kNonPytorchB = 1.2 * kGiB;
constexpr double kWorkspaceB = 0.5 * kGiB;

struct Dims {
  double sb, h, nd, gd, f, t, sp;
};

Dims MakeDims(const TrainingSetup& s) {
  const ModelShape& m = s.model;
  Dims d;
  d.sb = static_cast<double>(s.par.micro_batch) * static_cast<double>(m.seq_length) / s.par.cp;
  d.h = static_cast<double>(m.hidden);
  d.nd = static_cast<double>(m.heads * m.kv_channels);
  d.t = s.par.tp;
  d.gd = std::max(static_cast<double>(m.query_groups * m.kv_channels) / d.t,
                  static_cast<double>(m.kv_channels));
  d.f = static_cast<double>(m.ffn_hidden);
  if (m.mla) {
    // MLA keeps per-head queries and keys of qk + RoPE width and values of v width: Q and the
    // projection input as n·(dq + dv)/2 wide, K and V as 4sb·n·(dq + dv)/2/t.
    double n = static_cast<double>(m.heads);
    double pair = static_cast<double>(m.qk_head_dim + m.qk_pos_emb_head_dim + m.v_head_dim);
    d.nd = n * pair / 2;
    d.gd = d.nd / d.t;
  }
  d.sp = s.feat.sequence_parallel ? d.t : 1.0;
  return d;
}

// Attention block and the norms (Korthikanti §4.1): LN inputs 4sbh, QKV input 2sbh, Q 2sb·nd,
// K and V 4sb·gd, projection input 2sb·nd, dropout mask sbh, plus the score matrices of
// unfused attention (5·a·s²·b: softmax output, dropout mask and output).
// Bytes per element of a saved GEMM input: TE keeps FP8 inputs for backward (1 byte) and NVFP4
// inputs in a row-wise and a column-wise half-byte copy.
double GemmInputBytes(const TrainingSetup& s) { return s.feat.fp8 || s.feat.fp4 ? 1.0 : 2.0; }

double AttentionBytes(const TrainingSetup& s, const Dims& d, bool keep_scores) {
  double gemm_in = GemmInputBytes(s);
  // --recompute-modules layernorm: the norm's output (the QKV input) is rebuilt, not kept.
  double qkv_in = s.feat.recompute_layernorm ? 0.0 : gemm_in;
  double bytes = d.sb * (4 * d.h + qkv_in * d.h + d.h) / d.sp +
                 d.sb * (2 * d.nd + gemm_in * d.nd) / d.t + 4 * d.sb * d.gd;
  if (!s.feat.flash_attention && keep_scores) {
    double heads = std::max(1.0, static_cast<double>(s.model.heads) / d.t);
    double per_score = s.feat.attention_dropout ? 5.0 : 2.0;
    bytes += per_score * heads * d.sb * static_cast<double>(s.model.seq_length);
  }
  return bytes;
}

// MLP: fc1 input 2sbh, fc1 output 2sb·F (twice with SwiGLU), activation output 2sb·F, mask sbh.
double DenseMlpBytes(const TrainingSetup& s, const Dims& d, double width) {
  double e = s.model.swiglu ? 2.0 : 1.0;
  double gemm_in = GemmInputBytes(s);
  double fc1_in = s.feat.recompute_layernorm ? 0.0 : gemm_in;
  if (s.feat.recompute_mlp) return d.sb * 2 * d.h / d.sp;  // the block's input only
  return d.sb * (fc1_in * d.h + d.h) / d.sp + d.sb * (2 * width * e + gemm_in * width) / d.t;
}

// Routed rows keep their permuted input (fc1's wgrad), fc1 output (the activation's backward) and
// activation output (fc2's wgrad; not with --recompute-modules moe_act); the unpermutation
// needs only the routing map, the router its FP32 scores. --recompute-modules moe keeps only the
// layer's input. A rank's rows exceed the mean by the busiest-rank excess of one layer divided by
// √(MoE layers on the stage): over several layers different ranks are the busiest.
double MoeMlpBytes(const TrainingSetup& s, const Dims& d) {
  const ModelShape& m = s.model;
  const Parallelism& p = s.par;
  double moe_layers = std::max(1.0, static_cast<double>(m.MoeLayers()) / p.pp);
  double load = 1.0 + (MoeBusiestLoad(s) - 1.0) / std::sqrt(moe_layers);
  double rows = d.sb * static_cast<double>(m.topk) * p.etp / d.t * load;
  double fe = static_cast<double>(m.moe_ffn_hidden) / p.etp;
  double e = m.swiglu ? 2.0 : 1.0;
  double act = s.feat.recompute_moe_act ? 0.0 : 2 * fe;
  double gemm_in = GemmInputBytes(s);
  double experts = rows * (gemm_in * d.h + 2 * fe * e + act);
  double router = d.sb * static_cast<double>(m.experts) * 4.0 / d.sp;
  if (s.feat.recompute_moe) experts = router = 0;
  double shared = m.shared_expert_hidden > 0
                      ? DenseMlpBytes(s, d, static_cast<double>(m.shared_expert_hidden)) - 3 * d.sb * d.h / d.sp
                      : 0.0;
  return d.sb * 3 * d.h / d.sp + experts + router + shared;
}

double LayerBytes(const TrainingSetup& s, bool moe, bool keep_scores) {
  Dims d = MakeDims(s);
  double mlp = moe ? MoeMlpBytes(s, d) : DenseMlpBytes(s, d, d.f);
  return AttentionBytes(s, d, keep_scores) + mlp;
}

// Activation bytes of one micro-batch over the layers of pipeline rank `stage`, after
// recomputation. An MTP depth keeps what a layer of the last layer's kind keeps, plus its
// concatenated 2h-wide projection input.
double StageMicroBatchBytes(const TrainingSetup& s, int stage, double* one_group_bytes) {
  const Parallelism& p = s.par;
  Dims d = MakeDims(s);
  RankShare share = ShareOfRank(s, stage);
  double layers = share.Layers();
  double moe_share = layers > 0 ? share.MoeKind() / layers : 0;
  bool keep_scores = s.feat.recompute != Recompute::kSelective;
  double full = (1 - moe_share) * LayerBytes(s, false, keep_scores) + moe_share * LayerBytes(s, true, keep_scores);
  double input = 2 * d.sb * d.h / d.sp;  // a checkpointed layer keeps only its input
  double mtp_inputs = share.mtp_layers * 2 * d.sb * 2 * d.h / d.sp;
  *one_group_bytes = full;
  if (s.feat.recompute != Recompute::kFull) return layers * full + mtp_inputs;
  double r = std::max(1, s.feat.recompute_layers);
  if (s.feat.recompute_method == RecomputeMethod::kUniform) {
    *one_group_bytes = r * full;  // one group is rebuilt at a time during backward
    return std::ceil(layers / r) * input + mtp_inputs;
  }
  double recomputed = std::min(layers, r * p.vpp);
  return recomputed * input + (layers - recomputed) * full + mtp_inputs;
}

double InFlightMicroBatches(const TrainingSetup& s, int stage) {
  const Parallelism& p = s.par;
  if (p.pp == 1) return 1;
  double m = static_cast<double>(p.MicroBatches());
  if (p.vpp > 1) {
    // Megatron's theoretical_memory_usage: interleaving keeps (1 + (PP−1)/(PP·VPP)) · PP
    // micro-batch equivalents on the first stage; later stages hold fewer.
    double first = p.pp * (1.0 + (p.pp - 1.0) / (p.pp * p.vpp));
    return std::min(m * 1.0, first - stage * (first - 1) / (p.pp - 1));
  }
  return std::min(m, static_cast<double>(p.pp - stage));
}

double BytesPerParam(const TrainingSetup& s, double shards) {
  // Frozen base weights: the weights alone (a cached FP8 copy beside them with FP8 GEMMs).
  if (s.feat.frozen_base) {
    double weights = s.feat.bf16_training_state || !s.feat.fp8 ? 2.0 : 3.0;
    return s.feat.fsdp ? weights / std::max(1.0, shards) : weights;
  }
  // BF16 parameters, gradients and moments (PyTorch-native training of a BF16 model): no master
  // copy and no FP32 gradient buffer.
  if (s.feat.bf16_training_state) {
    if (s.feat.fsdp) return 8.0 / std::max(1.0, shards);
    return s.feat.distributed_optimizer ? 4.0 + 4.0 / shards : 8.0;
  }
  double grad = s.feat.grad_reduce_in_bf16 ? 2.0 : 4.0;
  double optimizer = s.feat.distributed_optimizer ? 12.0 / shards : 12.0;
  // FP8 keeps a cached FP8 copy beside the BF16 weights, or only FP8 weights with
  // --fp8-param-gather (the optimizer's FP32 master copy remains). NVFP4 caches two half-byte
  // copies (row- and column-wise) with their scales, or keeps only those (--fp4-param-gather).
  double weights = s.feat.fp8_param_gather ? 1.0 : s.feat.fp8 ? 3.0 : 2.0;
  if (s.feat.fp4) weights = s.feat.fp4_param_gather ? 1.125 : 2.0 + 1.125;
  // Fully sharded data parallelism keeps a 1/shards slice of everything; the gathered layers live
  // briefly in the transient memory.
  if (s.feat.fsdp) return (weights + grad + 12.0) / std::max(1.0, shards);
  return weights + grad + optimizer;
}

// Token-dispatch buffers of a MoE layer, live during its forward and backward: the alltoall
// dispatcher's send and receive copies of the routed rows on the busiest rank; the allgather
// dispatcher's gathered tokens of the whole ETP×EP group (BF16) and the FP32 copy of its combined
// outputs that it reduce-scatters back; DeepEP (flex) registers fixed NVLink and RDMA buffers
// instead (~1 GiB each when EP leaves the node, per DeepEP's defaults for 7K-wide hidden states;
// NVLink only within it).
double DispatchBuffers(const TrainingSetup& s, const Dims& d) {
  const ModelShape& m = s.model;
  const double group = static_cast<double>(s.par.ep) * s.par.etp;
  if (m.experts <= 0 || group <= 1) return 0;
  if (s.feat.dispatcher == Dispatcher::kFlex) return group > 8 ? 2 * kGiB : kGiB;
  if (s.feat.dispatcher == Dispatcher::kAllgather) return d.sb / d.t * group * d.h * (2 + 4);
  if (s.par.ep <= 1) return 0;
  double rows = d.sb * static_cast<double>(m.topk) / d.t * MoeBusiestLoad(s);
  return 2 * rows * d.h * 2;
}

}  // namespace

double MemoryEstimate::PeakGib() const { return (worst.max_reserved_b + worst.non_pytorch_b) / kGiB; }

double LayerActivationBytes(const TrainingSetup& setup, bool moe) { return LayerBytes(setup, moe, true); }

StageMemory EstimateStageMemory(const TrainingSetup& s, const ClusterSpec& cluster, int stage) {
  const Parallelism& p = s.par;
  const ModelShape& m = s.model;
  RankParams params = CountRankParams(s, stage);
  RankShare share = ShareOfRank(s, stage);
  StageMemory out;
  out.stage = stage;
  double dense = params.dense;
  out.params = dense + params.expert;
  double dp_dense = static_cast<double>(p.dp) * p.cp;
  double dp_expert = std::max(1.0, static_cast<double>(p.world) / (p.etp * p.ep * p.pp));
  out.weight_optimizer_b = dense * BytesPerParam(s, dp_dense) + params.expert * BytesPerParam(s, dp_expert);
  // FSDP with the gradient sync deferred to the last micro-batch holds every layer's unsharded
  // gradients, in the reduce precision, from the first micro-batch's backward to the last.
  if (s.feat.fsdp && s.feat.fsdp_defer_grad_sync && !s.feat.frozen_base && p.MicroBatches() > 1) {
    out.weight_optimizer_b += out.params * (s.feat.grad_reduce_in_bf16 ? 2.0 : 4.0);
  }

  double group = 0;
  double per_mb = StageMicroBatchBytes(s, stage, &group);
  Dims d = MakeDims(s);
  if (share.embedding) per_mb += 2 * d.sb * d.h / d.sp + d.sb * d.h / d.sp;  // embedding output + mask
  out.activation_b = per_mb * InFlightMicroBatches(s, stage);
  if (s.feat.cuda_graphs) out.activation_b *= 1.1;  // static input/output buffers of graphs

  // The FP32 logits and their gradient; a fused, chunked output layer and loss never holds them.
  double logits = share.loss && !s.feat.fused_linear_loss
                      ? 4.0 * d.sb * static_cast<double>(m.vocab) / d.t
                      : 0.0;
  double tp_buffers = s.feat.tp_comm_overlap ? 6.0 * d.sb * d.h * 2 : 0.0;
  out.transient_b = group + 2 * logits + kWorkspaceB + tp_buffers + DispatchBuffers(s, d);
  double fc1 = 2.0 * d.sb * d.f * (m.swiglu ? 2.0 : 1.0) / d.t;
  out.largest_allocation_b = std::max({fc1, 2 * logits, 2.0 * d.sb * d.h});
  out.max_allocated_b = out.weight_optimizer_b + out.activation_b + out.transient_b;
  // Parameters, gradients and optimizer state live in a few large contiguous buffers; the
  // allocator fragments around the activations and temporaries.
  out.max_reserved_b = out.weight_optimizer_b + (out.activation_b + out.transient_b) * (1 + kFragmentation);
  out.non_pytorch_b = kNonPytorchB;
  (void)cluster;
  return out;
}

MemoryEstimate EstimateMemory(const TrainingSetup& setup, const ClusterSpec& cluster) {
  MemoryEstimate est;
  est.capacity_b = cluster.gpu.memory_gib * kGiB;
  for (int stage : RanksToCheck(setup)) {
    StageMemory m = EstimateStageMemory(setup, cluster, stage);
    if (m.max_reserved_b + m.non_pytorch_b > est.worst.max_reserved_b + est.worst.non_pytorch_b) {
      est.worst = m;
    }
  }
  est.fits = est.worst.max_reserved_b + est.worst.non_pytorch_b <= est.capacity_b;
  return est;
}

}  // namespace attune::sim
