#include "megatron_stack.h"

#include "benchmark_form.h"

#include <cstdlib>
#include <exception>

#include "attune/support/json_schema.h"
#include "devices.h"
#include "launch.h"
#include "log_parser.h"
#include "moves.h"
#include "objective.h"
#include "options_schema.h"
#include "sim_log.h"
#include "sim_mapping.h"
#include "timers.h"
#include "triage.h"
#include "validate.h"

namespace attune::megatron {
namespace {

nlohmann::json ValueToJson(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json LeverToJson(const LeverSpec& s) {
  nlohmann::json j = {{"id", s.lever.id},
                      {"description", s.lever.description},
                      {"keys", s.lever.keys},
                      {"type", LeverTypeName(s.type)},
                      {"addresses", s.lever.addresses},
                      {"expected_speed", s.lever.expected_speed},
                      {"expected_memory", s.lever.expected_memory},
                      {"changes_rng", s.lever.changes_rng},
                      {"companions", s.companions},
                      {"excludes", s.excludes},
                      {"requires_present", s.requires_present}};
  if (s.default_value) j["default"] = *s.default_value;
  if (!s.lever.order.empty()) j["order"] = s.lever.order;
  if (!s.powers_of_two_up_to.empty()) {
    j["values"] = {{"powers_of_two_up_to", s.powers_of_two_up_to}};
  } else if (!s.divisors_of.empty()) {
    j["values"] = {{"divisors_of", s.divisors_of}, {"up_to", s.divisors_up_to}};
  } else {
    j["values"] = nlohmann::json::array();
    for (const auto& v : s.values) j["values"].push_back(ValueToJson(v));
  }
  nlohmann::json adds = nlohmann::json::object();
  for (const auto& [k, v] : s.adds_when_on) adds[k] = v;
  j["requires"] = adds;
  if (!s.presets.empty()) {
    j["presets"] = nlohmann::json::array();
    for (const auto& p : s.presets) {
      nlohmann::json set = nlohmann::json::object();
      for (const auto& [k, v] : p.set) set[k] = v;
      j["presets"].push_back({{"name", p.name}, {"set", set}});
    }
  }
  if (!s.loss_tolerance.empty()) j["loss_tolerance"] = s.loss_tolerance;
  if (s.needs_data_parallel) j["needs_data_parallel"] = true;
  if (s.needs_tensor_parallel) j["needs_tensor_parallel"] = true;
  if (s.needs_experts) j["needs_experts"] = true;
  if (!s.devices.empty()) {
    j["devices"] = nlohmann::json::array();
    for (DeviceKind d : s.devices) j["devices"].push_back(DeviceKindName(d));
  }
  return j;
}

nlohmann::json RulesToJson(const std::vector<ObjectiveRule>& rules) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rules) out.push_back({{"id", r.id}, {"reason", r.reason}, {"keys", r.keys}});
  return out;
}

nlohmann::json ObjectiveToJson(const ObjectiveSpec& o) {
  nlohmann::json conditional = nlohmann::json::array();
  for (const auto& c : o.conditional) {
    conditional.push_back({{"id", c.id}, {"reason", c.reason}, {"fix", c.fix},
                           {"when_changed", c.when_changed}, {"refuse_if", ConditionToJson(c.refuse_if)}});
  }
  return {{"tolerance", {{"default", o.tolerance_default}, {"numerics", o.tolerance_numerics},
                         {"changes_rng", o.tolerance_changes_rng}}},
          {"objective", RulesToJson(o.objective)},
          {"conditional", conditional},
          {"neutral", RulesToJson(o.neutral)},
          {"topology", RulesToJson({o.topology})},
          {"fail_closed", {{"id", "fail_closed.unknown_key"},
                           {"reason", "a changed key in neither levers.yaml nor objective.yaml is refused"}}}};
}

template <typename T, typename Fn>
T Guard(T fallback, Fn fn) {
  // No exception may cross the plugin boundary; std::bad_alloc and friends become a fallback.
  try {
    return fn();
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

MegatronStack::MegatronStack(Knowledge knowledge) : knowledge_(std::move(knowledge)) {
  for (const auto& spec : knowledge_.levers) levers_.push_back(spec.lever);
}

Result<std::unique_ptr<MegatronStack>> MegatronStack::Open(const std::string& data_dir,
                                                           const nlohmann::json& options) {
  const std::string dir = data_dir + "/stacks/megatron";
  ATTUNE_ASSIGN_OR_RETURN(Knowledge k, LoadKnowledge(dir));
  ATTUNE_ASSIGN_OR_RETURN(k.arguments, LoadArguments(dir + "/arguments.txt"));
  if (options.is_object() && options.contains("extra_arguments")) {
    for (const auto& flag : options["extra_arguments"])
      k.arguments.extra.insert(flag.get<std::string>());
  }
  return std::make_unique<MegatronStack>(std::move(k));
}

Result<Recipe> MegatronStack::ImportLaunch(std::string_view script, std::vector<std::string>* unknown) const {
  try {
    Result<Recipe> recipe = ImportLaunchScript(script, unknown);
    // Placed in the recipe as written, but the training script would refuse it: say so now.
    if (recipe.ok() && unknown != nullptr) {
      for (auto& u : UnknownArguments(knowledge_.arguments, *recipe))
        unknown->push_back(std::move(u.message));
    }
    return recipe;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("megatron: ImportLaunch failed: ") + e.what());
  }
}

Status MegatronStack::Validate(const Recipe& recipe, const ClusterInfo& cluster) const {
  try {
    return ValidateForCluster(knowledge_, recipe, cluster);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("megatron: Validate failed: ") + e.what());
  }
}

std::vector<Move> MegatronStack::LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const {
  return Guard(std::vector<Move>{}, [&] { return EnumerateMoves(knowledge_, recipe, cluster); });
}

GateVerdict MegatronStack::CheckObjective(const Recipe& baseline, const Recipe& candidate) const {
  GateVerdict refused;
  refused.rule_id = "fail_closed.internal_error";
  refused.reason = "the megatron gate failed internally; refusing";
  return Guard(refused, [&] { return CheckObjectiveRules(knowledge_, baseline, candidate); });
}

Result<LaunchSpec> MegatronStack::RenderLaunch(const Recipe& recipe) const {
  try {
    return RenderLaunchSpec(recipe);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("megatron: RenderLaunch failed: ") + e.what());
  }
}

Result<Recipe> MegatronStack::BenchmarkForm(const Recipe& recipe) const {
  return BenchmarkRecipe(recipe);
}

GateVerdict MegatronStack::CheckBenchmarkForm(const Recipe& recipe, const Recipe& form) const {
  // The form runs the recipe's steady batch (benchmark_form.h); everything else is held as a
  // candidate would be.
  Result<Recipe> steady = SteadyBatch(recipe);
  if (!steady.ok()) {
    GateVerdict refused;
    refused.rule_id = "fail_closed.batch_ramp";
    refused.reason = steady.status().message();
    return refused;
  }
  return CheckObjective(*steady, form);
}

Result<Recipe> MegatronStack::ProfileForm(const Recipe& form, const std::string& trace_dir) const {
  return ProfiledRecipe(form, form.topology.WorldSize(), trace_dir);
}

std::optional<int64_t> MegatronStack::BenchmarkLength(const Recipe& form) const {
  auto n = PlannedIterations(form);
  if (!n || *n <= 0) return std::nullopt;
  return *n;
}

LogParse MegatronStack::ParseLog(std::string_view log) const {
  return Guard(LogParse{}, [&] {
    LogParse parse = ParseMegatronLog(log);
    AttachTimerBlocks(ParseTimerBlocks(log), &parse);
    return parse;
  });
}

Result<Measurement> MegatronStack::Measure(const LogParse& parse, const Recipe& recipe) const {
  try {
    return MeasureRun(parse, recipe);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("megatron: Measure failed: ") + e.what());
  }
}

Failure MegatronStack::Triage(std::string_view log, const JobEnd& end) const {
  Failure unknown;
  unknown.kind = FailureKind::kUnknown;
  unknown.signature = "triage_internal_error";
  return Guard(unknown, [&] { return TriageLog(knowledge_.triage, log, end); });
}

std::vector<Diagnosis> MegatronStack::Diagnose(const Recipe& recipe, const Measurement& measurement,
                                               const LogParse& parse, const ClusterInfo& cluster) const {
  return Guard(std::vector<Diagnosis>{}, [&] { return DiagnoseRun(recipe, measurement, parse, cluster); });
}

std::vector<PluginCommand> MegatronStack::Commands() const {
  return {{"timers", "what Megatron's timer blocks in a log say: gradient communication, "
                     "pipeline waits, diagnosis"}};
}

int MegatronStack::RunCommand(const std::string& command, const std::vector<std::string>& args,
                              std::ostream& out, std::ostream& err) {
  if (command != "timers") return Stack::RunCommand(command, args, out, err);
  try {
    return RunTimersCommand(args, out, err);
  } catch (const std::exception& e) {
    err << "attune megatron timers: internal error: " << e.what() << "\n";
    return 1;
  }
}

nlohmann::json MegatronStack::Describe() const {
  nlohmann::json levers = nlohmann::json::array();
  for (const auto& spec : knowledge_.levers) levers.push_back(LeverToJson(spec));
  nlohmann::json constraints = nlohmann::json::array();
  for (const auto& c : ConstraintCatalog()) constraints.push_back({{"id", c.id}, {"rule", c.text}});
  ConstraintInfo device = DeviceConstraint();
  constraints.push_back({{"id", device.id}, {"rule", device.text}});
  ConstraintInfo arguments = ArgumentsConstraint();
  constraints.push_back({{"id", arguments.id}, {"rule", arguments.text}});
  nlohmann::json triage = nlohmann::json::array();
  for (const auto& s : knowledge_.triage.signatures) {
    triage.push_back({{"id", s.id}, {"kind", FailureKindName(s.kind)}, {"regex", s.pattern},
                      {"infrastructure", s.infrastructure}, {"before_training", s.before_training}});
  }
  return {{"stack", "megatron"},
          {"levers", levers},
          {"objective", ObjectiveToJson(knowledge_.objective)},
          {"constraints", constraints},
          {"triage", triage}};
}

Result<std::unique_ptr<Plugin>> Create(const PluginContext& context) {
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(kOptionsSchema, context.config, "stack 'megatron'"));
  std::string dir = context.data_dir;
  if (dir.empty()) {
    const char* env = std::getenv("ATTUNE_DATA_DIR");
    if (env) dir = env;
  }
  if (dir.empty()) {
    return Status::InvalidArgument("megatron: no data directory (PluginContext::data_dir or ATTUNE_DATA_DIR) "
                                   "to load stacks/megatron/*.yaml from");
  }
  ATTUNE_ASSIGN_OR_RETURN(auto stack, MegatronStack::Open(dir, context.config));
  return std::unique_ptr<Plugin>(std::move(stack));
}

Result<sim::ParallelPlan> MegatronStack::SimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                                        int world) const {
  return MegatronSimulationPlan(recipe, cluster, world);
}

Result<std::string> MegatronStack::RenderSimulatedLog(const Recipe& recipe,
                                                      const sim::SimulatedRun& run) const {
  return RenderMegatronLog(recipe, run);
}

}  // namespace attune::megatron
