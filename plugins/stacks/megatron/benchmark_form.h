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
//
// One change is not run control: a batch-size ramp (--rampup-batch-size, or
// --step-batch-size-schedule) is replaced by the batch it ends at (SteadyBatch). A run spends all
// but its first steps there, while a benchmark of kBenchmarkIterations would never leave the
// ramp's first batch (GPT-3's 16 of 1,536 sequences): it would time, and tune, a batch the run
// hardly trains at. The stack's CheckBenchmarkForm holds the form to the recipe with its batch
// steadied, so nothing else may differ; the gate compares candidates with the baseline as recipes,
// ramp and all, and their paired losses between forms that are steadied alike.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_BENCHMARK_FORM_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_BENCHMARK_FORM_H_

#include <optional>
#include <string>

#include "attune/recipe.h"
#include "attune/status.h"

namespace attune::megatron {

// Warm-up (the measurement drops iteration 1 and CUDA-graph warm-up steps) plus the measured
// window.
inline constexpr long kBenchmarkIterations = 50;

Result<Recipe> BenchmarkRecipe(const Recipe& recipe);

// `recipe` without its batch-size ramp: --rampup-batch-size removed (--global-batch-size is where
// it ends); --step-batch-size-schedule replaced by --global-batch-size of its last step's batch.
// The recipe itself when it has no ramp. InvalidArgument when the schedule does not parse
// ("THRESHOLD:BATCH ...", thresholds with an optional K/M/B/T suffix).
Result<Recipe> SteadyBatch(const Recipe& recipe);

// Iterations `recipe` runs when nothing stops it early (--train-iters, or --train-samples over a
// fixed global batch, cut by --exit-interval); std::nullopt when it cannot be told.
std::optional<long> PlannedIterations(const Recipe& recipe);

// Ranks a profiled job traces: the first kProfiledRanks (one node's worth on most clusters; the
// cross-rank comparison needs more than one, and each trace costs time and disk).
inline constexpr int kProfiledRanks = 8;

// Where a profiled run traces: records [start, end) of the run (iterations for Megatron, rollouts
// for slime), `length` records long, after warm-up (start = 10, or half the run when it is
// shorter) and inside the run.
struct ProfileWindow {
  long start = 0;
  long end = 0;
};

// The window of a run of `planned` records. FailedPrecondition when the run is too short (fewer
// than 3: a warm-up record, the profiler's own warm-up step, one traced) or its length unknown
// (std::nullopt); the message counts in `unit`s ("iteration", "rollout") and names the flags that
// set the length (`length_flags`).
Result<ProfileWindow> PlaceProfileWindow(std::optional<long> planned, long length, const std::string& unit,
                                         const std::string& length_flags);

// Megatron's PyTorch-profiler settings, which slime's own profiler reads too:
// `--use-pytorch-profiler --profile-step-start S --profile-step-end E --tensorboard-dir trace_dir`
// (torch.profiler's tensorboard_trace_handler writes one chrome trace per traced rank there).
Status SetPytorchProfiler(Recipe* recipe, const ProfileWindow& window, const std::string& trace_dir);

// The profiled form (Stack::ProfileForm) of a benchmark form: SetPytorchProfiler plus `--profile`
// (Megatron's training loop profiles only with it) and `--profile-ranks 0..R-1`, with the window
// two iterations long. FailedPrecondition when the run is too short (fewer than 3 iterations) or
// its length cannot be told.
Result<Recipe> ProfiledRecipe(const Recipe& form, int world_size, const std::string& trace_dir);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_BENCHMARK_FORM_H_
