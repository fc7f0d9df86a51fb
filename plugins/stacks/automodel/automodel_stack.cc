#include "automodel_stack.h"

#include <unistd.h>

#include <cmath>

#include "config_view.h"
#include "log_parser.h"
#include "recipe_import.h"
#include "dry_run.h"

namespace attune::automodel {
namespace {

constexpr double kDefaultTolerance = 0.02;
constexpr double kRngTolerance = 0.05;

// The dotted config key a recipe key addresses, or "" for keys that are not config settings.
std::string DottedKey(const std::string& key) {
  if (key.rfind("--", 0) == 0) return key.substr(2);
  if (key.rfind("config:", 0) == 0) return key.substr(7);
  return "";
}

bool IsMoeRecipe(const ConfigView& view) {
  return view.IsSet("distributed.moe") || view.IsSet("model.backend.experts") ||
         view.IsSet("model.config.num_experts") || view.IsSet("model.config.num_local_experts") ||
         view.GetInt("distributed.ep_size", 1) > 1;
}

GateVerdict Refuse(const std::string& rule, const std::string& reason) {
  return GateVerdict{false, rule, reason, 0};
}

std::string CurrentDir() {
  char buf[4096];
  return getcwd(buf, sizeof(buf)) ? std::string(buf) : std::string();
}

}  // namespace

AutoModelStack::AutoModelStack(Knowledge knowledge) : knowledge_(std::move(knowledge)) {
  for (const auto& spec : knowledge_.levers) levers_.push_back(spec.lever);
}

Result<std::unique_ptr<AutoModelStack>> AutoModelStack::Create(const std::string& data_dir,
                                                               const nlohmann::json& options) {
  ATTUNE_ASSIGN_OR_RETURN(Knowledge k, LoadKnowledge(data_dir + "/stacks/automodel"));
  if (options.is_object() && options.contains("extra_sections")) {
    for (const auto& name : options["extra_sections"])
      k.extra_sections.insert(name.get<std::string>());
  }
  return std::unique_ptr<AutoModelStack>(new AutoModelStack(std::move(k)));
}

Result<Recipe> AutoModelStack::ImportLaunch(std::string_view script,
                                            std::vector<std::string>* unknown) const {
  std::vector<std::string> ignored;
  Result<Recipe> recipe = ImportLaunchScript(script, CurrentDir(), unknown ? unknown : &ignored);
  // Placed in the recipe as written, but AutoModel would ignore it: say so now.
  if (recipe.ok() && unknown != nullptr) {
    if (Status s = CheckSections(*recipe, knowledge_); !s.ok()) unknown->push_back(s.message());
  }
  return recipe;
}

Status AutoModelStack::Validate(const Recipe& recipe, const ClusterInfo& /*cluster*/) const {
  if (recipe.stack != "automodel") {
    return Status::InvalidArgument("recipe is for stack '" + recipe.stack + "', not automodel");
  }
  return ValidateRecipe(recipe, knowledge_);
}

bool AutoModelStack::MoveMakesSense(const LeverSpec& spec, const Recipe& recipe) const {
  ConfigView view(recipe, knowledge_);
  const std::string dotted = spec.key.substr(2);
  long long tp = view.GetInt("distributed.tp_size", 1);
  if (dotted == "distributed.sequence_parallel" || dotted == "distributed.enable_async_tensor_parallel") {
    return tp > 1;
  }
  if (dotted.rfind("distributed.fsdp2_", 0) == 0) {
    return view.GetBool("distributed.enable_fsdp2_prefetch", false);
  }
  if (dotted.rfind("distributed.pipeline.", 0) == 0) return view.GetInt("distributed.pp_size", 1) > 1;
  if (dotted == "distributed.ep_size" || dotted == "model.backend.experts" ||
      dotted == "model.backend.dispatcher") {
    return IsMoeRecipe(view);
  }
  return true;
}

std::vector<Move> AutoModelStack::LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const {
  std::vector<Move> moves;
  ConfigView view(recipe, knowledge_);
  for (const auto& spec : knowledge_.levers) {
    if (!MoveMakesSense(spec, recipe)) continue;
    auto current = view.Get(spec.key.substr(2));
    const std::optional<std::string> from = GetValue(recipe, spec.key);
    // A key no override sets still has a value: the config file's, else AutoModel's default.
    // Agents read the move from it (true -> selective checkpointing is a move back).
    const std::string effective = current.value_or(spec.default_value);
    for (const auto& value : spec.values) {
      if (current && *current == value) continue;
      Change change{spec.key, from, value};
      Recipe candidate = recipe;
      if (!ApplyChanges(&candidate, {change}).ok()) continue;
      if (!Validate(candidate, cluster).ok()) continue;
      if (!CheckObjective(recipe, candidate).pass) continue;
      Move move{spec.lever.id,
                {change},
                spec.key.substr(2) + " " + current.value_or("(unset)") + " -> " + value,
                {},
                {}};
      if (!from && !effective.empty()) move.defaults[spec.key] = effective;
      moves.push_back(std::move(move));
    }
  }
  return moves;
}

std::optional<GateVerdict> AutoModelStack::CheckKey(const Recipe& baseline, const Change& change,
                                                    double* tolerance) const {
  if (change.key.rfind("topology:", 0) == 0) return std::nullopt;  // GBS is fixed: same objective
  std::string dotted = DottedKey(change.key);
  if (dotted.empty()) {
    return Refuse("fail_closed.unknown_key", change.key + " is not an AutoModel setting attune knows "
                  "(only dotted config overrides are levers); refused to stay safe");
  }
  for (const auto& rule : knowledge_.rules) {
    for (const auto& pattern : rule.patterns) {
      if (KeyMatches(pattern, dotted)) {
        return Refuse(rule.id, dotted + ": " + DescribeChange(change) + " — " + rule.reason);
      }
    }
    auto it = rule.values.find(dotted);
    if (it != rule.values.end() && change.to &&
        std::find(it->second.begin(), it->second.end(), *change.to) != it->second.end()) {
      return Refuse(rule.id, dotted + " = " + *change.to + " — " + rule.reason);
    }
  }
  ConfigView view(baseline, knowledge_);
  for (const auto& rule : knowledge_.conditionals) {
    if (rule.key != dotted) continue;
    bool applies = false;
    for (const auto& k : rule.when_any_present) applies = applies || view.IsSet(k);
    for (const auto& [k, limit] : rule.when_greater) applies = applies || view.GetInt(k, 0) > limit;
    if (applies) return Refuse(rule.id, dotted + ": " + DescribeChange(change) + " — " + rule.reason);
  }
  for (const auto& pattern : knowledge_.neutral) {
    if (KeyMatches(pattern, dotted)) return std::nullopt;
  }
  if (const LeverSpec* spec = knowledge_.FindLever(dotted)) {
    double t = spec->loss_rel_tolerance > 0 ? spec->loss_rel_tolerance
               : spec->lever.changes_rng    ? kRngTolerance
                                            : kDefaultTolerance;
    *tolerance = std::max(*tolerance, t);
    return std::nullopt;
  }
  return Refuse("fail_closed.unknown_key", dotted + " is in neither the lever catalog nor the "
                "objective list of stacks/automodel; refused (fail closed) — add it to levers.yaml "
                "or objective.yaml after checking what it does");
}

GateVerdict AutoModelStack::CheckObjective(const Recipe& baseline, const Recipe& candidate) const {
  double tolerance = kDefaultTolerance;
  for (const auto& change : Diff(baseline, candidate)) {
    if (auto refused = CheckKey(baseline, change, &tolerance)) return *refused;
  }
  return GateVerdict{true, "ok", "every changed key is an AutoModel throughput lever", tolerance};
}

namespace {

// Steps a benchmark job runs when the recipe would train longer: the first is dropped as warm-up
// and steps after a validation or checkpoint line are dropped too (log_parser.h).
constexpr long long kBenchmarkSteps = 50;
// A cadence no benchmark job reaches: checkpoint steps also run validation in AutoModel.
constexpr const char* kNever = "1000000000";

// True when lowering step_scheduler.max_steps cannot change the LR (and weight-decay) schedule the
// first steps see: AutoModel derives lr_decay_steps, lr_warmup_steps and wd_incr_steps from
// min(num_epochs x epoch_len, max_steps) unless they are set (LRSchedulerConfig.build), and runs
// no scheduler without an lr_scheduler section.
bool SchedulePinned(const ConfigView& view) {
  if (!view.IsSet("lr_scheduler")) return true;
  if (!view.IsSet("lr_scheduler.lr_decay_steps") || !view.IsSet("lr_scheduler.lr_warmup_steps")) return false;
  std::string wd_style = view.Get("lr_scheduler.wd_incr_style").value_or("constant");
  if (wd_style != "constant" && !view.IsSet("lr_scheduler.wd_incr_steps")) return false;
  std::string style = view.Get("lr_scheduler.lr_decay_style").value_or("cosine");
  if (style == "WSD" && !view.IsSet("lr_scheduler.wsd_decay_steps")) return false;
  return true;
}

}  // namespace

// No exit-interval exists in AutoModel: the only way to stop early is a shorter max_steps, which
// is allowed only where the schedule is pinned. Checkpoints and validation are always switched off.
Result<Recipe> AutoModelStack::BenchmarkForm(const Recipe& recipe) const {
  Recipe form = recipe;
  ConfigView view(recipe, knowledge_);
  ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--checkpoint.enabled", "false"));
  ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--step_scheduler.ckpt_every_steps", kNever));
  ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--step_scheduler.save_checkpoint_every_epoch", "false"));
  if (view.IsSet("step_scheduler.val_every_steps")) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--step_scheduler.val_every_steps", kNever));
  }
  long long max_steps = view.GetInt("step_scheduler.max_steps", 0);
  if (SchedulePinned(view) && (max_steps == 0 || max_steps > kBenchmarkSteps)) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--step_scheduler.max_steps", std::to_string(kBenchmarkSteps)));
  }
  return form;
}

// AutoModel's recipes have no trace-writing profiler to switch on: its training recipe
// (nemo_automodel/recipes/llm/train_ft.py) never starts torch.profiler, and its benchmarking recipe
// (recipes/llm/benchmark.py) only brackets steps for Nsight Systems (benchmark.nsys_start,
// nsys_end, nsys_ranks call cudaProfilerStart/Stop), which writes .nsys-rep reports under an
// `nsys profile --capture-range=cudaProfilerApi` wrapper, not chrome traces. Adding a profiler
// from outside would mean changing the user's training script, which a profiled form must not do.
Result<Recipe> AutoModelStack::ProfileForm(const Recipe& /*form*/, const std::string& /*trace_dir*/) const {
  return Status::Unimplemented(
      "the automodel stack cannot profile a run: NeMo AutoModel's recipes have no setting that writes "
      "PyTorch-profiler (chrome-trace) files (its benchmark recipe's benchmark.nsys_start/nsys_end only "
      "mark an Nsight Systems capture range, which writes .nsys-rep reports); record traces with "
      "torch.profiler in your own training script and read them with `attune profile analyze`");
}

// One step record per optimizer step, at most max_steps of them (the epochs may end the run
// sooner, which only makes this an upper bound); without max_steps the dataset decides.
std::optional<int64_t> AutoModelStack::BenchmarkLength(const Recipe& form) const {
  const long long max_steps = ConfigView(form, knowledge_).GetInt("step_scheduler.max_steps", 0);
  if (max_steps <= 0) return std::nullopt;
  return max_steps;
}

GateVerdict AutoModelStack::CheckBenchmarkForm(const Recipe& recipe, const Recipe& form) const {
  ConfigView base(recipe, knowledge_), run(form, knowledge_);
  Recipe judged = form;
  auto max_steps = run.Get("step_scheduler.max_steps");
  if (max_steps != base.Get("step_scheduler.max_steps")) {
    long long before = base.GetInt("step_scheduler.max_steps", 0), after = run.GetInt("step_scheduler.max_steps", 0);
    if (!SchedulePinned(base) || !SchedulePinned(run) || after <= 0 || (before > 0 && after >= before)) {
      return Refuse("benchmark.max_steps",
                    "a benchmark form may lower step_scheduler.max_steps only when the LR schedule "
                    "is pinned (lr_scheduler.lr_decay_steps and lr_warmup_steps set, or no "
                    "lr_scheduler): otherwise AutoModel derives the schedule from max_steps");
    }
    // The rest of the form is judged as a candidate would be, with the recipe's own max_steps.
    (void)SetValue(&judged, "--step_scheduler.max_steps", GetValue(recipe, "--step_scheduler.max_steps"));
  }
  return CheckObjective(recipe, judged);
}

Result<LaunchSpec> AutoModelStack::RenderLaunch(const Recipe& recipe) const {
  if (recipe.entry.empty()) return Status::InvalidArgument("the recipe has no entry point");
  return RenderRecipe(recipe);
}

LogParse AutoModelStack::ParseLog(std::string_view log) const { return ParseAutoModelLog(log); }

Result<Measurement> AutoModelStack::Measure(const LogParse& parse, const Recipe& recipe) const {
  ConfigView view(recipe, knowledge_);
  Mesh mesh = ReadMesh(view, recipe.topology);
  double seq = static_cast<double>(view.GetInt("dataset.seq_length", 0));
  double gbs = static_cast<double>(view.GetInt("step_scheduler.global_batch_size", 32));
  // A recipe that names only the stack (`attune log parse` without --recipe) says nothing of the
  // mesh: its default 1 x 1 topology would read the job's total throughput as one GPU's.
  const bool mesh_unknown = recipe.args.empty() && recipe.entry.empty() &&
                            (recipe.config.is_null() || recipe.config.empty());
  return MeasureAutoModel(parse, mesh.dp * mesh.cp, mesh_unknown ? 0 : mesh.world,
                          seq > 0 ? seq * gbs : 0);
}

Failure AutoModelStack::Triage(std::string_view log, const JobEnd& end) const {
  return TriageAutoModel(log, end, knowledge_);
}

std::vector<Diagnosis> AutoModelStack::Diagnose(const Recipe& recipe, const Measurement& m,
                                                const LogParse& /*parse*/,
                                                const ClusterInfo& cluster) const {
  std::vector<Diagnosis> out;
  ConfigView view(recipe, knowledge_);
  Mesh mesh = ReadMesh(view, recipe.topology);
  if (m.peak_memory_gib && cluster.device_memory_gib > 0) {
    double used = *m.peak_memory_gib / cluster.device_memory_gib;
    std::string evidence = "peak " + std::to_string(*m.peak_memory_gib).substr(0, 5) + " of " +
                           std::to_string(cluster.device_memory_gib).substr(0, 5) + " GiB";
    if (used < 0.7) out.push_back({"memory_headroom", 1 - used, evidence});
    if (used > 0.9) out.push_back({"memory_pressure", used, evidence});
  }
  long long lbs = view.GetInt("step_scheduler.local_batch_size", 1);
  long long gbs = view.GetInt("step_scheduler.global_batch_size", 32);
  long long accumulation = gbs / std::max(1LL, lbs * mesh.dp);
  if (accumulation >= 4) {
    out.push_back({"launch_overhead", std::min(1.0, accumulation / 16.0),
                   std::to_string(accumulation) + " micro-batches per step at local_batch_size " +
                       std::to_string(lbs)});
  }
  if (mesh.pp > 1) {
    double m_count = static_cast<double>(lbs) / view.GetInt("distributed.pipeline.pp_microbatch_size", 1);
    double bubble = (mesh.pp - 1) / std::max(1.0, m_count);
    out.push_back({"pipeline_bubble", std::min(1.0, bubble),
                   "bubble ≈ (pp−1)/M = " + std::to_string(bubble).substr(0, 4)});
  }
  if (mesh.dp > 1 && mesh.strategy != "ddp") {
    out.push_back({"communication", 0.2, "FSDP all-gathers and reduce-scatters over dp=" +
                                             std::to_string(mesh.dp)});
  }
  out.push_back({"compute_bound", 0.1, "kernel-level levers (compile, backends)"});
  return out;
}

nlohmann::json AutoModelStack::Describe() const {
  nlohmann::json levers = nlohmann::json::array();
  for (const auto& spec : knowledge_.levers) {
    levers.push_back({{"id", spec.lever.id}, {"key", spec.key}, {"values", spec.values},
                      {"default", spec.default_value}, {"addresses", spec.lever.addresses},
                      {"expected_speed", spec.lever.expected_speed},
                      {"expected_memory", spec.lever.expected_memory},
                      {"changes_rng", spec.lever.changes_rng},
                      {"description", spec.lever.description}});
    if (!spec.lever.order.empty()) levers.back()["order"] = spec.lever.order;
  }
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& r : knowledge_.rules) {
    rules.push_back({{"id", r.id}, {"keys", r.patterns}, {"values", r.values}, {"reason", r.reason}});
  }
  for (const auto& r : knowledge_.conditionals) {
    rules.push_back({{"id", r.id}, {"keys", {r.key}}, {"when_any_present", r.when_any_present},
                     {"when_greater", r.when_greater}, {"reason", r.reason}});
  }
  nlohmann::json constraints = {
      {{"id", "strategy.known"}, {"rule", "distributed.strategy in fsdp2, megatron_fsdp, ddp"}},
      {{"id", "mesh.world_divisible"},
       {"rule", "world % (tp·cp·pp) == 0 (tp·cp for megatron_fsdp)"}},
      {{"id", "mesh.dp_size"}, {"rule", "dp·tp·cp·pp == world when dp_size is given"}},
      {{"id", "mfsdp.no_pp_ep"}, {"rule", "megatron_fsdp: pp_size == 1 and ep_size == 1"}},
      {{"id", "ddp.no_model_parallel"}, {"rule", "ddp: tp = pp = cp = ep = 1"}},
      {{"id", "hsdp.fsdp2_only"}, {"rule", "dp_replicate_size > 1 only with fsdp2"}},
      {{"id", "hsdp.divides_dp"},
       {"rule", "dp % dp_replicate_size == 0 and dp_replicate_size < dp"}},
      {{"id", "mesh.ep_divides"}, {"rule", "(dp·cp·tp) % ep_size == 0"}},
      {{"id", "batch.divisible"}, {"rule", "global_batch_size % (local_batch_size · dp) == 0"}},
      {{"id", "pp.pipeline_block"}, {"rule", "pp_size > 1 needs a distributed.pipeline block"}},
      {{"id", "pp.microbatches"}, {"rule", "local_batch_size // pp_microbatch_size >= pp_size"}},
      {{"id", "cp.seq_divisible"}, {"rule", "sequence length % cp_size == 0"}},
      {{"id", "ac.selective_strategy"},
       {"rule", "selective activation checkpointing only with fsdp2/ddp"}},
      {{"id", "config.sections"},
       {"rule",
        "no top-level config key is a typo of a section AutoModel reads "
        "(stacks/automodel/config_sections.txt) unless declared in the stack's "
        "extra_sections option: AutoModel ignores it silently"}},
      {{"id", "config.keys"},
       {"rule",
        "every key of step_scheduler is one some AutoModel release takes "
        "(stacks/automodel/config_sections.txt) or declared in extra_sections as "
        "step_scheduler.KEY: StepScheduler stops at start on any other"}}};
  nlohmann::json triage = nlohmann::json::array();
  for (const auto& s : knowledge_.triage.signatures) {
    triage.push_back({{"id", s.id}, {"kind", FailureKindName(s.kind)}, {"regex", s.pattern},
                      {"hint", s.hint}, {"infrastructure", s.infrastructure},
                      {"before_training", s.before_training}});
  }
  return {{"stack", "automodel"},     {"levers", levers},         {"objective_rules", rules},
          {"neutral", knowledge_.neutral}, {"constraints", constraints}, {"triage", triage}};
}

Result<sim::ParallelPlan> AutoModelStack::SimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                                         int world) const {
  return AutoModelSimulationPlan(recipe, knowledge_, cluster, world);
}

Result<std::string> AutoModelStack::RenderSimulatedLog(const Recipe& recipe,
                                                       const sim::SimulatedRun& run) const {
  return RenderAutoModelLog(recipe, run);
}

}  // namespace attune::automodel
