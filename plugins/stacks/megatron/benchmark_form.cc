// Copyright attune authors.
#include "benchmark_form.h"

#include <algorithm>
#include <cmath>
#include <sstream>
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

namespace {

// "2.4B" -> 2.4e9; std::nullopt when it is not a number with an optional K/M/B/T suffix.
std::optional<double> Threshold(std::string text) {
  double scale = 1;
  const std::string suffixes = "KMBT";  // 1e3, 1e6, 1e9, 1e12
  if (size_t at = text.empty() ? std::string::npos : suffixes.find(text.back());
      at != std::string::npos) {
    scale = std::pow(1e3, static_cast<double>(at + 1));
    text.pop_back();
  }
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string::npos) {
    return std::nullopt;
  }
  try {
    return std::stod(text) * scale;
  } catch (...) {
    return std::nullopt;  // "1.2.3"
  }
}

// The batch of the schedule's last step (the largest threshold).
Result<long> ScheduleFinalBatch(const std::string& schedule) {
  std::istringstream in(schedule);
  std::string step;
  std::optional<double> last_threshold;
  long batch = 0;
  while (in >> step) {
    size_t colon = step.find(':');
    std::optional<double> threshold =
        colon == std::string::npos ? std::nullopt : Threshold(step.substr(0, colon));
    std::string size = colon == std::string::npos ? "" : step.substr(colon + 1);
    if (!threshold || size.empty() || size.find_first_not_of("0123456789") != std::string::npos ||
        size.size() > 12) {
      return Status::InvalidArgument(
          "--step-batch-size-schedule '" + schedule + "': step '" + step +
          "' is not THRESHOLD:BATCH (a number with an optional K, M, B or T "
          "suffix, a colon, an integer batch)");
    }
    if (!last_threshold || *threshold >= *last_threshold) {
      last_threshold = threshold;
      batch = std::stol(size);
    }
  }
  if (!last_threshold || batch <= 0) {
    return Status::InvalidArgument("--step-batch-size-schedule '" + schedule +
                                   "' has no step with a positive batch");
  }
  return batch;
}

}  // namespace

Result<Recipe> SteadyBatch(const Recipe& recipe) {
  Recipe out = recipe;
  if (Has(recipe, "--rampup-batch-size")) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--rampup-batch-size", std::nullopt));
  }
  if (std::optional<std::string> schedule = StrArg(recipe, "--step-batch-size-schedule")) {
    ATTUNE_ASSIGN_OR_RETURN(long batch, ScheduleFinalBatch(*schedule));
    ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--step-batch-size-schedule", std::nullopt));
    ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--global-batch-size", std::to_string(batch)));
  }
  return out;
}

Result<Recipe> BenchmarkRecipe(const Recipe& recipe) {
  ATTUNE_ASSIGN_OR_RETURN(Recipe out, SteadyBatch(recipe));
  const std::optional<long> planned = PlannedIterations(out);
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
