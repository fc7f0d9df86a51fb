// Copyright attune authors.
//
// The benchmark form of a Megatron recipe (Stack::BenchmarkForm): the same run, stopped early and
// kept quiet. Only run-control and logging settings change, never what is trained:
//   --exit-interval      kBenchmarkIterations (or the recipe's own, when smaller) when the recipe
//                        would train longer than that. --train-iters / --train-samples stay as
//                        they are, so the learning-rate schedule (decay iterations default to the
//                        training length) of the measured iterations is the production one.
//   --log-interval       1, so that every iteration is a record
//   --save, --save-interval   removed: no checkpoint is written (Megatron saves on an exit
//                        interval when --save is set)
//   --eval-iters 0       no evaluation, neither periodic nor at the end of training
// A recipe that already stops within kBenchmarkIterations keeps its length. The recipe that is
// recorded, compared and shipped keeps every one of these settings.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_BENCHMARK_FORM_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_BENCHMARK_FORM_H_

#include <optional>

#include "attune/recipe.h"
#include "attune/status.h"

namespace attune::megatron {

// Warm-up (the measurement drops iteration 1 and CUDA-graph warm-up steps) plus the measured
// window.
inline constexpr long kBenchmarkIterations = 50;

Result<Recipe> BenchmarkRecipe(const Recipe& recipe);

// Iterations `recipe` runs when nothing stops it early (--train-iters, or --train-samples over a
// fixed global batch, cut by --exit-interval); std::nullopt when it cannot be told.
std::optional<long> PlannedIterations(const Recipe& recipe);

// Ranks a profiled job traces: the first kProfiledRanks (one node's worth on most clusters; the
// cross-rank comparison needs more than one, and each trace costs time and disk).
inline constexpr int kProfiledRanks = 8;

// The profiled form (Stack::ProfileForm) of a benchmark form: Megatron's own profiling flags,
// `--profile --use-pytorch-profiler --profile-step-start S --profile-step-end E --profile-ranks
// 0..R-1 --tensorboard-dir trace_dir`, with the window [S, E) two iterations long, after warm-up
// (S = 10, or half the run when it is shorter) and inside the run. FailedPrecondition when the
// run is too short (fewer than 3 iterations) or its length cannot be told.
Result<Recipe> ProfiledRecipe(const Recipe& form, int world_size, const std::string& trace_dir);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_BENCHMARK_FORM_H_
