// Copyright attune authors.
//
// The step-time model: how long one Megatron-LM iteration takes on the simulated cluster, and the
// parameter and FLOP counts it rests on. docs/sim.md derives every term and names its source.
// Pure functions of their arguments; microseconds per call.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_PERF_MODEL_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_PERF_MODEL_H_

#include <vector>

#include "hardware.h"
#include "setup.h"

namespace attune::sim {

// The few named factors of the model. Defaults are the fitted values documented in docs/sim.md;
// tests and the accuracy bench may pass others.
struct ModelFactors {
  double gemm_half_dim = 48;          // a GEMM dimension of this size runs at half efficiency
  double attention_fraction = 0.7;    // flash attention speed relative to a large GEMM
  double elementwise_traffic = 1.0;   // scale on the counted bytes of non-GEMM kernels
  double host_us_per_layer = 350;     // eager host time per layer per micro-batch (fwd+bwd)
  double comm_overlap_hidden = 0.7;   // share of a collective hidden by an overlap feature
  double fp8_gemm_fraction = 0.9;     // FP8 GEMM efficiency relative to BF16 (of a 2x peak)
  double fp4_gemm_fraction = 0.9;     // NVFP4 GEMM efficiency relative to BF16 (of the FP4 peak)
  double blackwell_gemm_efficiency = 0.62;  // η of Blackwell (Ampere and Hopper: 0.72)
  // Host time per iteration outside the micro-batches, not hidden by GPU work: the optimizer's
  // kernel launches and the loss / grad-norm host syncs Megatron makes every step.
  double step_overhead_ms = 35;
  // MoE. Coefficient of variation of one expert's routed-token count across micro-batches, with
  // auxiliary-loss balancing; the busiest EP rank's load follows from it (MoeBusiestLoad).
  double moe_expert_load_cv = 0.3;
  // GPU idle per MoE layer per forward pass: the alltoall/flex dispatchers copy the token counts
  // to the host (a sync), so the host's launches after it are exposed rather than run ahead.
  double moe_sync_us = 1000;
  // Share of the NVLink bus bandwidth the alltoall dispatcher (NCCL all-to-all) reaches among
  // EP peers of a multi-node NVLink domain (NVL72): the DeepSeek-V3 GB200 study measured EP32
  // dispatch at ~400 GB/s and combine at ~190 GB/s of MNNVL's 900 GB/s per direction before
  // HybridEP, and found NCCL's all-to-all no faster. Within an 8-GPU NVSwitch board NCCL's
  // all-to-all runs at the bus bandwidth.
  double mnnvl_alltoall_efficiency = 0.36;
};

// Load of the busiest expert-parallel rank relative to balanced routing (>= 1): the largest of EP
// ranks' sums of E/EP experts' loads, each with coefficient of variation `moe_expert_load_cv`,
// capped by --moe-expert-capacity-factor when tokens are dropped. 1 for dense models.
double MoeBusiestLoad(const TrainingSetup& setup, const ModelFactors& factors = {});

// What one pipeline rank runs: its decoder layers by kind, its MTP depths, and whether it holds
// the embedding and the output layer with the loss. From the plan's rank_loads when the recipe
// places the layers, else layers/PP each with the embedding first and the loss and MTP last.
struct RankShare {
  double dense_layers = 0, moe_layers = 0, mtp_layers = 0;
  bool mtp_moe = false;  // MTP depths are layers of the last layer's kind (MtpIsMoe)
  bool embedding = false, loss = false;
  double Layers() const { return dense_layers + moe_layers + mtp_layers; }
  // Layers of each kind with the MTP depths counted in.
  double DenseKind() const { return dense_layers + (mtp_moe ? 0.0 : mtp_layers); }
  double MoeKind() const { return moe_layers + (mtp_moe ? mtp_layers : 0.0); }
};
RankShare ShareOfRank(const TrainingSetup& setup, int rank);

// Whether an MTP depth is a MoE layer: Megatron builds it like the last decoder layer.
inline bool MtpIsMoe(const ModelShape& m) { return m.IsMoeLayer(m.layers - 1); }

// The pipeline ranks that can be the heaviest, last first: the last (output layer, loss, MTP) and
// the first (embedding, most micro-batches in flight), and every rank when their layers differ (a
// placed split, or MoE layers an even split spreads unevenly).
std::vector<int> RanksToCheck(const TrainingSetup& setup);

// Parameters, in elements.
struct ParamCounts {
  double total = 0;              // the whole model
  double dense_per_gpu = 0;      // non-expert parameters on the busiest GPU (any stage)
  double expert_per_gpu = 0;     // expert parameters on the busiest GPU
  double first_stage_per_gpu = 0;
  double last_stage_per_gpu = 0;
};
ParamCounts CountParams(const TrainingSetup& setup);

// Non-expert and expert parameters on one GPU of pipeline rank `rank`.
struct RankParams {
  double dense = 0, expert = 0;
};
RankParams CountRankParams(const TrainingSetup& setup, int rank);

// Megatron's model FLOPs for one iteration of `global_batch` sequences (reference §3.4: no
// recompute, causal attention counted half). With `causal_half` false, core attention counts in
// full (Megatron before 2025).
double MegatronModelFlops(const ModelShape& model, int64_t global_batch, bool causal_half = true);

// Narayanan et al. SC21 eq. (3): 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), which counts the
// recomputed forward pass (used for rows measured under that convention).
double NarayananFlops(const ModelShape& model, int64_t global_batch);

struct StepBreakdown {
  double step_s = 0;
  // Per-iteration seconds on the busiest pipeline stage.
  double gemm_s = 0, attention_s = 0, elementwise_s = 0, host_exposed_s = 0, recompute_s = 0;
  double tp_comm_s = 0, cp_comm_s = 0, ep_comm_s = 0, pp_p2p_s = 0, bubble_s = 0;
  double dp_comm_s = 0, optimizer_s = 0;
  double moe_overhead_s = 0;    // router, permutation and dispatch syncs (part of the layers' time)
  double step_overhead_s = 0;   // fixed host time per iteration (optimizer launches, syncs)
  double model_flops = 0;       // MegatronModelFlops per iteration
  double tflops_per_gpu = 0;    // as Megatron logs it
  double tokens_per_s_per_gpu = 0;
};

// Preconditions: the stack accepted `setup` for `cluster` (no refusal in the plan).
StepBreakdown EstimateStep(const TrainingSetup& setup, const ClusterSpec& cluster,
                           const ModelFactors& factors = {});

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_PERF_MODEL_H_
