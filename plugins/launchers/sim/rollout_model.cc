// Copyright attune authors.
#include "rollout_model.h"

#include <algorithm>
#include <cmath>

#include "perf_model.h"

namespace attune::sim {
namespace {

// Every constant here is assumed from first principles, not fitted; docs/sim.md ("Rollout")
// gives the reasoning for each.
constexpr double kServingBytesPerParam = 2;   // engines serve BF16 weights
constexpr double kKvBytesPerElement = 2;      // BF16 KV cache
constexpr double kDecodeHbmEfficiency = 0.8;  // share of HBM bandwidth a decode step reaches
constexpr double kDecodeGemmEfficiency = 0.5; // decode GEMMs are skinny (M = requests in flight)
constexpr double kPrefillGemmEfficiency = 0.6;
constexpr double kDecodeStepOverheadS = 1.0e-3;  // scheduler, sampling, CUDA-graph replay
constexpr double kTpAllReduceBaseS = 4e-6;    // an engine's all-reduce with no data: launch + barrier
constexpr double kTpAllReducePeerS = 0.7e-6;  // + per peer: one more NVLink read/write handshake
constexpr double kPrefillChunkTokens = 8192;  // SGLang's --chunked-prefill-size default
constexpr double kRolloutFixedS = 3.0;        // dispatch, rewards, gathering the samples
constexpr double kHostLinkBytesPerS = 25e9;   // offload / onload per GPU (PCIe 5, shared)
constexpr double kHandOverFixedS = 2.0;       // release / resume of memory, IPC handles
constexpr double kUpdateBucketS = 0.05;       // gather + hand-off per bucket (RolloutPlan's size)

double MlpFactor(const ModelShape& m) { return m.swiglu ? 3.0 : 2.0; }

// Parameters of the routed experts of the whole model, and those a token uses.
double ExpertParams(const ModelShape& m) {
  return static_cast<double>(m.MoeLayers()) * static_cast<double>(m.experts) *
         static_cast<double>(m.hidden) * static_cast<double>(m.moe_ffn_hidden) * MlpFactor(m);
}

double ActiveParams(const ModelShape& m, double total) {
  if (m.experts <= 0) return total;
  double unused = static_cast<double>(std::max<int64_t>(0, m.experts - m.topk)) / static_cast<double>(m.experts);
  return total - ExpertParams(m) * unused;
}

// KV-cache bytes of one token on one GPU of an engine of `tp` GPUs. Standard attention splits the
// KV heads over TP (replicated when TP exceeds them); MLA caches one compressed latent (+ the
// RoPE key) per layer, the same on every TP rank.
double KvBytesPerToken(const ModelShape& m, int tp) {
  double layers = static_cast<double>(m.layers);
  if (m.mla) {
    return layers * static_cast<double>(m.kv_lora_rank + m.qk_pos_emb_head_dim) * kKvBytesPerElement;
  }
  double groups = static_cast<double>(std::max<int64_t>(1, m.query_groups));
  double per_gpu = std::max(1.0, groups / std::max(1, tp));
  return 2.0 * layers * per_gpu * static_cast<double>(m.kv_channels) * kKvBytesPerElement;
}

struct EngineShape {
  int tp = 1;
  double dense_b = 0, expert_b = 0;  // weight bytes on one GPU
  double active_params = 0;
  double kv_bytes_per_token = 0;
  double context_tokens = 0;         // mean tokens a request holds while decoding
};

// One decode step with `batch` requests in flight: memory-bound (weights and KV read) or
// compute-bound, plus the fixed per-step cost and two all-reduces per layer of the batch's
// hidden states (after attention and after the MLP) when the engine spans GPUs.
double DecodeStep(const EngineShape& e, const ClusterSpec& c, const ModelShape& m, double batch) {
  double touched = 1.0;
  if (m.experts > 0) {
    double k_over_e = static_cast<double>(m.topk) / static_cast<double>(m.experts);
    touched = 1.0 - std::pow(std::max(0.0, 1.0 - k_over_e), batch);
  }
  double bytes = e.dense_b + e.expert_b * touched + batch * e.context_tokens * e.kv_bytes_per_token;
  double memory_s = bytes / (c.gpu.hbm_tb_s * 1e12 * kDecodeHbmEfficiency);
  double compute_s = 2.0 * e.active_params * batch / e.tp / (c.gpu.peak_bf16_tflops * 1e12 * kDecodeGemmEfficiency);
  double comm_s = 2.0 * static_cast<double>(m.layers) *
                  EngineAllReduceS(c, e.tp, batch * static_cast<double>(m.hidden) * kServingBytesPerParam);
  return std::max(memory_s, compute_s) + kDecodeStepOverheadS + comm_s;
}

double WeightUpdateSeconds(const RolloutPlan& r, const ClusterSpec& c, double weights_b, double training_state_b,
                           int training_gpus) {
  double buckets = std::ceil(weights_b / std::max(1.0, r.update_buffer_bytes));
  if (r.colocated) {
    // CUDA IPC inside the node, and the training state out to the host and back.
    double copy = weights_b / c.NvlinkBusBytesPerS() + buckets * kUpdateBucketS;
    double hand_over = 2.0 * training_state_b / kHostLinkBytesPerS + kHandOverFixedS;
    return copy + hand_over;
  }
  // An NCCL broadcast from the trainer to the engines: over NVLink when everything is one node.
  bool one_node = training_gpus + r.gpus <= c.gpus_per_node;
  double bandwidth = one_node ? c.NvlinkBusBytesPerS() : c.InterNodeBusBytesPerS();
  return weights_b / bandwidth + buckets * kUpdateBucketS;
}

}  // namespace

double EngineAllReduceS(const ClusterSpec& c, int tp, double bytes) {
  if (tp <= 1) return 0.0;
  const double t = static_cast<double>(tp);
  return kTpAllReduceBaseS + kTpAllReducePeerS * (t - 1) + 2.0 * (t - 1) / t * bytes / c.NvlinkBusBytesPerS();
}

RolloutEstimate EstimateRollout(const TrainingSetup& setup, const ClusterSpec& cluster,
                                double resident_training_b, double training_state_b) {
  const RolloutPlan& r = setup.rollout;
  const ModelShape& m = setup.model;
  RolloutEstimate out;
  EngineShape e;
  e.tp = std::max(1, r.gpus_per_engine);
  const int engines = std::max(1, r.gpus / e.tp);
  const double total_params = CountParams(setup).total;
  out.weights_b = total_params * kServingBytesPerParam;
  e.expert_b = ExpertParams(m) * kServingBytesPerParam / e.tp;
  e.dense_b = out.weights_b / e.tp - e.expert_b;
  e.active_params = ActiveParams(m, total_params);
  e.kv_bytes_per_token = KvBytesPerToken(m, e.tp);
  const double prompt = static_cast<double>(r.prompt_tokens), response = static_cast<double>(r.response_tokens);
  e.context_tokens = prompt + response / 2.0;

  const double capacity_b = cluster.gpu.memory_gib * 1024.0 * 1024.0 * 1024.0;
  out.kv_bytes_per_token = e.kv_bytes_per_token;
  out.kv_budget_b = r.mem_fraction * capacity_b - out.weights_b / e.tp - (r.colocated ? resident_training_b : 0.0);
  SimRollout& s = out.engine;
  s.engines = engines;
  s.weights_per_gpu_b = out.weights_b / e.tp;
  s.kv_cache_tokens = std::max(0.0, std::floor(out.kv_budget_b / e.kv_bytes_per_token));
  s.fits = s.kv_cache_tokens >= 1;  // SGLang refuses a pool of no tokens
  s.generated_tokens = static_cast<double>(r.Samples()) * response;
  if (!s.fits) return out;

  const double per_engine = std::ceil(static_cast<double>(r.Samples()) / engines);
  double concurrency = std::floor(s.kv_cache_tokens / std::max(1.0, prompt + response));
  if (r.max_concurrency > 0) concurrency = std::min(concurrency, static_cast<double>(r.max_concurrency));
  concurrency = std::max(1.0, std::min(concurrency, per_engine));
  s.concurrency = static_cast<int64_t>(concurrency);

  out.decode_step_s = DecodeStep(e, cluster, m, concurrency);
  out.tail_step_s = DecodeStep(e, cluster, m, 1.0);
  s.decode_tokens_per_s = concurrency / out.decode_step_s;
  out.prefill_s = per_engine * prompt * 2.0 * e.active_params / e.tp /
                  (cluster.gpu.peak_bf16_tflops * 1e12 * kPrefillGemmEfficiency);
  // The prefill's all-reduces move every prompt token's hidden state, twice per layer; requests
  // are prefilled in chunks (SGLang's default chunk: 8,192 tokens), one all-reduce each.
  if (e.tp > 1) {
    const double tokens = per_engine * prompt;
    const double chunks = std::max(1.0, std::ceil(tokens / kPrefillChunkTokens));
    out.prefill_s += 2.0 * static_cast<double>(m.layers) * chunks *
                     EngineAllReduceS(cluster, e.tp, tokens / chunks * static_cast<double>(m.hidden) * kServingBytesPerParam);
  }
  out.bulk_s = per_engine * response / concurrency * out.decode_step_s;
  double longest = static_cast<double>(std::max(r.max_response_tokens, r.response_tokens));
  out.tail_s = (longest - response) * out.tail_step_s;
  out.generate_s = out.prefill_s + out.bulk_s + out.tail_s + kRolloutFixedS;
  out.weight_update_s = WeightUpdateSeconds(r, cluster, out.weights_b, training_state_b, setup.par.world);
  return out;
}

double LogProbPassSeconds(const StepBreakdown& step) {
  const double forward_and_backward = step.gemm_s + step.attention_s + step.elementwise_s + step.tp_comm_s +
                                      step.cp_comm_s + step.ep_comm_s + step.moe_overhead_s +
                                      step.host_exposed_s + step.pp_p2p_s + step.bubble_s;
  return forward_and_backward / 3.0 + step.step_overhead_s;
}

RolloutIterationTimes IterationSplit(const RolloutPlan& rollout, const RolloutEstimate& estimate,
                                     double train_step_s, double logprob_pass_s, bool first_iteration) {
  RolloutIterationTimes t;
  const double steps = static_cast<double>(std::max<int64_t>(1, rollout.train_steps));
  t.train_s = train_step_s * steps;
  t.log_probs_s = rollout.LogProbPasses() * steps * logprob_pass_s;
  // Generation overlapped with training (train_async.py) also hides behind the log-prob passes:
  // both run in the trainer's `train` call.
  t.rollout_s = rollout.overlapped && !first_iteration
                    ? std::max(0.0, estimate.generate_s - t.train_s - t.log_probs_s)
                    : estimate.generate_s;
  t.weight_update_s = estimate.weight_update_s;
  return t;
}

}  // namespace attune::sim
