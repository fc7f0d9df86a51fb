#include "toy_stack.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <utility>

#include "attune/support/log_lines.h"

namespace toy {

using namespace attune;

namespace {

const std::string kMicroBatch = "--micro-batch";
// Keys whose change changes what is trained: the gate refuses them.
const std::set<std::string> kObjectiveKeys = {"--global-batch", "--seq-length", "--lr", "--seed"};
// Run control: how long the job runs, not what it trains.
const std::set<std::string> kNeutralKeys = {"--steps"};
// toy_train.py's default step count, used when the recipe does not set --steps.
constexpr int64_t kDefaultSteps = 20;
// The first step records include start-up effects; Measure leaves them out.
constexpr size_t kWarmupSteps = 2;
constexpr size_t kMinMeasuredSteps = 3;
constexpr size_t kPairedLosses = 10;
// The memory of toy_train.py's "device", when the launcher does not report one.
constexpr double kToyDeviceGib = 16;

// The whole of `text` as a number, or std::nullopt (from_chars: no locale, no exceptions, and
// std::nullopt for out-of-range values, which hostile logs contain).
template <typename T>
std::optional<T> ParseNumber(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> IntFlag(const Recipe& recipe, const std::string& key) {
  auto value = GetValue(recipe, key);
  return value ? ParseNumber<int64_t>(*value) : std::nullopt;
}

GateVerdict Refuse(const std::string& rule, const std::string& reason) {
  return GateVerdict{false, rule, reason, 0};
}

// "step 3/20 | time_ms 96.1 | loss 8.7312 | mem_gib 3.5" into `sample`; false when the line is
// not a well-formed step record.
bool ParseStepLine(std::string_view text, IterationSample* sample) {
  auto field = [&](std::string_view name) -> std::optional<double> {
    size_t at = text.find(" | " + std::string(name) + " ");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = text.substr(at + name.size() + 4);
    return ParseNumber<double>(rest.substr(0, rest.find(' ')));
  };
  std::string_view head = text.substr(5, text.find(' ', 5) - 5);  // "3/20"
  size_t slash = head.find('/');
  if (slash == std::string_view::npos) return false;
  auto iteration = ParseNumber<int64_t>(head.substr(0, slash));
  auto total = ParseNumber<int64_t>(head.substr(slash + 1));
  auto time_ms = field("time_ms");
  if (!iteration || !total || !time_ms || !std::isfinite(*time_ms) || *time_ms <= 0) return false;
  sample->iteration = *iteration;
  sample->train_iters = *total;
  sample->step_time_ms = *time_ms;
  if (auto loss = field("loss")) {
    if (std::isfinite(*loss)) {
      sample->loss = *loss;
    } else {
      sample->nan_iterations = 1;
    }
  }
  if (auto mem = field("mem_gib"); mem && std::isfinite(*mem)) sample->extra["mem_gib"] = *mem;
  return true;
}

// A launch script as users have it: `export NAME=value` lines and the command, the last other
// line (comments and blank lines skipped):
//   export OMP_NUM_THREADS=1
//   OTHER=1 python3 toy_train.py --micro-batch 2 ...
// The environment goes to recipe.env, the command's words to the result.
Result<std::vector<std::string>> CommandOf(std::string_view script, Recipe* recipe) {
  std::vector<std::string> command;
  std::string logical;
  while (!script.empty()) {
    size_t end = std::min(script.find('\n'), script.size());
    logical += script.substr(0, end);
    script.remove_prefix(std::min(end + 1, script.size()));
    if (!logical.empty() && logical.back() == '\r') logical.pop_back();
    if (!logical.empty() && logical.back() == '\\' && !script.empty()) {  // continues below
      logical.back() = ' ';
      continue;
    }
    ATTUNE_ASSIGN_OR_RETURN(std::vector<std::string> words, SplitShellWords(logical));
    logical.clear();
    if (words.empty() || words[0][0] == '#') continue;
    if (words[0] != "export") {
      command = std::move(words);
      continue;
    }
    for (size_t i = 1; i < words.size(); ++i) {
      size_t eq = words[i].find('=');
      if (eq == std::string::npos) continue;
      recipe->env.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
    }
  }
  return command;
}

}  // namespace

ToyStack::ToyStack(int max_micro_batch) : max_micro_batch_(max_micro_batch) {
  levers_.push_back(Lever{"micro_batch",
                          "micro-batch size: fewer, larger micro-batches per step (less launch "
                          "overhead, more memory)",
                          {kMicroBatch},
                          {"launch_overhead", "memory_headroom"},
                          /*expected_speed=*/0.3,
                          /*expected_memory=*/0.5,
                          /*changes_rng=*/false});
}

std::vector<std::string> ToyStack::MicroBatchValues() const {
  std::vector<std::string> values;
  for (int v = 1; v <= max_micro_batch_; v *= 2) values.push_back(std::to_string(v));
  return values;
}

Result<Recipe> ToyStack::ImportLaunch(std::string_view script,
                                      std::vector<std::string>* unknown) const {
  Recipe recipe;
  recipe.stack = "toy";
  recipe.topology = Topology{1, 1, "cpu"};
  ATTUNE_ASSIGN_OR_RETURN(std::vector<std::string> words, CommandOf(script, &recipe));
  size_t i = 0;
  for (; i < words.size() && words[i].find('=') != std::string::npos && words[i][0] != '-'; ++i) {
    size_t eq = words[i].find('=');
    recipe.env.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
  }
  for (; i < words.size() && words[i].rfind("--", 0) != 0; ++i) recipe.entry.push_back(words[i]);
  if (recipe.entry.empty()) return Status::InvalidArgument("toy: the script runs no program");
  while (i < words.size()) {
    Arg arg{words[i++], {}};
    while (i < words.size() && words[i].rfind("--", 0) != 0) arg.values.push_back(words[i++]);
    bool known =
        arg.flag == kMicroBatch || kObjectiveKeys.count(arg.flag) || kNeutralKeys.count(arg.flag);
    if (known && arg.values.size() == 1) {
      recipe.args.push_back(std::move(arg));
    } else if (unknown) {
      unknown->push_back(arg.flag);  // reported to the user, never silently dropped
    }
  }
  return recipe;
}

// Each refusal names its rule, what was found and the fix.
Status ToyStack::Validate(const Recipe& recipe, const ClusterInfo& /*cluster*/) const {
  if (recipe.stack != "toy") {
    return Status::InvalidArgument("recipe is for stack '" + recipe.stack + "', not toy");
  }
  if (recipe.entry.empty()) {
    return Status::InvalidArgument(
        "[toy.entry] the recipe has no entry point; set entry: [python3, toy_train.py]");
  }
  if (recipe.topology.WorldSize() != 1) {
    return Status::InvalidArgument(
        "[toy.single_process] toy_train.py runs one process but the topology has " +
        std::to_string(recipe.topology.WorldSize()) +
        " devices; set topology: {nodes: 1, gpus_per_node: 1}");
  }
  for (const auto& arg : recipe.args) {
    if (arg.flag != kMicroBatch && !kObjectiveKeys.count(arg.flag) &&
        !kNeutralKeys.count(arg.flag)) {
      return Status::InvalidArgument(
          "[toy.known_flags] toy_train.py has no flag " + arg.flag +
          "; it takes --steps, --global-batch, --micro-batch, --seq-length, --lr, --seed");
    }
  }
  auto global = IntFlag(recipe, "--global-batch").value_or(16);
  auto micro = IntFlag(recipe, kMicroBatch).value_or(1);
  if (global < 1 || micro < 1 || global % micro != 0) {
    return Status::InvalidArgument(
        "[toy.batch_divisible] --global-batch " + std::to_string(global) +
        " is not a positive multiple of --micro-batch " + std::to_string(micro) +
        "; pick a micro-batch size that divides the global batch");
  }
  return Status::Ok();
}

std::vector<Move> ToyStack::LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const {
  std::vector<Move> moves;
  const std::optional<std::string> current = GetValue(recipe, kMicroBatch);
  const int64_t global = IntFlag(recipe, "--global-batch").value_or(16);
  for (const std::string& value : MicroBatchValues()) {
    if (current.value_or("1") == value) continue;
    Change change{kMicroBatch, current, value};
    Recipe candidate = recipe;
    if (!ApplyChanges(&candidate, {change}).ok()) continue;
    if (!Validate(candidate, cluster).ok() || !CheckObjective(recipe, candidate).pass) continue;
    Move move{"micro_batch",
              {change},
              "micro-batch " + current.value_or("1") + " -> " + value + " (" +
                  std::to_string(global / ParseNumber<int64_t>(value).value_or(1)) +
                  " micro-batches per step)",
              {}};
    // An absent --micro-batch means 1: agents then read 1 -> 4 as a move up.
    if (!current) move.defaults[kMicroBatch] = "1";
    moves.push_back(std::move(move));
  }
  return moves;
}

// Objective keys are refused, the lever and run control pass, anything else is refused: a stack
// that does not know what a key does must not let the agents change it (fail closed).
GateVerdict ToyStack::CheckObjective(const Recipe& baseline, const Recipe& candidate) const {
  for (const Change& change : Diff(baseline, candidate)) {
    if (change.key == kMicroBatch || kNeutralKeys.count(change.key)) continue;
    if (kObjectiveKeys.count(change.key)) {
      return Refuse(
          "obj." + change.key.substr(2),
          DescribeChange(change) + " changes what is trained, so the runs are not comparable");
    }
    return Refuse("fail_closed.unknown_key",
                  change.key +
                      " is neither the toy stack's lever nor one of its objective or "
                      "run-control keys; refused to stay safe");
  }
  return GateVerdict{true, "ok", "only the micro-batch size or run control changed", 0};
}

Result<LaunchSpec> ToyStack::RenderLaunch(const Recipe& recipe) const {
  if (recipe.entry.empty()) return Status::InvalidArgument("toy: the recipe has no entry point");
  LaunchSpec spec;
  spec.argv = recipe.entry;
  for (const Arg& arg : recipe.args) {
    spec.argv.push_back(arg.flag);
    spec.argv.insert(spec.argv.end(), arg.values.begin(), arg.values.end());
  }
  spec.env = recipe.env;
  return spec;
}

// The job logs one record per step: the engine uses this to project a job it stopped early.
std::optional<int64_t> ToyStack::BenchmarkLength(const Recipe& form) const {
  int64_t steps = IntFlag(form, "--steps").value_or(kDefaultSteps);
  return steps > 0 ? std::optional<int64_t>(steps) : std::nullopt;
}

// Logs are read through the support library's line splitter, which removes what launchers add
// (CRLF, ANSI colours, rank and timestamp prefixes). Anything else is skipped, never thrown on.
LogParse ToyStack::ParseLog(std::string_view log) const {
  LogParse parse;
  for (const support::LogLine& line : support::SplitLogLines(log)) {
    if (line.text == "training started") parse.training_started = true;
    if (line.text.rfind("step ", 0) != 0) continue;
    IterationSample sample;
    sample.line = line.number;
    if (ParseStepLine(line.text, &sample)) {
      parse.iterations.push_back(std::move(sample));
    } else {
      parse.warnings.push_back("line " + std::to_string(line.number) + ": not a step record");
    }
  }
  return parse;
}

Result<Measurement> ToyStack::Measure(const LogParse& parse, const Recipe& recipe) const {
  if (parse.iterations.size() < kWarmupSteps + kMinMeasuredSteps) {
    return Status::FailedPrecondition(
        "toy: " + std::to_string(parse.iterations.size()) + " step records; at least " +
        std::to_string(kWarmupSteps + kMinMeasuredSteps) + " are needed (the first " +
        std::to_string(kWarmupSteps) + " are warm-up); raise --steps");
  }
  Measurement m;
  m.iterations_logged = static_cast<int>(parse.iterations.size());
  std::vector<double> times;
  double peak = 0;
  for (size_t i = 0; i < parse.iterations.size(); ++i) {
    const IterationSample& s = parse.iterations[i];
    if (s.loss && m.first_losses.size() < kPairedLosses) m.first_losses.push_back(*s.loss);
    if (auto mem = s.extra.find("mem_gib"); mem != s.extra.end()) {
      peak = std::max(peak, mem->second);
    }
    if (i >= kWarmupSteps) times.push_back(s.step_time_ms / 1000);
  }
  m.iterations_used = static_cast<int>(times.size());
  m.step_time_s = Median(times);
  m.cv = CoefficientOfVariation(times);
  const double tokens = static_cast<double>(IntFlag(recipe, "--global-batch").value_or(16) *
                                            IntFlag(recipe, "--seq-length").value_or(128));
  m.tokens_per_s_per_gpu = tokens / m.step_time_s / recipe.topology.WorldSize();
  if (peak > 0) m.peak_memory_gib = peak;
  return m;
}

Failure ToyStack::Triage(std::string_view log, const JobEnd& end) const {
  Failure f;
  for (const support::LogLine& line : support::SplitLogLines(log)) {
    if (line.text.find("out of memory") == std::string::npos) continue;
    f.kind = FailureKind::kOom;
    f.signature = "toy_oom";
    f.evidence = line.text.substr(0, 300);
    f.line = line.number;
    f.hint = "the micro-batch does not fit in device memory; lower --micro-batch";
    return f;
  }
  // No signature matched: how the job ended decides.
  if (end.launcher_state == "cancelled") {
    f.kind = FailureKind::kCancelled;
  } else if (end.launcher_state == "timed_out") {
    f.kind = FailureKind::kTimeLimit;
  } else if (end.launcher_state == "node_failure") {
    f.kind = FailureKind::kNodeFailure;
  } else if (end.exit_code != 0 || end.launcher_state == "failed") {
    f.kind = FailureKind::kUnknown;
  }
  f.infrastructure = f.kind == FailureKind::kNodeFailure;
  if (f.kind == FailureKind::kUnknown) f.hint = "no known signature; read the end of the log";
  return f;
}

// What limits a toy run: micro-batches per step (launch overhead) and unused memory.
std::vector<Diagnosis> ToyStack::Diagnose(const Recipe& recipe, const Measurement& measurement,
                                          const LogParse& /*parse*/,
                                          const ClusterInfo& cluster) const {
  std::vector<Diagnosis> out;
  const int64_t global = IntFlag(recipe, "--global-batch").value_or(16);
  const int64_t micro = std::max<int64_t>(1, IntFlag(recipe, kMicroBatch).value_or(1));
  if (global / micro >= 2) {
    out.push_back({"launch_overhead", std::min(1.0, (global / micro) / 16.0),
                   std::to_string(global / micro) + " micro-batches per step at --micro-batch " +
                       std::to_string(micro)});
  }
  const double device = cluster.device_memory_gib > 0 ? cluster.device_memory_gib : kToyDeviceGib;
  if (measurement.peak_memory_gib && *measurement.peak_memory_gib < 0.7 * device) {
    out.push_back({"memory_headroom", 1 - *measurement.peak_memory_gib / device,
                   "peak " + std::to_string(*measurement.peak_memory_gib).substr(0, 4) + " of " +
                       std::to_string(device).substr(0, 4) + " GiB"});
  }
  out.push_back({"compute_bound", 0.1, "time per sample"});
  return out;
}

nlohmann::json ToyStack::Describe() const {
  return {{"stack", "toy"},
          {"levers",
           {{{"id", "micro_batch"},
             {"key", kMicroBatch},
             {"values", MicroBatchValues()},
             {"addresses", levers_[0].addresses}}}},
          {"objective_keys", kObjectiveKeys},
          {"neutral", kNeutralKeys},
          {"constraints",
           {{{"id", "toy.single_process"}, {"rule", "nodes × gpus_per_node == 1"}},
            {{"id", "toy.batch_divisible"}, {"rule", "global batch % micro-batch == 0"}}}}};
}

}  // namespace toy
