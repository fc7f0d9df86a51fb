// The fold: one Apply per event type. Data fields are read strictly where a missing field would
// change a decision, and leniently (with defaults) where they are informative only.
#include "campaign/campaign_state.h"

#include <algorithm>

#include "attune/support/log_triage.h"
#include "campaign/events.h"
#include "profile/breakdown_chart.h"

namespace attune {
namespace {

using nlohmann::json;

Status Malformed(const std::string& type, const std::string& what) {
  return Status::Corruption(type + ": " + what);
}

Result<Recipe> RecipeField(const json& d, const char* name) {
  if (!d.contains(name)) return Status::Corruption(std::string("missing field '") + name + "'");
  auto r = RecipeFromJson(d.at(name));
  if (!r.ok()) return r.status().WithContext(name);
  return r;
}

}  // namespace

json CampaignSettingsToJson(const CampaignSettings& s) {
  json j{{"budget_gpu_hours", s.budget_gpu_hours},
              {"max_candidates", s.max_candidates},
              {"job_time_limit_s", s.job_time_limit_s},
              {"time_limit_factor", s.time_limit_factor},
              {"noise_band", s.noise_band},
              {"repeats", s.repeats},
              {"loss_rel_tolerance", s.loss_rel_tolerance},
              {"paired_losses", s.paired_losses},
              {"early_stop", s.early_stop},
              {"early_stop_min_iterations", s.early_stop_min_iterations},
              {"early_stop_relative_error", s.early_stop_relative_error},
              {"early_stop_check_every_s", s.early_stop_check_every_s}};
  if (s.confirm > 0) j["confirm"] = s.confirm;  // absent (0) in logs recorded before it existed
  if (s.rivals > 0) j["rivals"] = s.rivals;    // likewise
  return j;
}

CampaignSettings CampaignSettingsFromJson(const json& j) {
  CampaignSettings s;
  s.budget_gpu_hours = j.value("budget_gpu_hours", 0.0);
  s.max_candidates = j.value("max_candidates", 50);
  s.job_time_limit_s = j.value("job_time_limit_s", 3600.0);
  s.time_limit_factor = j.value("time_limit_factor", 0.0);
  s.noise_band = j.value("noise_band", 0.03);
  s.repeats = std::max(1, j.value("repeats", 1));
  s.confirm = std::max(0, j.value("confirm", 0));
  s.rivals = std::max(0, j.value("rivals", 0));
  s.loss_rel_tolerance = j.value("loss_rel_tolerance", 0.02);
  s.paired_losses = j.value("paired_losses", 5);
  s.early_stop = j.value("early_stop", false);
  s.early_stop_min_iterations = j.value("early_stop_min_iterations", 20);
  s.early_stop_relative_error = j.value("early_stop_relative_error", 0.0);
  s.early_stop_check_every_s = j.value("early_stop_check_every_s", 30.0);
  return s;
}

json PluginIdentityToJson(const PluginIdentity& p) {
  return json{{"kind", p.kind}, {"name", p.name}, {"version", p.version}, {"sha256", p.sha256}};
}

PluginIdentity PluginIdentityFromJson(const json& j) {
  return PluginIdentity{j.value("kind", ""), j.value("name", ""), j.value("version", ""),
                        j.value("sha256", "")};
}

Result<CampaignState> CampaignState::Fold(const std::vector<EventRecord>& events) {
  CampaignState state;
  for (const auto& e : events) ATTUNE_RETURN_IF_ERROR(state.Apply(e));
  return state;
}

Status CampaignState::Apply(const EventRecord& e) {
  if (!started && e.type != events::kCampaignStarted) {
    return Status::Corruption("event " + std::to_string(e.seq) + " (" + e.type +
                              ") comes before CampaignStarted: the log does not start a campaign");
  }
  Status s;
  try {
    const json& d = e.data;
    const std::string& t = e.type;
    if (t == events::kCampaignStarted) s = ApplyStarted(d);
    else if (t == events::kCampaignResumed) {
      paused = false;
      plugins.clear();
      for (const auto& p : d.value("plugins", json::array())) plugins.push_back(PluginIdentityFromJson(p));
    } else if (t == events::kWorkflowAmended) s = ApplyAmended(d);
    else if (t == events::kStepStarted || t == events::kStepFinished) s = ApplyStep(t, d);
    else if (t == events::kProposalRecorded) s = ApplyProposal(d);
    else if (t == events::kAgentFailed) {
      ++agent_failures;
      ++consecutive_agent_failures;
      agent_errors.push_back(d.value("error", ""));
    } else if (t == events::kGateVerdict) s = ApplyGate(d);
    else if (t == events::kJobRequested) s = ApplyRequested(d);
    else if (t == events::kJobSubmitted) s = ApplySubmitted(d);
    else if (t == events::kJobCancelRequested) s = ApplyCancelRequested(d);
    else if (t == events::kJobStopRequested) s = ApplyStopRequested(d);
    else if (t == events::kJobFinished) s = ApplyFinished(d);
    else if (t == events::kCandidateRanked) s = ApplyRanked(d);
    else if (t == events::kLeaderChanged) s = ApplyLeader(d);
    else if (t == events::kPairedLossChecked) s = ApplyPairedLoss(d);
    else if (t == events::kSpeedupMeasured) s = ApplySpeedup(d);
    else if (t == events::kProfileAnalyzed) s = ApplyProfile(d);
    else if (t == events::kCampaignPaused) {
      paused = true;
      pause_reason = d.value("reason", "");
    } else if (t == events::kCampaignFinished) finished = true;
    else if (t == events::kReportWritten) {
      const json files = d.value("files", json::object());
      for (const auto& [path, sha] : files.items()) report_files[path] = sha.get<std::string>();
    } else {
      s = Status::Corruption("unknown event type '" + t + "' v" + std::to_string(e.v) +
                             ": this log was written by a newer attune; upgrade to read it");
    }
  } catch (const json::exception& ex) {
    s = Status::Corruption(std::string("malformed data: ") + ex.what());
  }
  if (!s.ok()) return s.WithContext("event " + std::to_string(e.seq) + " (" + e.type + ")");
  last_seq = e.seq;
  return Status::Ok();
}

Status CampaignState::ApplyStarted(const json& d) {
  if (started) return Malformed(events::kCampaignStarted, "a second CampaignStarted");
  started = true;
  campaign_id = d.at("campaign_id").get<std::string>();
  workflow_json = d.value("workflow", json::object());
  workflow_hash = d.value("workflow_hash", "");
  seed = d.value("seed", uint64_t{0});
  for (const auto& p : d.value("plugins", json::array())) plugins.push_back(PluginIdentityFromJson(p));
  cluster = ClusterInfoFromJson(d.value("cluster", json::object()));
  settings = CampaignSettingsFromJson(d.at("settings"));
  ATTUNE_ASSIGN_OR_RETURN(baseline, RecipeField(d, "baseline_recipe"));
  stack_name = d.value("stack", "");
  launcher_name = d.value("launcher", "");
  agent_name = d.value("agent", "");
  for (const auto& s : d.value("steps", json::array())) {
    steps.push_back(StepRecord{s.at("id").get<std::string>(), s.value("uses", ""), false, false, "", ""});
  }
  ledger.total = settings.budget_gpu_hours;
  return Status::Ok();
}

// An explicit amendment (`attune run --amend-workflow`): the workflow, its settings and the steps
// not yet started change; what steps already did is kept.
Status CampaignState::ApplyAmended(const json& d) {
  workflow_json = d.at("workflow");
  workflow_hash = d.value("workflow_hash", "");
  settings = CampaignSettingsFromJson(d.at("settings"));
  ledger.total = settings.budget_gpu_hours;
  std::vector<StepRecord> next;
  for (const auto& s : d.at("steps")) {
    const std::string id = s.at("id").get<std::string>();
    auto old = std::find_if(steps.begin(), steps.end(), [&](const StepRecord& r) { return r.id == id; });
    if (old != steps.end()) {
      next.push_back(*old);
      next.back().uses = s.value("uses", old->uses);
    } else {
      next.push_back(StepRecord{id, s.value("uses", ""), false, false, "", ""});
    }
  }
  for (const StepRecord& r : steps) {
    const bool kept = std::any_of(next.begin(), next.end(), [&](const StepRecord& n) { return n.id == r.id; });
    if (!kept && (r.started || r.finished)) {
      return Malformed(events::kWorkflowAmended, "drops step '" + r.id + "', which has started");
    }
  }
  steps = std::move(next);
  return Status::Ok();
}

Status CampaignState::ApplyStep(const std::string& type, const json& d) {
  const std::string id = d.at("step").get<std::string>();
  auto it = std::find_if(steps.begin(), steps.end(), [&](const StepRecord& s) { return s.id == id; });
  if (it == steps.end()) return Malformed(type, "unknown step '" + id + "'");
  if (type == events::kStepStarted) {
    it->started = true;
  } else {
    it->started = true;
    it->finished = true;
    it->outcome = d.value("outcome", "done");
    it->reason = d.value("reason", "");
  }
  return Status::Ok();
}

Status CampaignState::ApplyProposal(const json& d) {
  consecutive_agent_failures = 0;
  if (d.value("done", false)) {
    agent_done = true;
    agent_done_rationale = d.value("rationale", "");
    agent_done_leader_changes = leader_changes.size();
    return Status::Ok();
  }
  CandidateRecordState c;
  c.id = d.at("candidate").get<std::string>();
  if (FindCandidate(c.id)) return Malformed(events::kProposalRecorded, "duplicate candidate " + c.id);
  c.index = d.at("index").get<int>();
  c.base_id = d.at("base").get<std::string>();
  auto changes = ChangesFromJson(d.at("changes"));
  if (!changes.ok()) return changes.status();
  c.changes = *changes;
  c.lever_id = d.value("lever_id", "");
  c.rationale = d.value("rationale", "");
  c.meta = d.value("meta", json::object());
  c.apply_error = d.value("apply_error", "");
  if (d.contains("recipe") && !d.at("recipe").is_null()) {
    ATTUNE_ASSIGN_OR_RETURN(c.recipe, RecipeField(d, "recipe"));
  }
  candidates.push_back(std::move(c));
  return Status::Ok();
}

Status CampaignState::ApplyGate(const json& d) {
  auto* c = MutableCandidate(d.at("candidate").get<std::string>());
  if (!c) return Malformed(events::kGateVerdict, "verdict for an unknown candidate");
  c->gated = true;
  c->gate_pass = d.at("pass").get<bool>();
  c->rule_id = d.value("rule_id", "");
  c->gate_reason = d.value("reason", "");
  c->loss_rel_tolerance = d.value("tolerance", 0.0);
  return Status::Ok();
}

Status CampaignState::ApplyRequested(const json& d) {
  JobRecord j;
  j.name = d.at("job").get<std::string>();
  if (FindJob(j.name)) return Malformed(events::kJobRequested, "job " + j.name + " requested twice");
  j.candidate = d.at("candidate").get<std::string>();
  const auto purpose_name = d.at("purpose").get<std::string>();
  const std::optional<JobPurpose> purpose = JobPurposeFromName(purpose_name);
  if (!purpose) {
    return Malformed(events::kJobRequested, "job " + j.name + " has the unknown purpose '" +
                                                purpose_name + "' (baseline, candidate or verify)");
  }
  j.purpose = *purpose;
  j.step = d.value("step", "");
  j.attempt = d.value("attempt", 1);
  j.pair = d.value("pair", 0);
  ATTUNE_ASSIGN_OR_RETURN(j.recipe, RecipeField(d, "recipe"));
  j.run_recipe = j.recipe;
  if (d.contains("benchmark_changes")) {  // absent in logs written before benchmark forms
    auto changes = ChangesFromJson(d.at("benchmark_changes"));
    if (!changes.ok()) return Malformed(events::kJobRequested, "benchmark_changes: " + changes.status().message());
    j.benchmark_changes = std::move(changes).value();
    if (Status s = ApplyChanges(&j.run_recipe, j.benchmark_changes); !s.ok()) {
      return Malformed(events::kJobRequested, "benchmark_changes of " + j.name + ": " + s.message());
    }
  }
  j.nodes = d.value("nodes", 1);
  j.devices = d.at("devices").get<int>();
  j.time_limit_s = d.at("time_limit_s").get<double>();
  j.reserved_gpu_hours = d.at("reserved_gpu_hours").get<double>();
  j.trace_dir = d.value("trace_dir", "");
  ledger.reserved += j.reserved_gpu_hours;
  if (auto* c = MutableCandidate(j.candidate)) c->jobs.push_back(j.name);
  jobs.push_back(std::move(j));
  return Status::Ok();
}

Status CampaignState::ApplySubmitted(const json& d) {
  auto* j = MutableJob(d.at("job").get<std::string>());
  if (!j) return Malformed(events::kJobSubmitted, "submission of an unrequested job");
  j->submitted = true;
  j->launcher_job_id = d.value("launcher_job_id", "");
  return Status::Ok();
}

Status CampaignState::ApplyCancelRequested(const json& d) {
  auto* j = MutableJob(d.at("job").get<std::string>());
  if (!j) return Malformed(events::kJobCancelRequested, "cancellation of an unrequested job");
  if (j->finished) return Malformed(events::kJobCancelRequested, "cancellation of finished job " + j->name);
  j->cancel_requested = true;
  return Status::Ok();
}

Status CampaignState::ApplyStopRequested(const json& d) {
  auto* j = MutableJob(d.at("job").get<std::string>());
  if (!j) return Malformed(events::kJobStopRequested, "stop of an unrequested job");
  if (j->finished) return Malformed(events::kJobStopRequested, "stop of finished job " + j->name);
  if (j->stop_requested) return Malformed(events::kJobStopRequested, "job " + j->name + " stopped twice");
  if (j->cancel_requested) {
    return Malformed(events::kJobStopRequested, "stop of job " + j->name + ", whose cancellation was requested");
  }
  const int64_t bytes = d.at("log_bytes").get<int64_t>();
  if (bytes <= 0) return Malformed(events::kJobStopRequested, "log_bytes must be > 0");
  j->stop_requested = true;
  j->stop_log_bytes = bytes;
  j->stop = d;
  return Status::Ok();
}

Status CampaignState::ApplyFinished(const json& d) {
  auto* j = MutableJob(d.at("job").get<std::string>());
  if (!j) return Malformed(events::kJobFinished, "finish of an unrequested job");
  if (j->finished) return Malformed(events::kJobFinished, "job " + j->name + " finished twice");
  if (d.value("stopped_early", false) && !j->stop_requested) {
    return Malformed(events::kJobFinished, "job " + j->name + " stopped early without a JobStopRequested");
  }
  const bool at_limit = d.value("measured_at_time_limit", false);
  if (at_limit && (d.value("stopped_early", false) || !d.contains("measurement") || d.at("measurement").is_null())) {
    return Malformed(events::kJobFinished, "job " + j->name +
                                               " measured at its time limit without a measurement, or also "
                                               "stopped early");
  }
  j->finished = true;
  j->status = d.value("status", json::object());
  j->state = JobStateFromName(j->status.value("state", "unknown")).value_or(JobState::kUnknown);
  j->charged_gpu_hours = d.at("charged_gpu_hours").get<double>();
  if (d.contains("measurement") && !d.at("measurement").is_null()) {
    j->measurement = MeasurementFromJson(d.at("measurement"));
  }
  if (d.contains("failure") && !d.at("failure").is_null()) {
    j->failure = FailureFromJson(d.at("failure"));
  }
  for (const auto& g : d.value("diagnosis", json::array())) j->diagnosis.push_back(DiagnosisFromJson(g));
  j->log_path = d.value("log_path", "");
  // A job the engine asked to stop is the engine's doing even when the stop was confirmed only
  // after a restart (the launcher then reports a plain cancelled or killed job).
  j->cancelled_by_engine = d.value("cancelled_by_engine", false) || j->cancel_requested;
  j->stopped_early = d.value("stopped_early", false);
  j->measured_at_time_limit = at_limit;
  // Charge and release in one step: the ledger never shows a job both reserved and charged.
  ledger.reserved -= j->reserved_gpu_hours;
  if (ledger.reserved < 1e-12) ledger.reserved = std::max(0.0, ledger.reserved);
  ledger.charged += j->charged_gpu_hours;
  j->charged_total_after = ledger.charged;
  return Status::Ok();
}

Status CampaignState::ApplyRanked(const json& d) {
  auto* c = MutableCandidate(d.at("candidate").get<std::string>());
  if (!c) return Malformed(events::kCandidateRanked, "ranking of an unknown candidate");
  c->ranked = true;
  c->ranked_on_jobs = CountedJobsOf(*c);
  const std::string name = d.at("outcome").get<std::string>();
  std::optional<Outcome> outcome = OutcomeFromName(name);
  if (!outcome) return Malformed(events::kCandidateRanked, "unknown outcome '" + name + "'");
  c->outcome = *outcome;
  auto opt = [&](const char* k) -> std::optional<double> {
    if (!d.contains(k) || d.at(k).is_null()) return std::nullopt;
    return d.at(k).get<double>();
  };
  c->speedup_vs_baseline = opt("speedup_vs_baseline");
  c->speedup_vs_leader = opt("speedup_vs_leader");
  c->tokens_per_s_per_gpu = opt("tokens_per_s_per_gpu");
  return Status::Ok();
}

Status CampaignState::ApplyLeader(const json& d) {
  LeaderChange change{d.at("from").get<std::string>(), d.at("to").get<std::string>(),
                      d.value("reason", "")};
  if (change.from != leader_id) {
    return Malformed(events::kLeaderChanged, "from '" + change.from + "' but the leader is '" +
                                                 leader_id + "'");
  }
  leader_id = change.to;
  leader_changes.push_back(std::move(change));
  return Status::Ok();
}

Status CampaignState::ApplyPairedLoss(const json& d) {
  PairedLossResult r;
  r.candidate = d.at("candidate").get<std::string>();
  r.pass = d.at("pass").get<bool>();
  r.tolerance = d.value("tolerance", 0.0);
  r.compared = d.value("compared", 0);
  r.max_rel_diff = d.value("max_rel_diff", 0.0);
  r.reason = d.value("reason", "");
  if (auto* c = MutableCandidate(r.candidate)) {
    c->paired_loss_pass = r.pass;
    if (!r.pass) c->outcome = Outcome::kPairedLossMismatch;
  }
  paired_loss_checks.push_back(std::move(r));
  return Status::Ok();
}

Status CampaignState::ApplySpeedup(const json& d) {
  SpeedupResult r;
  r.leader = d.at("leader").get<std::string>();
  r.ratios = d.at("ratios").get<std::vector<double>>();
  r.median = d.at("median").get<double>();
  r.min = d.value("min", r.median);
  r.max = d.value("max", r.median);
  speedup = std::move(r);
  return Status::Ok();
}

JobRecord* CampaignState::MutableJob(const std::string& name) {
  return const_cast<JobRecord*>(FindJob(name));
}

CandidateRecordState* CampaignState::MutableCandidate(const std::string& id) {
  return const_cast<CandidateRecordState*>(FindCandidate(id));
}

Status CampaignState::ApplyProfile(const json& d) {
  ProfileRecord p;
  p.job = d.at("job").get<std::string>();
  const JobRecord* job = FindJob(p.job);
  if (!job || job->purpose != JobPurpose::kProfile) {
    return Malformed(events::kProfileAnalyzed, "analysis of " + p.job + ", which is not a profiled job");
  }
  for (const auto& other : profiles) {
    if (other.job == p.job) return Malformed(events::kProfileAnalyzed, p.job + " analysed twice");
  }
  p.candidate = job->candidate;
  p.traces = d.value("traces", 0);
  // Read as the report reads them (a wrong type throws, reported as Corruption), kept normalised.
  p.bars = profile::BarsToJson(profile::BarsFromJson(d.value("bars", json::array())));
  for (const auto& g : d.value("diagnoses", json::array())) p.diagnoses.push_back(DiagnosisFromJson(g));
  p.error = d.value("error", "");
  profiles.push_back(std::move(p));
  return Status::Ok();
}

bool InfrastructureBlame::operator()(const JobRecord& run) {
  if (!run.FailedForInfrastructure()) return false;
  if (run.failure->signature != support::kSilentHangSignature) return true;
  return silent_hangs_++ == 0;
}

}  // namespace attune
