#include <algorithm>

#include "log_parser.h"
#include "recipe_view.h"

namespace attune::megatron {
namespace {

constexpr size_t kFirstLosses = 10;

// Indices of the records that are not warm-up. Megatron prints after iteration 1 and does not
// reset its accumulators then, so the first regular line also includes iteration 1 (§3.1).
std::vector<size_t> SteadyRecords(const LogParse& parse, const Recipe& recipe) {
  const auto& it = parse.iterations;
  long log_interval = IntArg(recipe, "--log-interval").value_or(100);
  RecipeView view = ReadView(recipe);
  long graph_warmup = view.cuda_graphs ? IntArg(recipe, "--cuda-graph-warmup-steps").value_or(3) : 0;
  std::vector<size_t> keep;
  bool from_start = !it.empty() && it[0].iteration <= std::max<long>(1, log_interval);
  bool dropped_first_interval = false;
  for (size_t i = 0; i < it.size(); ++i) {
    if (it[i].iteration == 1) continue;
    if (from_start && !dropped_first_interval) {
      dropped_first_interval = true;
      continue;
    }
    if (it[i].iteration <= graph_warmup + 1) continue;
    keep.push_back(i);
  }
  return keep;
}

std::optional<long> SequenceLength(const LogParse& parse, const Recipe& recipe) {
  RecipeView v = ReadView(recipe);
  if (v.seq) return v.seq;
  for (const auto& s : parse.iterations) {
    auto found = s.extra.find("actual seqlen");
    if (found != s.extra.end()) return static_cast<long>(found->second);
  }
  return std::nullopt;
}

}  // namespace

Result<Measurement> MeasureRun(const LogParse& parse, const Recipe& recipe) {
  Measurement m;
  m.iterations_logged = static_cast<int>(parse.iterations.size());
  for (const auto& s : parse.iterations) {
    if (m.first_losses.size() < kFirstLosses && s.loss) m.first_losses.push_back(*s.loss);
  }
  for (const auto& mem : parse.memory) {
    double gib = mem.max_reserved_mb / 1024.0;
    if (!m.peak_memory_gib || gib > *m.peak_memory_gib) m.peak_memory_gib = gib;
  }
  auto keep = SteadyRecords(parse, recipe);
  if (keep.empty()) {
    return Status::FailedPrecondition(
        "only " + std::to_string(parse.iterations.size()) +
        " iteration record(s) logged and all are warm-up (iteration 1 and the first log interval); "
        "run longer or lower --log-interval so that at least one steady record follows");
  }
  std::vector<double> times, tflops;
  for (size_t i : keep) {
    times.push_back(parse.iterations[i].step_time_ms / 1000.0);
    if (parse.iterations[i].tflops_per_gpu) tflops.push_back(*parse.iterations[i].tflops_per_gpu);
  }
  m.iterations_used = static_cast<int>(keep.size());
  m.step_time_s = Median(times);
  m.cv = CoefficientOfVariation(times);
  if (!tflops.empty()) m.tflops_per_gpu = Median(tflops);
  const auto& last = parse.iterations[keep.back()];
  std::optional<long> gbs = last.global_batch_size ? std::optional<long>(*last.global_batch_size)
                                                   : IntArg(recipe, "--global-batch-size");
  auto seq = SequenceLength(parse, recipe);
  long world = static_cast<long>(recipe.topology.nodes) * recipe.topology.gpus_per_node;
  if (!gbs || !seq || world <= 0 || m.step_time_s <= 0) {
    return Status::FailedPrecondition(
        "cannot compute tokens/s/GPU: need the global batch size (log or --global-batch-size), "
        "--seq-length and a topology; found gbs=" + (gbs ? std::to_string(*gbs) : "?") +
        " seq=" + (seq ? std::to_string(*seq) : "?") + " world=" + std::to_string(world));
  }
  m.tokens_per_s_per_gpu = static_cast<double>(*gbs) * static_cast<double>(*seq) / m.step_time_s /
                           static_cast<double>(world);
  return m;
}

}  // namespace attune::megatron
