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

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_BENCHMARK_FORM_H_
