// Copyright attune authors.
//
// Dry runs of slime recipes on the simulated cluster (attune/sim_plan.h, docs/sim.md, "slime"):
// the training side is the Megatron stack's mapping of the recipe's Megatron flags (by
// composition: the Megatron stack the slime stack holds maps a copy of the recipe with the
// sequence and batch slime trains on), slime's own settings become the plan's rollout phase
// (engines, placement, memory share, rollout batch, train steps per rollout, async), and the
// simulated job is rendered as slime's Ray driver log (`perf N: {...}`, `step N: {...}`, SGLang's
// and PyTorch's failure texts), which this stack's parser, Measure and Triage read.
#ifndef ATTUNE_PLUGINS_STACKS_SLIME_DRY_RUN_H_
#define ATTUNE_PLUGINS_STACKS_SLIME_DRY_RUN_H_

#include <cstdint>
#include <string>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "attune/sim_plan.h"
#include "attune/stack.h"
#include "attune/status.h"
#include "knowledge.h"

namespace attune::slime {

// What a slime recipe does not state, assumed for its dry run (docs/sim.md, "slime"); the sim
// launcher's `with.rollout` replaces them.
inline constexpr int64_t kAssumedPromptTokens = 256;       // mean prompt, tokens
inline constexpr double kAssumedResponseShare = 0.5;       // mean response / --rollout-max-response-len
// Defaults of the flags a recipe may leave out (slime's, and SGLang's for an 80 GB GPU).
inline constexpr int64_t kDefaultMaxResponseTokens = 1024;  // --rollout-max-response-len
inline constexpr int64_t kDefaultServerConcurrency = 512;   // --sglang-server-concurrency
inline constexpr double kDefaultMemFraction = 0.85;         // --sglang-mem-fraction-static

// The training actors' GPUs: --actor-num-nodes x --actor-num-gpus-per-node, each defaulting to
// the recipe's topology.
int ActorGpus(const Recipe& recipe);

// The plan of `recipe` (its actor GPUs train; the rollout GPUs generate), with the refusal slime or
// Megatron would raise. `megatron_stack` maps the training side. Fails when the recipe cannot be dry-run
// at all (no model shape; --debug-train-only / --debug-rollout-only runs, not modelled).
Result<sim::ParallelPlan> SlimeSimulationPlan(const Recipe& recipe, const megatron::Knowledge& slime,
                                              const Stack& megatron_stack, const ClusterInfo& cluster);

// The canonical string of what defines the RL objective: slime's objective keys, the Megatron
// flags that are not throughput or logging switches, and the entry (train.py or train_async.py).
std::string SlimeObjectiveKey(const Recipe& recipe, const megatron::Knowledge& slime);

// The Ray driver log of a simulated slime job.
std::string RenderSlimeLog(const Recipe& recipe, const sim::SimulatedRun& run);

// slime's FLOPs of one forward pass over `sequences` sequences of `seq` tokens
// (slime/utils/flops_utils.py::calculate_fwd_flops, reference §6.4).
double SlimeForwardFlops(const sim::ModelShape& model, double sequences, double seq);

}  // namespace attune::slime

#endif  // ATTUNE_PLUGINS_STACKS_SLIME_DRY_RUN_H_
