// Copyright attune authors.
//
// The generation model of RL post-training (attune/sim_plan.h, RolloutPlan): SGLang-style engines
// serve the rollout's prompts, the trainer trains on the samples, and the new weights go back to
// the engines. First principles only; every constant is assumed (not fitted) and docs/sim.md
// ("Rollout") gives its reasoning. Pure functions of their arguments.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_ROLLOUT_MODEL_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_ROLLOUT_MODEL_H_

#include "attune/sim_plan.h"
#include "hardware.h"
#include "perf_model.h"
#include "setup.h"

namespace attune::sim {

// One rollout phase on the plan's engines.
struct RolloutEstimate {
  SimRollout engine;             // what SimulatedRun::rollout reports
  double weights_b = 0;          // the whole model in the engines' precision (BF16)
  double kv_bytes_per_token = 0; // on one GPU of an engine
  double kv_budget_b = 0;        // an engine GPU's memory left for the KV cache (< 0: none)
  double decode_step_s = 0;      // one decode step at the bulk concurrency
  double tail_step_s = 0;        // one decode step with a single request left
  double prefill_s = 0;          // the prompts, all of one engine's share
  double bulk_s = 0;             // all samples' mean responses at the bulk concurrency
  double tail_s = 0;             // the longest response's excess over the mean, at low batch
  double generate_s = 0;         // the whole phase: prefill + bulk + tail + fixed overhead
  double weight_update_s = 0;    // new weights to the engines (+ the hand-over when colocated)
};

// One all-reduce of `bytes` among an engine's `tp` GPUs on NVLink: a latency that grows with the
// peers every rank exchanges with (4 µs + 0.7 µs per peer, assumed), and the ring's 2(tp-1)/tp of
// the bytes at the NVLink bus bandwidth, which a large decode batch or a long prefill reaches.
// 0 for tp 1.
double EngineAllReduceS(const ClusterSpec& cluster, int tp, double bytes);

// `resident_training_b`: device memory the training processes keep on each GPU while the engines
// run (only when colocated; the caller passes the training side's non-PyTorch memory).
// `training_state_b`: weights, gradients and optimizer state per training GPU, which a colocated
// run offloads to the host and brings back around each generation phase.
// Preconditions: setup.rollout.enabled(), setup.rollout.gpus >= gpus_per_engine >= 1.
RolloutEstimate EstimateRollout(const TrainingSetup& setup, const ClusterSpec& cluster,
                                double resident_training_b, double training_state_b);

// Seconds of one forward-only log-probability pass over one optimizer step's samples: the
// step's forward work (a third of its GEMM, attention, elementwise and communication time,
// without recomputation, which a forward-only pass does not do), its pipeline bubble's share,
// and none of the gradient reduce or the optimizer.
double LogProbPassSeconds(const StepBreakdown& step);

// Seconds of one iteration of a plan with a rollout: the generation the trainer waits for (all
// of it; when overlapped only what exceeds the training it hides behind, except on the first
// iteration, which has nothing to hide behind) + the log-probability passes over the rollout's
// samples (RolloutPlan::LogProbPasses() × steps × `logprob_pass_s`) + training + weight update.
struct RolloutIterationTimes {
  double rollout_s = 0, log_probs_s = 0, train_s = 0, weight_update_s = 0;
  double Total() const { return rollout_s + log_probs_s + train_s + weight_update_s; }
};
RolloutIterationTimes IterationSplit(const RolloutPlan& rollout, const RolloutEstimate& estimate,
                                     double train_step_s, double logprob_pass_s, bool first_iteration);

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_ROLLOUT_MODEL_H_
