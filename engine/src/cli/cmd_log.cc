// `attune log parse` and `attune log triage`: a stack's reading of one training log.
#include <iomanip>
#include <set>
#include <ostream>

#include "cli/args.h"

namespace attune::cli {

namespace {

// Over every logged iteration, warm-up included: what the log says before any stack rule.
nlohmann::json AllIterationsSummary(const LogParse& parse) {
  std::vector<double> times;
  for (const auto& it : parse.iterations) times.push_back(it.step_time_ms);
  return {{"iterations", times.size()},
          {"median_step_time_ms", Median(times)},
          {"cv", CoefficientOfVariation(times)}};
}

// The steady-state measurement from the stack. Without --recipe, the stack gets a recipe that
// names only the stack: step time and warm-up rules work, tokens/s may need the real recipe.
Result<Measurement> MeasureWith(const Stack& stack, const LogParse& parse,
                                const std::string& recipe_path) {
  Recipe recipe;
  recipe.stack = stack.Name();
  if (!recipe_path.empty()) {
    ATTUNE_ASSIGN_OR_RETURN(recipe, LoadRecipeFile(recipe_path));
  }
  return stack.Measure(parse, recipe);
}

void PrintIterations(const LogParse& parse, std::ostream& out) {
  out << std::setw(10) << "iteration" << std::setw(14) << "step_ms" << std::setw(12) << "loss"
      << std::setw(12) << "grad_norm" << std::setw(10) << "tflops" << "\n";
  for (const auto& it : parse.iterations) {
    out << std::setw(10) << it.iteration << std::setw(14) << std::fixed << std::setprecision(1)
        << it.step_time_ms << std::setw(12) << std::setprecision(4)
        << (it.loss ? std::to_string(*it.loss) : "-") << std::setw(12)
        << (it.grad_norm ? std::to_string(*it.grad_norm) : "-") << std::setw(10)
        << (it.tflops_per_gpu ? std::to_string(static_cast<int>(*it.tflops_per_gpu)) : "-")
        << "\n";
  }
}

void PrintSummary(const nlohmann::json& all, const Result<Measurement>& m, std::ostream& out) {
  out << "all logged iterations (warm-up included): " << all["iterations"]
      << ", median step " << all["median_step_time_ms"].get<double>() << " ms, cv "
      << all["cv"].get<double>() << "\n";
  if (!m.ok()) {
    out << "steady state: not measured: " << m.status().message() << "\n";
    return;
  }
  out << "steady state (stack's warm-up rule applied): " << m->iterations_used << " of "
      << m->iterations_logged << " iterations, median step " << m->step_time_s << " s, cv "
      << m->cv;
  if (m->tokens_per_s_per_gpu > 0) out << ", " << m->tokens_per_s_per_gpu << " tokens/s/GPU";
  if (m->peak_memory_gib) out << ", peak memory " << *m->peak_memory_gib << " GiB";
  out << "\n";
}

// What both `log` subcommands start from: the log's text and the stack that reads it.
struct LogInput {
  std::string text;
  std::unique_ptr<Stack> stack;
};

Result<LogInput> ReadLogInput(const ArgParser& p, const Env& env) {
  if (!p.Has("stack") || !p.Has("file")) return Status::InvalidArgument("need --stack NAME and FILE");
  ATTUNE_ASSIGN_OR_RETURN(std::string text, ReadTextFile(p.Get("file")));
  ATTUNE_ASSIGN_OR_RETURN(auto stack, CreateStack(env, p.Get("stack"), p.GetList("plugin-path")));
  return LogInput{std::move(text), std::move(stack)};
}

}  // namespace

int RunLogParse(const std::vector<std::string>& args, Env& env) {
  ArgParser p("log parse --stack NAME FILE [--recipe R] [--json]",
              "Parses a training log with the stack's parser: per-iteration numbers, a summary "
              "over all iterations (warm-up included) and the stack's steady-state measurement "
              "(warm-up dropped; tokens/s needs --recipe for batch and sequence sizes).");
  p.Options()("stack", po::value<std::string>(), "stack plugin (required)")(
      "recipe", po::value<std::string>(), "the recipe the log was produced with")(
      "json", "machine-readable output")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("file");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  auto input = ReadLogInput(p, env);
  if (!input.ok()) return ReportError(env, "log parse", input.status(), json);
  LogParse parse = input->stack->ParseLog(input->text);
  nlohmann::json all = AllIterationsSummary(parse);
  auto measurement = MeasureWith(*input->stack, parse, p.Get("recipe"));
  if (json) {
    nlohmann::json iterations = nlohmann::json::array();
    for (const auto& it : parse.iterations) iterations.push_back(IterationToJson(it));
    nlohmann::json memory = nlohmann::json::array();
    for (const auto& m : parse.memory) {
      memory.push_back({{"rank", m.rank}, {"after_iteration", m.after_iteration},
                        {"allocated_mb", m.allocated_mb}, {"max_allocated_mb", m.max_allocated_mb},
                        {"reserved_mb", m.reserved_mb}, {"max_reserved_mb", m.max_reserved_mb}});
    }
    *env.out << nlohmann::json{{"iterations", iterations},
                               {"memory", memory},
                               {"training_started", parse.training_started},
                               {"warnings", parse.warnings},
                               {"all_iterations", all},
                               {"measurement", measurement.ok()
                                                   ? MeasurementToJson(*measurement)
                                                   : nlohmann::json(nullptr)},
                               {"measurement_error", measurement.ok()
                                                         ? ""
                                                         : measurement.status().message()}}
                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
    return kExitOk;
  }
  PrintIterations(parse, *env.out);
  for (const auto& w : parse.warnings) *env.err << "warning: " << w << "\n";
  PrintSummary(all, measurement, *env.out);
  return kExitOk;
}

int RunLogTriage(const std::vector<std::string>& args, Env& env) {
  ArgParser p("log triage --stack NAME FILE [--exit-code N] [--state S] [--ran-seconds T] [--json]",
              "Classifies why a job failed, from its log: kind, the rule that matched, the "
              "evidence line, the process that printed it and a hint. --state and --ran-seconds "
              "say how the job ended, as a launcher would (a hang is judged from them).");
  p.Options()("stack", po::value<std::string>(), "stack plugin (required)")(
      "exit-code", po::value<int>()->default_value(-1), "the job's exit code, when known")(
      "state", po::value<std::string>()->default_value(""),
      "how the job ended: failed, timed_out, cancelled, node_failure, preempted, succeeded "
      "(default: not said)")(
      "ran-seconds", po::value<double>()->default_value(0), "how long the job ran (0: unknown)")(
      "json", "machine-readable output")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("file");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  auto input = ReadLogInput(p, env);
  if (!input.ok()) return ReportError(env, "log triage", input.status(), json);
  JobEnd end;
  end.exit_code = p.vm()["exit-code"].as<int>();
  end.launcher_state = p.Get("state");
  end.ran_seconds = p.vm()["ran-seconds"].as<double>();
  static const std::set<std::string> kStates = {"", "failed", "timed_out", "cancelled", "node_failure",
                                                "preempted", "succeeded"};
  if (!kStates.count(end.launcher_state) || end.ran_seconds < 0) {
    return ReportError(env, "log triage",
                       Status::InvalidArgument("--state must be one of failed, timed_out, cancelled, "
                                               "node_failure, preempted, succeeded and --ran-seconds "
                                               "0 or more (got '" + end.launcher_state + "', " +
                                               std::to_string(end.ran_seconds) + ")"),
                       json);
  }
  Failure f = input->stack->Triage(input->text, end);
  if (json) {
    *env.out << FailureToJson(f).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  *env.out << "kind: " << FailureKindName(f.kind) << "\n";
  if (!f.signature.empty()) *env.out << "rule: " << f.signature << "\n";
  if (!f.evidence.empty()) *env.out << "evidence (line " << f.line << "): " << f.evidence << "\n";
  if (!f.process.empty()) *env.out << "printed by: " << f.process << "\n";
  if (!f.hint.empty()) *env.out << "hint: " << f.hint << "\n";
  if (f.infrastructure) *env.out << "infrastructure: a retry of the same recipe may pass\n";
  return kExitOk;
}

}  // namespace attune::cli
