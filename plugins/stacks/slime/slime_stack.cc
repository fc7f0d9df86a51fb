#include "slime_stack.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>

#include "attune/support/json_schema.h"
#include "benchmark_form.h"
#include "dry_run.h"
#include "log_parser.h"
#include "moves.h"
#include "options_schema.h"
#include "recipe_import.h"
#include "rules.h"
#include "triage.h"

namespace attune::slime {
namespace {

template <typename T, typename Fn>
T Guard(T fallback, Fn fn) {
  try {
    return fn();
  } catch (const std::exception&) {
    return fallback;
  }
}

bool IsLate(const megatron::Signature& s) { return s.id.rfind("late.", 0) == 0; }

// What an absent --rollout-num-gpus means: with --colocate, every actor GPU serves generation
// (slime sets it to --actor-num-nodes x --actor-num-gpus-per-node), so a move that names 2 of 8
// gives generation fewer GPUs, not more. Disaggregated recipes must state it.
std::optional<std::string> AbsentRolloutGpus(const Recipe& r) {
  if (!GetValue(r, "--colocate")) return std::nullopt;
  return std::to_string(ActorGpus(r));
}

megatron::TriageSpec ComposeTriage(const megatron::TriageSpec& slime, const megatron::TriageSpec& megatron) {
  megatron::TriageSpec out = slime;
  out.signatures.clear();
  for (const auto& s : slime.signatures) if (!IsLate(s)) out.signatures.push_back(s);
  for (const auto& s : megatron.signatures) {
    if (s.before_training) continue;  // slime logs have no Megatron training marker
    if (!IsLate(s)) out.signatures.push_back(s);
  }
  for (const auto& s : slime.signatures) if (IsLate(s)) out.signatures.push_back(s);
  for (const auto& s : megatron.signatures) if (IsLate(s)) out.signatures.push_back(s);
  return out;
}

bool TouchesOwned(const megatron::Knowledge& slime, const Move& move) {
  for (const auto& c : move.changes) if (SlimeOwnsKey(slime, c.key)) return true;
  return false;
}

nlohmann::json Rules(const std::vector<megatron::ObjectiveRule>& rules) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rules) out.push_back({{"id", r.id}, {"reason", r.reason}, {"keys", r.keys}});
  return out;
}

}  // namespace

SlimeStack::SlimeStack(megatron::Knowledge slime, std::unique_ptr<megatron::MegatronStack> megatron)
    : slime_(std::move(slime)), megatron_(std::move(megatron)) {
  triage_ = ComposeTriage(slime_.triage, megatron_->knowledge().triage);
  for (const auto& spec : slime_.levers) levers_.push_back(spec.lever);
  // One list, built once (every legal move is validated): slime's flags and families, Megatron-LM's
  // flags (train.py builds Megatron's parser with slime's arguments added) and the declared ones.
  known_ = slime_.arguments;
  const megatron::KnownArguments& mcore = megatron_->knowledge().arguments;
  known_.flags.insert(mcore.flags.begin(), mcore.flags.end());
  for (const auto& lever : megatron_->Levers()) {
    bool owned = false;
    for (const auto& k : lever.keys) owned = owned || SlimeOwnsKey(slime_, k);
    if (!owned) levers_.push_back(lever);
  }
}

Result<std::unique_ptr<SlimeStack>> SlimeStack::Open(const std::string& data_dir,
                                                     const nlohmann::json& options) {
  ATTUNE_ASSIGN_OR_RETURN(megatron::Knowledge slime, megatron::LoadKnowledge(data_dir + "/stacks/slime"));
  ATTUNE_ASSIGN_OR_RETURN(slime.arguments,
                          megatron::LoadArguments(data_dir + "/stacks/slime/arguments.txt",
                                                  "tools/slime_arguments.py"));
  if (options.is_object() && options.contains("extra_arguments")) {
    for (const auto& flag : options["extra_arguments"])
      slime.arguments.extra.insert(flag.get<std::string>());
  }
  ATTUNE_ASSIGN_OR_RETURN(auto megatron, megatron::MegatronStack::Open(data_dir));
  return std::make_unique<SlimeStack>(std::move(slime), std::move(megatron));
}

std::vector<megatron::UnknownArgument> SlimeStack::UnknownArguments(const Recipe& recipe) const {
  const std::string script =
      recipe.entry.empty() ? "" : std::filesystem::path(recipe.entry.back()).filename().string();
  if (script != "train.py" && script != "train_async.py") return {};
  const megatron::KnownArguments& mcore = megatron_->knowledge().arguments;
  return megatron::UnknownFlags(
      known_, recipe,
      {"slime's " + script + " in any release from " + slime_.arguments.first + " to " +
           slime_.arguments.last + ", nor of Megatron-LM from " + mcore.first + " to " + mcore.last,
       "slime parses its arguments with ignore_unknown_args=True: the flag would be dropped "
       "without a word, and the run would go on with the default",
       "slime", "slime"});
}

Result<Recipe> SlimeStack::ImportLaunch(std::string_view script, std::vector<std::string>* unknown) const {
  try {
    Result<Recipe> recipe = ImportSlimeScript(script, unknown);
    // Placed in the recipe as written, but slime would drop it silently: say so now.
    if (recipe.ok() && unknown != nullptr) {
      for (auto& u : UnknownArguments(*recipe)) unknown->push_back(std::move(u.message));
    }
    return recipe;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("slime: ImportLaunch failed: ") + e.what());
  }
}

Status SlimeStack::Validate(const Recipe& recipe, const ClusterInfo& cluster) const {
  try {
    auto violations = SlimeViolations(recipe);
    for (auto& u : UnknownArguments(recipe))
      violations.push_back({"args.known", std::move(u.message)});
    if (!violations.empty()) {
      std::string msg = "slime recipe breaks " + std::to_string(violations.size()) + " rule(s):";
      for (const auto& v : violations) msg += "\n  [" + v.rule + "] " + v.message;
      return Status::InvalidArgument(msg);
    }
    // Megatron's rules apply to what slime hands Megatron, not to the flags as written.
    return megatron_->Validate(WithSlimeForcedArgs(recipe), cluster);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("slime: Validate failed: ") + e.what());
  }
}

std::vector<Move> SlimeStack::LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const {
  return Guard(std::vector<Move>{}, [&] {
    std::vector<Move> candidates = megatron::EnumerateMoves(slime_, recipe, cluster);
    for (auto& m : megatron_->LegalMoves(recipe, cluster)) {
      if (!TouchesOwned(slime_, m)) candidates.push_back(std::move(m));
    }
    // The catalog's defaults are fixed; this one depends on the recipe, so it is filled in here.
    const std::optional<std::string> absent_rollout_gpus = AbsentRolloutGpus(recipe);
    std::vector<Move> out;
    for (auto& m : candidates) {
      bool no_op = false;
      for (const auto& c : m.changes) {
        if (c.key != "--rollout-num-gpus" || c.from || !absent_rollout_gpus) continue;
        m.defaults[c.key] = *absent_rollout_gpus;
        no_op = no_op || c.to == absent_rollout_gpus;  // naming what absent already meant
      }
      if (no_op) continue;
      Recipe next = recipe;
      bool applied = true;
      for (const auto& c : m.changes) applied = applied && SetValue(&next, c.key, c.to).ok();
      if (!applied || !Validate(next, cluster).ok() || !CheckObjective(recipe, next).pass) continue;
      out.push_back(std::move(m));
    }
    return out;
  });
}

GateVerdict SlimeStack::CheckObjective(const Recipe& baseline, const Recipe& candidate) const {
  GateVerdict refused;
  refused.rule_id = "fail_closed.internal_error";
  refused.reason = "the slime gate failed internally; refusing";
  return Guard(refused, [&] { return CheckSlimeObjective(slime_, *megatron_, baseline, candidate); });
}

namespace {

// Rollouts a benchmark job runs when the recipe would run more: MeasureSlime drops the first.
constexpr int kBenchmarkRollouts = 5;
// The longest run a profiled job may be: the engine never stops a profiled job early (its traces
// are written when the window closes), so a benchmark form that keeps a long --num-rollout (an
// LR schedule sized from it) would run to its time limit.
constexpr long kMaxProfiledRollouts = 2 * kBenchmarkRollouts;

// True when a lower --num-rollout cannot change the schedule the first rollouts train with. slime
// sizes Megatron's: train_iters = num_rollout x rollout_batch_size x n_samples_per_prompt /
// global_batch_size, lr_decay_iters = train_iters unless given, warm-up = lr_warmup_fraction x
// decay when a fraction is given (slime/backends/megatron_utils/model.py), and Megatron asserts
// warm-up < decay. So: decay iterations given; or a constant LR without warm-up; and weight decay
// that does not ramp over train_iters.
bool RolloutSchedulePinned(const Recipe& r) {
  auto wd_style = GetValue(r, "--weight-decay-incr-style");
  if (wd_style && *wd_style != "constant") return false;
  if (GetValue(r, "--lr-decay-iters")) return true;
  auto style = GetValue(r, "--lr-decay-style");
  auto warmup = GetValue(r, "--lr-warmup-iters");
  bool no_warmup = (!warmup || *warmup == "0") && !GetValue(r, "--lr-warmup-fraction");
  return style && *style == "constant" && no_warmup;
}

long RolloutsOf(const Recipe& r) {
  auto n = GetValue(r, "--num-rollout");
  if (!n) return 0;  // from --num-epoch and the dataset's size
  try {
    return std::stol(*n);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

// slime has no exit-interval (its loop ends at --num-rollout): checkpoints and periodic
// evaluation are switched off, and the run is cut to kBenchmarkRollouts only where the LR schedule
// is pinned.
Result<Recipe> SlimeStack::BenchmarkForm(const Recipe& recipe) const {
  Recipe form = recipe;
  ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--save-interval", std::nullopt));  // no interval: no save
  ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--eval-interval", std::nullopt));
  if (GetValue(recipe, "--eval-prompt-data") || GetValue(recipe, "--eval-config")) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--skip-eval-before-train", ""));
  }
  long rollouts = RolloutsOf(recipe);
  if (RolloutSchedulePinned(recipe) && (rollouts == 0 || rollouts > kBenchmarkRollouts)) {
    ATTUNE_RETURN_IF_ERROR(SetValue(&form, "--num-rollout", std::to_string(kBenchmarkRollouts)));
  }
  return form;
}

// slime does not run Megatron's training loop, so Megatron's --profile and --profile-ranks do
// nothing there; its training actors run their own torch.profiler
// (slime/observability/profile_utils.py, TrainProfiler): with --use-pytorch-profiler and the
// `train_overall` target, every training rank steps one profiler once per rollout, with the
// schedule wait = --profile-step-start - 1, warm-up 1, active = end - start, and its
// tensorboard_trace_handler writes <--tensorboard-dir>/train_overall_rank_<r>.<ts>.pt.trace.json.gz
// when the window closes. So the window counts rollouts; one traced rollout holds every train step
// of it. The other targets (train_actor, train_log_probs) start a profiler per rollout, which would
// write several traces per rank; the rollout engines (SGLang) are not traced.
Result<Recipe> SlimeStack::ProfileForm(const Recipe& form, const std::string& trace_dir) const {
  if (GetValue(form, "--debug-rollout-only")) {
    return Status::FailedPrecondition(
        "cannot profile a slime run with --debug-rollout-only: no training actor runs, and only the "
        "training actors write traces");
  }
  const long rollouts = RolloutsOf(form);
  if (rollouts > kMaxProfiledRollouts) {
    return Status::FailedPrecondition(
        "cannot profile this slime run: its benchmark form runs " + std::to_string(rollouts) +
        " rollouts (more than " + std::to_string(kMaxProfiledRollouts) +
        "), and a profiled job always runs to its end; slime sizes the LR schedule from "
        "--num-rollout, so the benchmark form cuts the run only when the schedule is pinned: give "
        "--lr-decay-iters (or use a constant LR without warm-up) to profile it");
  }
  ATTUNE_ASSIGN_OR_RETURN(
      const megatron::ProfileWindow window,
      megatron::PlaceProfileWindow(rollouts > 0 ? std::optional<long>(rollouts) : std::nullopt, 1, "rollout",
                                   "--num-rollout"));
  Recipe out = form;
  ATTUNE_RETURN_IF_ERROR(megatron::SetPytorchProfiler(&out, window, trace_dir));
  ATTUNE_RETURN_IF_ERROR(SetValue(&out, "--profile-target", "train_overall"));
  return out;
}

// The training actors (the topology) plus the rollout engines' GPUs unless --colocate shares them.
int SlimeStack::Devices(const Recipe& recipe) const { return std::max(1, TotalGpus(recipe)); }

// One perf record per rollout; a length from --num-epoch and the dataset's size cannot be told.
std::optional<int64_t> SlimeStack::BenchmarkLength(const Recipe& form) const {
  const long rollouts = RolloutsOf(form);
  if (rollouts <= 0) return std::nullopt;
  return rollouts;
}

GateVerdict SlimeStack::CheckBenchmarkForm(const Recipe& recipe, const Recipe& form) const {
  Recipe judged = form;
  if (GetValue(form, "--num-rollout") != GetValue(recipe, "--num-rollout")) {
    long before = RolloutsOf(recipe), after = RolloutsOf(form);
    if (!RolloutSchedulePinned(recipe) || !RolloutSchedulePinned(form) || after <= 0 ||
        before < 0 || (before > 0 && after >= before)) {
      GateVerdict v;
      v.rule_id = "benchmark.num_rollout";
      v.reason = "a benchmark form may lower --num-rollout only when the LR schedule is pinned "
                 "(--lr-decay-iters given, or a constant LR without warm-up): slime sizes the "
                 "schedule from --num-rollout";
      return v;
    }
    // The rest of the form is judged as a candidate would be, with the recipe's own length.
    (void)SetValue(&judged, "--num-rollout", GetValue(recipe, "--num-rollout"));
  }
  return CheckObjective(recipe, judged);
}

Result<LaunchSpec> SlimeStack::RenderLaunch(const Recipe& recipe) const {
  return megatron_->RenderLaunch(recipe);
}

// `world` counts the rollout GPUs too (Devices); the training actors are the recipe's own.
Result<sim::ParallelPlan> SlimeStack::SimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                                     int world) const {
  (void)world;
  try {
    return SlimeSimulationPlan(recipe, slime_, *megatron_, cluster);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("slime: SimulationPlan failed: ") + e.what());
  }
}

Result<std::string> SlimeStack::RenderSimulatedLog(const Recipe& recipe, const sim::SimulatedRun& run) const {
  try {
    return RenderSlimeLog(recipe, run);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("slime: RenderSimulatedLog failed: ") + e.what());
  }
}

LogParse SlimeStack::ParseLog(std::string_view log) const {
  return Guard(LogParse{}, [&] { return ParseSlimeLog(log); });
}

Result<Measurement> SlimeStack::Measure(const LogParse& parse, const Recipe& recipe) const {
  try {
    return MeasureSlime(parse, recipe);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("slime: Measure failed: ") + e.what());
  }
}

Failure SlimeStack::Triage(std::string_view log, const JobEnd& end) const {
  Failure unknown;
  unknown.kind = FailureKind::kUnknown;
  unknown.signature = "triage_internal_error";
  return Guard(unknown, [&] {
    // slime's own records (rollout perf and train steps) are its progress: a training actor that
    // falls silent while rollout actors keep logging is a hang. Rollout ids and train steps
    // count differently, so the records are numbered in log order.
    auto lines = support::SplitLogLines(log);
    LogParse parse = ParseSlimeLines(lines);
    std::vector<const IterationSample*> records;
    for (const auto& s : parse.iterations) records.push_back(&s);
    std::stable_sort(records.begin(), records.end(),
                     [](const IterationSample* a, const IterationSample* b) { return a->line < b->line; });
    std::vector<support::ProgressRecord> progress;
    for (const IterationSample* s : records) {
      bool train_step = s->extra.count("slime/train_step") > 0;
      progress.push_back({s->line, static_cast<int64_t>(progress.size() + 1), 0, s->step_time_ms / 1000.0,
                          (train_step ? "train step " : "rollout ") + std::to_string(s->iteration)});
    }
    return megatron::TriageLines(triage_, lines, end, &progress);
  });
}

std::vector<Diagnosis> SlimeStack::Diagnose(const Recipe& recipe, const Measurement& measurement,
                                            const LogParse& parse, const ClusterInfo& cluster) const {
  return Guard(std::vector<Diagnosis>{}, [&] {
    std::vector<Diagnosis> out;
    std::vector<double> waits;
    for (const auto& s : parse.iterations) {
      if (auto it = s.extra.find("perf/wait_time_ratio"); it != s.extra.end()) waits.push_back(it->second);
    }
    if (!waits.empty()) {
      double wait = Median(waits);
      if (wait > 0.3) {
        out.push_back({"compute_bound", std::min(1.0, wait),
                       "training waits for rollout " + std::to_string(static_cast<int>(wait * 100)) +
                           "% of each step (perf/wait_time_ratio): the run is rollout-bound; more rollout "
                           "GPUs or engines help more than training levers"});
      }
    }
    for (auto& d : megatron_->Diagnose(recipe, measurement, parse, cluster)) out.push_back(std::move(d));
    return out;
  });
}

nlohmann::json SlimeStack::Describe() const {
  nlohmann::json levers = nlohmann::json::array();
  for (const auto& spec : slime_.levers) {
    levers.push_back({{"id", spec.lever.id}, {"description", spec.lever.description}, {"keys", spec.lever.keys},
                      {"addresses", spec.lever.addresses}, {"changes_rng", spec.lever.changes_rng}});
  }
  nlohmann::json conditional = nlohmann::json::array();
  for (const auto& c : slime_.objective.conditional) {
    conditional.push_back({{"id", c.id}, {"reason", c.reason}, {"fix", c.fix}, {"when_changed", c.when_changed}});
  }
  nlohmann::json constraints = nlohmann::json::array();
  for (const auto& [id, rule] : SlimeConstraintCatalog()) constraints.push_back({{"id", id}, {"rule", rule}});
  nlohmann::json triage = nlohmann::json::array();
  for (const auto& s : triage_.signatures) {
    triage.push_back({{"id", s.id}, {"kind", FailureKindName(s.kind)}, {"regex", s.pattern},
                      {"infrastructure", s.infrastructure}});
  }
  return {{"stack", "slime"},
          {"composed_with", "megatron"},
          {"levers", levers},
          {"objective", {{"objective", Rules(slime_.objective.objective)},
                         {"conditional", conditional},
                         {"neutral", Rules(slime_.objective.neutral)},
                         {"fail_closed", "a changed slime key in neither stacks/slime/levers.yaml nor objective.yaml "
                                         "is refused; other keys go to the megatron stack's gate"}}},
          {"constraints", constraints},
          {"triage", triage},
          {"megatron", megatron_->Describe()}};
}

Result<std::unique_ptr<Plugin>> Create(const PluginContext& context) {
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(kOptionsSchema, context.config, "stack 'slime'"));
  std::string dir = context.data_dir;
  if (dir.empty()) {
    const char* env = std::getenv("ATTUNE_DATA_DIR");
    if (env) dir = env;
  }
  if (dir.empty()) {
    return Status::InvalidArgument("slime: no data directory (PluginContext::data_dir or ATTUNE_DATA_DIR) "
                                   "to load stacks/slime/*.yaml and stacks/megatron/*.yaml from");
  }
  ATTUNE_ASSIGN_OR_RETURN(auto stack, SlimeStack::Open(dir, context.config));
  return std::unique_ptr<Plugin>(std::move(stack));
}

}  // namespace attune::slime
