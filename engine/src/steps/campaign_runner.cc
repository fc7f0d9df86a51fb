// RunCampaign: open (or create) the campaign, make sure it runs the workflow and plugins it
// started with, reconcile jobs left in flight, then run the steps in order from the state.
#include "steps/campaign_runner.h"
#include "steps/step_kinds.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include "api/utf8.h"
#include "base/crash_point.h"
#include "campaign/events.h"
#include "log/resource_advice.h"
#include "plugin/plugin_host.h"
#include "steps/job_driver.h"
#include "steps/run_context.h"
#include "steps/steps.h"
#include "steps/workflow_change.h"

namespace attune {
namespace {

using nlohmann::json;

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitPaused = 3, kExitLocked = 4;

// An error with the exit code it maps to.
struct RunError {
  Status status;
  int exit_code = kExitFailed;
};

void AppendAck(const std::string& path, uint64_t seq) {
  std::ofstream out(path, std::ios::app);
  out << seq << "\n";
}

Result<std::unique_ptr<EventLog>> OpenLog(const RunOptions& o) {
  EventLogOptions lo;
  lo.create_if_missing = true;
  if (!o.ack_file.empty()) {
    const std::string path = o.ack_file;
    lo.on_ack = [path](uint64_t seq) { AppendAck(path, seq); };
  }
  lo.campaign_id = o.campaign_id;
  std::error_code ec;
  std::filesystem::create_directories(o.campaign_dir, ec);
  ATTUNE_ASSIGN_OR_RETURN(auto log, EventLog::Open(o.campaign_dir, lo));
  if (!o.campaign_id.empty() && log->campaign_id() != o.campaign_id) {
    return Status::InvalidArgument("the campaign in " + o.campaign_dir + " has the id '" +
                                   log->campaign_id() + "', not '" + o.campaign_id +
                                   "'; drop --campaign-id to resume it, or start a new campaign "
                                   "in another --dir");
  }
  return log;
}

PluginContext MakeContext(const RunContext& ctx, const PluginRef& ref) {
  PluginContext pc;
  pc.config = ref.with;
  pc.campaign_dir = ctx.log->dir();
  pc.data_dir = ctx.data_dir;
  pc.attune_binary = ctx.options->attune_binary;
  pc.seed = ctx.workflow.seed;
  std::ostream* err = ctx.options->err;
  pc.log = [err](LogLevel level, const std::string& message) {
    if (level != LogLevel::kDebug) *err << message << "\n";
  };
  return pc;
}

Status CreatePlugins(RunContext& ctx, PluginHost& host) {
  const Workflow& w = ctx.workflow;
  ATTUNE_ASSIGN_OR_RETURN(ctx.stack, host.CreateStack(w.stack.name, MakeContext(ctx, w.stack)));
  ATTUNE_ASSIGN_OR_RETURN(ctx.launcher, host.CreateLauncher(w.launcher.name, MakeContext(ctx, w.launcher)));
  ATTUNE_ASSIGN_OR_RETURN(ctx.agent, host.CreateAgent(w.agent.name, MakeContext(ctx, w.agent)));
  return Status::Ok();
}

Result<std::vector<PluginIdentity>> Identities(const PluginHost& host, const Workflow& w) {
  std::vector<PluginIdentity> out;
  const std::pair<PluginKind, std::string> wanted[] = {
      {PluginKind::kStack, w.stack.name}, {PluginKind::kLauncher, w.launcher.name}, {PluginKind::kAgent, w.agent.name}};
  for (const auto& [kind, name] : wanted) {
    ATTUNE_ASSIGN_OR_RETURN(const LoadedPlugin* p, host.Find(kind, name));
    out.push_back(PluginIdentity{PluginKindName(kind), p->name, p->version, p->sha256});
  }
  return out;
}

CampaignSettings SettingsOf(const Workflow& w) {
  CampaignSettings s;
  s.budget_gpu_hours = w.budget.gpu_hours;
  s.max_candidates = w.budget.max_candidates;
  s.job_time_limit_s = w.budget.job_time_limit_s;
  s.time_limit_factor = w.budget.time_limit_factor;
  s.noise_band = w.measure.noise_band;
  s.repeats = w.measure.repeats;
  s.confirm = w.measure.confirm;
  s.rivals = w.measure.rivals;
  s.loss_rel_tolerance = w.gate.loss_rel_tolerance;
  s.paired_losses = w.gate.paired_losses;
  s.early_stop = w.measure.early_stop.enabled;
  s.early_stop_min_iterations = w.measure.early_stop.min_iterations;
  s.early_stop_relative_error = w.measure.early_stop.relative_error;
  s.early_stop_check_every_s = w.measure.early_stop.check_every_s;
  return s;
}

WorkflowSchema SchemaWith(const PluginHost& host) {
  WorkflowSchema schema = BuiltinStepSchema();
  AddPluginsToSchema(host, &schema);
  return schema;
}

// A plugin that refuses its options (kInvalidArgument) is bad input: exit 2, like the validator.
RunError PluginError(const Status& s) {
  return RunError{s, s.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailed};
}

std::optional<RunError> StartNew(RunContext& ctx, PluginHost& host,
                                 const std::optional<Workflow>& given) {
  const RunOptions& o = *ctx.options;
  if (!o.amend_workflow_path.empty()) {
    return RunError{Status::InvalidArgument("campaign directory " + o.campaign_dir +
                                            " holds no campaign to amend: start one with `attune "
                                            "run WORKFLOW --dir " + o.campaign_dir + "`"),
                    kExitUsage};
  }
  if (!given) {
    return RunError{Status::InvalidArgument("campaign directory " + o.campaign_dir +
                                            " holds no campaign yet: pass the workflow to start one"),
                    kExitUsage};
  }
  ctx.workflow = *given;
  auto ids = Identities(host, ctx.workflow);
  if (!ids.ok()) return RunError{ids.status(), kExitUsage};
  if (Status s = CreatePlugins(ctx, host); !s.ok()) return PluginError(s);
  // The baseline must be able to run on the cluster the launcher offers (parallel sizes that
  // divide the world size, a topology that fits, values of the right types) before any budget is
  // spent on it: a baseline that cannot start would otherwise be launched and fail.
  if (Status s = ctx.stack->Validate(ctx.workflow.recipe, ctx.launcher->Cluster()); !s.ok()) {
    return RunError{Status::InvalidArgument(
                        "the recipe " + ctx.workflow.recipe_path +
                        " cannot run as it is on this launcher's cluster: " + s.message() +
                        ". Nothing was run or spent: fix the recipe (or the launcher's options) "
                        "and run again"),
                    kExitUsage};
  }
  json plugins = json::array(), steps = json::array();
  for (const auto& p : *ids) plugins.push_back(PluginIdentityToJson(p));
  for (const auto& st : ctx.workflow.steps) steps.push_back(json{{"id", st.id}, {"uses", st.uses}});
  const Workflow& w = ctx.workflow;
  json data{{"campaign_id", ctx.log->campaign_id()}, {"workflow", WorkflowToJson(w)},
            {"workflow_hash", WorkflowHash(w)},      {"seed", w.seed},
            {"plugins", plugins},                    {"cluster", ClusterInfoToJson(ctx.launcher->Cluster())},
            {"settings", CampaignSettingsToJson(SettingsOf(w))},
            {"baseline_recipe", RecipeToJson(w.recipe)},
            {"stack", w.stack.name}, {"launcher", w.launcher.name}, {"agent", w.agent.name},
            {"steps", steps}};
  if (Status s = ctx.Append({NewEvent{events::kCampaignStarted, data}}); !s.ok()) return RunError{s};
  return std::nullopt;
}

std::string DescribeIdentity(const PluginIdentity& p) {
  return p.kind + " '" + p.name + "' " + p.version + " (sha256 " + p.sha256.substr(0, 12) + ")";
}

// The recorded workflow wins over a file passed again; say which of the file's settings differ.
void SayDifferences(const RunContext& ctx, const Workflow& recorded, const Workflow& given) {
  auto lines = WorkflowDifferences(recorded, given);
  if (lines.empty()) return;
  ctx.Say("the campaign runs the workflow recorded when it started; these settings of " +
          ctx.options->workflow_path + " differ and the recorded values are used:");
  for (const auto& line : lines) ctx.Say("  " + line);
  ctx.Say("to change settings that do not alter past decisions (budget, agent options, steps not "
          "yet started), run `attune run --dir " + ctx.options->campaign_dir +
          " --amend-workflow " + ctx.options->workflow_path + "`");
}

// Records an explicit amendment after checking that it leaves past decisions valid.
std::optional<RunError> Amend(RunContext& ctx, const Workflow& recorded, Workflow amended) {
  if (Status s = CheckAmendment(ctx.state, recorded, amended); !s.ok()) {
    return RunError{s.WithContext("--amend-workflow " + ctx.options->amend_workflow_path),
                    kExitUsage};
  }
  auto lines = WorkflowDifferences(recorded, amended);
  if (lines.empty()) {
    ctx.Say("--amend-workflow: the file matches the recorded workflow; nothing to amend");
    return std::nullopt;
  }
  json steps = json::array(), changes = json::array();
  for (const auto& st : amended.steps) steps.push_back(json{{"id", st.id}, {"uses", st.uses}});
  for (const auto& line : lines) changes.push_back(line);
  json data{{"previous_hash", ctx.state.workflow_hash}, {"workflow_hash", WorkflowHash(amended)},
            {"workflow", WorkflowToJson(amended)},
            {"settings", CampaignSettingsToJson(SettingsOf(amended))},
            {"steps", steps}, {"changes", changes}};
  if (Status s = ctx.Append({NewEvent{events::kWorkflowAmended, data}}); !s.ok()) return RunError{s};
  for (const auto& line : lines) ctx.Say("  amended " + line);
  ctx.workflow = std::move(amended);
  return std::nullopt;
}

std::optional<RunError> Resume(RunContext& ctx, PluginHost& host,
                               const std::optional<Workflow>& given) {
  auto events_read = ctx.log->ReadFrom(1);
  if (!events_read.ok()) return RunError{events_read.status(), kExitLocked};
  auto state = CampaignState::Fold(*events_read);
  if (!state.ok()) return RunError{state.status(), kExitLocked};
  ctx.state = std::move(*state);
  if (ctx.state.finished) return std::nullopt;  // nothing to run: no plugins, no events
  auto wf = WorkflowFromJson(ctx.state.workflow_json);
  if (!wf.ok()) return RunError{wf.status().WithContext("the workflow recorded in the campaign")};
  ctx.workflow = std::move(*wf);
  const std::string& dir = ctx.options->campaign_dir;
  if (!ctx.options->amend_workflow_path.empty()) {
    if (auto e = Amend(ctx, ctx.workflow, *given)) return e;
  } else {
    if (given) SayDifferences(ctx, ctx.workflow, *given);
    // An older attune may have recorded what this one refuses; running it would fail mid-step.
    if (Status s = CheckRecordedWorkflow(ctx.workflow, SchemaWith(host)); !s.ok()) {
      return RunError{Status::InvalidArgument(
                          "the workflow recorded in campaign " + dir +
                          " is refused by this attune: " + s.message() +
                          ". Nothing was run. Fix it in a copy of the workflow file and resume with "
                          "`attune run --dir " + dir + " --amend-workflow FILE`"),
                      kExitUsage};
    }
  }
  auto ids = Identities(host, ctx.workflow);
  if (!ids.ok()) return RunError{ids.status()};
  for (const auto& now : *ids) {
    for (const auto& then : ctx.state.plugins) {
      if (then.kind == now.kind && then.name == now.name && !(then == now)) {
        return RunError{Status::FailedPrecondition(
            "campaign " + ctx.options->campaign_dir + " ran with " + DescribeIdentity(then) +
            " but the plugin found now is " + DescribeIdentity(now) +
            "; a resumed campaign must use the plugins it started with so that its recorded "
            "decisions stay valid. Restore that build of the plugin, or start a new campaign in "
            "another directory.")};
      }
    }
  }
  if (Status s = CreatePlugins(ctx, host); !s.ok()) return PluginError(s);
  json plugins = json::array();
  for (const auto& p : *ids) plugins.push_back(PluginIdentityToJson(p));
  if (Status s = ctx.Append({NewEvent{events::kCampaignResumed, json{{"plugins", plugins}}}}); !s.ok()) {
    return RunError{s};
  }
  return std::nullopt;
}

Status RunStepKind(RunContext& ctx, const StepDecl& step) {
  const StepKind* kind = FindStepKind(step.uses);
  if (kind == nullptr) {
    return Status::InvalidArgument("step '" + step.id + "': unknown kind '" + step.uses + "'");
  }
  return kind->run(ctx, step);
}

// The engine's boundary: an exception from a plugin call or a codec inside a step becomes a Status
// with context, never an abort. The campaign then pauses (recorded) with what to do.
Status RunStep(RunContext& ctx, const StepDecl& step) {
  std::string what;
  try {
    return RunStepKind(ctx, step);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception that is not a std::exception";
  }
  what = ToValidUtf8(what);
  Status error = Status::Internal(
      "step '" + step.id + "' (" + step.uses + ") stopped on an unexpected error: " + what +
      ". Every recorded event is intact and the campaign is paused; fix the cause (a plugin's "
      "error, or input it could not handle) and run the same `attune run --dir " +
      ctx.options->campaign_dir + "` again");
  Status paused = ctx.Append({NewEvent{events::kCampaignPaused,
                                       json{{"reason", error.message()}, {"on_stop", "error"},
                                            {"jobs_in_flight", ctx.state.InFlightJobs().size()}}}});
  (void)paused;  // the error below is what the user must see; a failed append loses nothing
  return error;
}

// Runs every step not yet finished, in order.
Status RunSteps(RunContext& ctx) {
  ATTUNE_RETURN_IF_ERROR(DriveInFlightJobs(ctx));
  for (const auto& step : ctx.workflow.steps) {
    const StepRecord* rec = ctx.state.FindStep(step.id);
    if (rec && rec->finished) continue;
    if (ctx.StopRequested()) return StopStatus();
    if (!rec || !rec->started) {
      if (!step.if_expr.empty()) {
        auto run = EvaluateCondition(step.if_expr, ConditionValues(ctx.state));
        if (!run.ok()) return run.status().WithContext("step '" + step.id + "' if");
        if (!*run) {
          ATTUNE_RETURN_IF_ERROR(FinishStep(ctx, step, "skipped"));
          continue;
        }
      }
      ATTUNE_RETURN_IF_ERROR(ctx.Append({NewEvent{events::kStepStarted,
                                                  json{{"step", step.id}, {"uses", step.uses}}}}));
    }
    ATTUNE_RETURN_IF_ERROR(RunStep(ctx, step));
  }
  return ctx.Append({NewEvent{events::kCampaignFinished,
                              json{{"leader", ctx.state.leader_id}, {"charged_gpu_hours", ctx.state.ledger.charged}}}});
}

int Fail(const RunOptions& o, const RunError& e) {
  // Whatever stopped the campaign (the log, a report, a launcher's files), a full disk or a
  // read-only mount gets the same advice: nothing acknowledged is lost, and what to do.
  *o.err << "attune run: " << log::WithResourceAdvice(e.status, o.campaign_dir).message() << "\n";
  return e.exit_code;
}

}  // namespace

int RunCampaign(const RunOptions& o) {
  RunContext ctx;
  ctx.options = &o;
  ctx.data_dir = DefaultDataDir();
  PluginHost host(PluginHost::DefaultSearchPath(o.plugin_paths));
  if (Status s = host.DiscoverAll(); !s.ok()) return Fail(o, {s, kExitFailed});
  // Everything the user typed is validated before the log is opened or created.
  std::optional<Workflow> given;
  if (!o.workflow_path.empty() && !o.amend_workflow_path.empty()) {
    return Fail(o, {Status::InvalidArgument("pass either WORKFLOW (to start or resume) or "
                                            "--amend-workflow FILE (to amend), not both"),
                    kExitUsage});
  }
  const std::string& file = o.amend_workflow_path.empty() ? o.workflow_path : o.amend_workflow_path;
  if (!file.empty()) {
    auto wf = LoadWorkflowFile(file, SchemaWith(host));
    if (!wf.ok()) return Fail(o, {wf.status(), kExitUsage});
    given = std::move(*wf);
  }
  std::error_code ec;
  if (!std::filesystem::exists(o.campaign_dir, ec) &&
      (!o.amend_workflow_path.empty() || o.workflow_path.empty())) {
    // Nothing to resume or amend, and nothing to start: create nothing.
    return Fail(o, {Status::InvalidArgument("campaign directory " + o.campaign_dir +
                                            " does not exist; start a campaign there with "
                                            "`attune run WORKFLOW --dir " + o.campaign_dir + "`"),
                    kExitUsage});
  }
  auto log = OpenLog(o);
  if (!log.ok()) {
    const bool locked = log.status().code() == StatusCode::kFailedPrecondition ||
                        log.status().code() == StatusCode::kCorruption;
    const bool usage = log.status().code() == StatusCode::kInvalidArgument;  // --campaign-id
    return Fail(o, {log.status(), locked ? kExitLocked : usage ? kExitUsage : kExitFailed});
  }
  ctx.log = std::move(*log);
  const bool fresh = ctx.log->last_seq() == 0;
  if (auto e = fresh ? StartNew(ctx, host, given) : Resume(ctx, host, given)) return Fail(o, *e);
  if (ctx.state.finished) {
    ctx.Say("campaign " + ctx.state.campaign_id + " has already finished; see RESULTS.md and REPORT.md");
    return kExitOk;
  }
  Status s = RunSteps(ctx);
  if (IsStop(s)) {
    const char* how = o.on_stop == OnStop::kCancel ? "cancel" : "leave_running";
    json in_flight = json::array();
    for (const auto* j : ctx.state.InFlightJobs()) in_flight.push_back(j->name);
    CrashPoint("campaign.pausing");
    Status paused = ctx.Append({NewEvent{events::kCampaignPaused,
                                         json{{"reason", "stop requested"}, {"on_stop", how},
                                              {"jobs_in_flight", in_flight.size()},
                                              {"jobs", in_flight}}}});
    if (!paused.ok()) return Fail(o, {paused});
    ctx.Say("paused; resume with the same command (jobs in flight are reconciled)");
    return kExitPaused;
  }
  if (!s.ok()) return Fail(o, {s});
  return kExitOk;
}

}  // namespace attune
