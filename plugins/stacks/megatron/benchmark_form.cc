// Copyright attune authors.
#include "benchmark_form.h"

#include <algorithm>
#include <string>

#include "recipe_view.h"

namespace attune::megatron {

// A sample-based length without a fixed global batch cannot be told, nor no length at all
// (Megatron requires one).
std::optional<long> PlannedIterations(const Recipe& recipe) {
  std::optional<long> n = IntArg(recipe, "--train-iters");
  if (!n) {
    auto samples = IntArg(recipe, "--train-samples");
    auto gbs = IntArg(recipe, "--global-batch-size");
    if (samples && gbs && *gbs > 0 && !Has(recipe, "--rampup-batch-size")) n = (*samples + *gbs - 1) / *gbs;
  }
  if (auto exit = IntArg(recipe, "--exit-interval"); exit && *exit > 0 && (!n || *exit < *n)) n = exit;
  return n;
}

Result<ProfileWindow> PlaceProfileWindow(std::optional<long> planned, long length, const std::string& unit,
                                         const std::string& length_flags) {
  if (!planned || *planned < 3) {
    return Status::FailedPrecondition(
        "cannot place a profiling window in this run: it trains " +
        (planned ? std::to_string(*planned) + " " + unit + "(s)" : "an unknown number of " + unit + "s") +
        "; a profiled run needs at least 3 (" + length_flags + ")");
  }
  ProfileWindow window;
  window.start = std::min<long>(10, *planned / 2);
  window.end = std::min<long>(window.start + std::max(1L, length), *planned);
  return window;
}

Status SetPytorchProfiler(Recipe* recipe, const ProfileWindow& window, const std::string& trace_dir) {
  ATTUNE_RETURN_IF_ERROR(SetValue(recipe, "--use-pytorch-profiler", ""));
  ATTUNE_RETURN_IF_ERROR(SetValue(recipe, "--profile-step-start", std::to_string(window.start)));
  ATTUNE_RETURN_IF_ERROR(SetValue(recipe, "--profile-step-end", std::to_string(window.end)));
  return SetValue(recipe, "--tensorboard-dir", trace_dir);
}

Result<Recipe> ProfiledRecipe(const Recipe& form, int world_size, const std::string& trace_dir) {
  ATTUNE_ASSIGN_OR_RETURN(const ProfileWindow window,
                          PlaceProfileWindow(PlannedIterations(form), 2, "iteration", "--train-iters or --exit-interval"));
  std::string ranks;
  for (int r = 0; r < std::max(1, std::min(world_size, kProfiledRanks)); ++r) {
    if (!ranks.empty()) ranks += ' ';
    ranks += std::to_string(r);
  }
  Recipe out = form;
  ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--profile", ""));
  ATTUNE_RETURN_IF_ERROR(SetPytorchProfiler(&out, window, trace_dir));
  ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--profile-ranks", ranks));
  return out;
}

Result<Recipe> BenchmarkRecipe(const Recipe& recipe) {
  Recipe out = recipe;
  const std::optional<long> planned = PlannedIterations(recipe);
  if (!planned || *planned > kBenchmarkIterations) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--exit-interval", std::to_string(kBenchmarkIterations)));
  }
  if (auto interval = IntArg(recipe, "--log-interval"); interval && *interval > 1) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--log-interval", "1"));
  }
  for (const char* key : {"--save", "--save-interval"}) {
    if (Has(recipe, key)) ATTUNE_RETURN_IF_ERROR(SetValue(&out, key, std::nullopt));
  }
  if (Has(recipe, "--eval-interval") || Has(recipe, "--eval-iters")) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--eval-iters", "0"));
  }
  return out;
}

}  // namespace attune::megatron
