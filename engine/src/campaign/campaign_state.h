// Copyright attune authors.
//
// CampaignState: the state of one campaign as a pure fold of its event log. No I/O, no clock, no
// plugin calls: the same events always give the same state, which is what lets a restarted engine
// carry on exactly where the last one stopped. docs/event-types.md lists the events folded here.
//
// Every decision the runner makes (which job next, who leads, whether a job fits the budget) is a
// function of this state alone.
//
// Thread-safety: a value; not synchronized.
#ifndef ATTUNE_ENGINE_CAMPAIGN_CAMPAIGN_STATE_H_
#define ATTUNE_ENGINE_CAMPAIGN_CAMPAIGN_STATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/agent.h"
#include "attune/cluster.h"
#include "attune/launcher.h"
#include "attune/metrics.h"
#include "attune/recipe.h"
#include "attune/status.h"
#include "campaign/events.h"
#include "log/event_log.h"

namespace attune {

// The workflow settings a decision depends on, copied into CampaignStarted so that the fold does
// not depend on the workflow's JSON form.
// A derived time limit is never shorter than this (start-up alone can take a minute).
inline constexpr double kMinDerivedTimeLimitS = 120;

struct CampaignSettings {
  double budget_gpu_hours = 0;
  int max_candidates = 50;
  double job_time_limit_s = 3600;
  double time_limit_factor = 0;      // 0: fixed limits (also for campaigns recorded before it)
  double noise_band = 0.03;
  int repeats = 1;                   // runs per candidate
  int confirm = 0;                   // extra runs of a would-be leader (workflow measure.confirm)
  int rivals = 0;                    // extra runs of the leader's closest rivals (measure.rivals)
  double loss_rel_tolerance = 0.02;
  int paired_losses = 5;
  // The adaptive stop (workflow measure.early_stop). Off in logs recorded before it existed. The
  // fold never reads these: a stop is decided by the job driver and recorded in JobStopRequested.
  bool early_stop = false;
  int early_stop_min_iterations = 20;
  double early_stop_relative_error = 0;  // 0: noise_band ÷ 6
  double early_stop_check_every_s = 30;
  // The relative error a stop waits for.
  double EarlyStopRelativeError() const {
    return early_stop_relative_error > 0 ? early_stop_relative_error : noise_band / 6;
  }
};
nlohmann::json CampaignSettingsToJson(const CampaignSettings& s);
CampaignSettings CampaignSettingsFromJson(const nlohmann::json& j);

// A plugin as loaded when the campaign started (or resumed).
struct PluginIdentity {
  std::string kind;  // "stack", "launcher", "agent"
  std::string name;
  std::string version;
  std::string sha256;
  friend bool operator==(const PluginIdentity&, const PluginIdentity&) = default;
};
nlohmann::json PluginIdentityToJson(const PluginIdentity& p);
PluginIdentity PluginIdentityFromJson(const nlohmann::json& j);

struct StepRecord {
  std::string id;
  std::string uses;
  bool started = false;
  bool finished = false;
  std::string outcome;  // "done", "skipped", "budget_exhausted", "agent_done", ...
  std::string reason;   // the step's own words for the outcome ("" when it has none)
};

// One job, from JobRequested to JobFinished.
struct JobRecord {
  std::string name;
  std::string candidate;  // "baseline" or a candidate id
  JobPurpose purpose = JobPurpose::kCandidate;
  std::string step;
  int attempt = 1;
  int pair = 0;           // verify pairs: 1-based pair index; 0 otherwise
  Recipe recipe;                    // the candidate's recipe (compared, shipped)
  std::vector<Change> benchmark_changes;  // what the stack's benchmark form changed to run it
  Recipe run_recipe;                // recipe with benchmark_changes applied: what the job runs
  int nodes = 1;
  int devices = 1;
  double time_limit_s = 0;
  double reserved_gpu_hours = 0;
  bool submitted = false;
  std::string launcher_job_id;
  bool finished = false;
  JobState state = JobState::kUnknown;
  nlohmann::json status;  // JobStatusToJson at finish
  double charged_gpu_hours = 0;
  double charged_total_after = 0;  // the ledger's charged total right after this job (plots)
  std::optional<Measurement> measurement;
  std::optional<Failure> failure;
  std::vector<Diagnosis> diagnosis;
  std::string log_path;
  std::string trace_dir;  // profiled jobs: where the job writes its traces (JobRequested.trace_dir)
  bool cancel_requested = false;     // JobCancelRequested: the engine asked the launcher to stop it
  bool cancelled_by_engine = false;  // stopped by `--on-stop cancel`: does not count as a result
  // JobStopRequested: the adaptive stop. The job is judged on the first `stop_log_bytes` bytes of
  // its log (what the stop was decided on) as a run that ended well, however the launcher ends it.
  bool stop_requested = false;
  int64_t stop_log_bytes = 0;
  nlohmann::json stop;               // the JobStopRequested data
  bool stopped_early = false;        // JobFinished.stopped_early
  // JobFinished.measured_at_time_limit: its time limit ended the job after its log had pinned the
  // step time down; measured from the complete lines it logged.
  bool measured_at_time_limit = false;

  bool InFlight() const { return !finished; }
  // A finished job whose result counts for its candidate (engine cancellations do not).
  bool Counts() const { return finished && !cancelled_by_engine; }
  // It failed for the infrastructure (triage's flag: NCCL, a hang, a lost node), not its recipe:
  // running it again may pass.
  bool FailedForInfrastructure() const { return failure && failure->infrastructure; }
};

// Whether one recipe's counted runs, asked in the order they ran, failed for the infrastructure:
// as triage flagged them, except that a silent hang (support::kSilentHangSignature: a stuck rank
// or node, or the recipe's own mismatched collectives) is the infrastructure's only the first
// time; a second one is the recipe's. Every step that retries runs decides with it, from the
// recorded runs alone, so a replay decides the same.
class InfrastructureBlame {
 public:
  bool operator()(const JobRecord& run);

 private:
  int silent_hangs_ = 0;
};

struct CandidateRecordState {
  std::string id;      // "c001"
  int index = 0;       // 1-based proposal order
  std::string base_id;
  std::vector<Change> changes;
  std::string lever_id;
  std::string rationale;
  nlohmann::json meta = nlohmann::json::object();
  std::optional<Recipe> recipe;  // absent when the changes did not apply to the base
  std::string apply_error;       // why they did not
  bool gated = false;
  bool gate_pass = false;
  std::string rule_id;
  std::string gate_reason;
  double loss_rel_tolerance = 0;
  std::vector<std::string> jobs;  // names, in request order
  bool ranked = false;
  Outcome outcome = Outcome::kPending;
  std::optional<double> speedup_vs_baseline;
  std::optional<double> speedup_vs_leader;
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<bool> paired_loss_pass;
  // How many of its jobs had finished (and counted) when it was last ranked: a candidate run
  // again after its ranking (measure.rivals) is ranked again once that run has finished.
  int ranked_on_jobs = 0;
};

struct LedgerState {
  double total = 0;
  double charged = 0;
  double reserved = 0;
  double Left() const { return total - charged - reserved; }
  // True when a reservation of `gpu_hours` fits what remains (with a rounding allowance).
  bool Fits(double gpu_hours) const { return gpu_hours <= Left() + 1e-9; }
};

struct LeaderChange {
  std::string from;
  std::string to;
  std::string reason;  // "faster", "paired_loss_mismatch"
};

struct SpeedupResult {
  std::string leader;
  std::vector<double> ratios;  // leader ÷ baseline per pair
  double median = 0;
  double min = 0;
  double max = 0;
};

struct PairedLossResult {
  std::string candidate;
  bool pass = false;
  double tolerance = 0;
  int compared = 0;
  double max_rel_diff = 0;
  std::string reason;
};
// A profiled job's analysis (ProfileAnalyzed): what the profile step read from its traces.
struct ProfileRecord {
  std::string job;
  std::string candidate;  // whose recipe the job ran ("baseline" or cNNN)
  int traces = 0;         // trace files read
  nlohmann::json bars = nlohmann::json::array();  // per-rank breakdown (profile::BarsToJson)
  std::vector<Diagnosis> diagnoses;               // strongest first
  std::string error;      // why there is no analysis (no trace written, unreadable); "" otherwise
};

class CampaignState {
 public:
  // Folds one event. Unknown types and malformed data are kCorruption naming the seq.
  Status Apply(const EventRecord& event);
  // Folds a whole log from an empty state.
  static Result<CampaignState> Fold(const std::vector<EventRecord>& events);

  // --- what was recorded -------------------------------------------------------------------
  bool started = false;
  std::string campaign_id;
  nlohmann::json workflow_json;
  std::string workflow_hash;
  uint64_t seed = 0;
  std::vector<PluginIdentity> plugins;
  ClusterInfo cluster;
  CampaignSettings settings;
  Recipe baseline;
  std::string stack_name, launcher_name, agent_name;
  std::vector<StepRecord> steps;
  std::vector<CandidateRecordState> candidates;
  std::vector<JobRecord> jobs;  // in request order
  LedgerState ledger;
  std::string leader_id = "baseline";
  std::vector<LeaderChange> leader_changes;
  std::vector<PairedLossResult> paired_loss_checks;
  std::optional<SpeedupResult> speedup;
  std::vector<ProfileRecord> profiles;  // in the order analysed
  int agent_failures = 0;              // in total
  int consecutive_agent_failures = 0;  // since the last recorded proposal
  std::vector<std::string> agent_errors;
  bool agent_done = false;
  std::string agent_done_rationale;  // the agent's words when it said it was done
  // leader_changes.size() when the agent said it was done: its "done" was about that leader; a
  // later leader (a rival re-measured, measure.rivals) is one it has not seen.
  size_t agent_done_leader_changes = 0;
  bool paused = false;
  std::string pause_reason;
  bool finished = false;
  std::map<std::string, std::string> report_files;  // path -> sha256
  uint64_t last_seq = 0;

  // --- derived queries ---------------------------------------------------------------------
  const StepRecord* FindStep(const std::string& id) const;
  const JobRecord* FindJob(const std::string& name) const;
  // Jobs of `c` that finished and count for it (a failure included; an engine cancellation not).
  int CountedJobsOf(const CandidateRecordState& c) const;
  const CandidateRecordState* FindCandidate(const std::string& id) const;
  std::vector<const JobRecord*> InFlightJobs() const;
  // The recipe of "baseline" or a candidate; nullptr when unknown.
  const Recipe* RecipeOf(const std::string& id) const;
  // Successful measurements of `id` from jobs of the given purpose (none: the tuning runs, i.e.
  // baseline or candidate).
  std::vector<Measurement> MeasurementsOf(const std::string& id,
                                          std::optional<JobPurpose> purpose = std::nullopt) const;
  // The representative measurement (the run with the median throughput, lower median).
  std::optional<Measurement> MeasurementOf(const std::string& id) const;
  // The diagnosis recorded with the representative run of `id`.
  std::vector<Diagnosis> DiagnosisOf(const std::string& id) const;
  // The diagnosis of the last analysed profiled run of `id` (empty without one); each evidence
  // starts with "profile: ".
  std::vector<Diagnosis> ProfileDiagnosisOf(const std::string& id) const;
  // Jobs (counting ones) of `id` for `purpose`.
  std::vector<const JobRecord*> JobsOf(const std::string& id, JobPurpose purpose) const;
  // The previous leader before the current one ("baseline" when none).
  std::string PreviousLeader() const;
  int FailedJobs() const;
  // Next free attempt number for the jobs of `candidate` with this purpose and pair.
  int NextAttempt(const std::string& candidate, JobPurpose purpose, int pair) const;
  // Cost to reserve for one job of `recipe`: devices × job time limit, in hours.
  // The time limit of the next job: the workflow's job_time_limit_s, or, once the baseline has a
  // measured run and time_limit_factor > 0, min(job_time_limit_s, max(kMinDerivedTimeLimitS,
  // factor × the baseline's longest measured run, profiled runs aside)). From recorded launcher
  // times: a replay derives the same limit.
  double TimeLimitForNextJob() const;
  double ReservationFor(int devices) const;
  // "c001", "c002", ... for a 1-based index.
  static std::string CandidateId(int index);

 private:
  Status ApplyStarted(const nlohmann::json& d);
  Status ApplyAmended(const nlohmann::json& d);
  Status ApplyProposal(const nlohmann::json& d);
  Status ApplyGate(const nlohmann::json& d);
  Status ApplyRequested(const nlohmann::json& d);
  Status ApplySubmitted(const nlohmann::json& d);
  Status ApplyCancelRequested(const nlohmann::json& d);
  Status ApplyStopRequested(const nlohmann::json& d);
  Status ApplyFinished(const nlohmann::json& d);
  Status ApplyRanked(const nlohmann::json& d);
  Status ApplyLeader(const nlohmann::json& d);
  Status ApplyPairedLoss(const nlohmann::json& d);
  Status ApplySpeedup(const nlohmann::json& d);
  Status ApplyProfile(const nlohmann::json& d);
  Status ApplyStep(const std::string& type, const nlohmann::json& d);
  JobRecord* MutableJob(const std::string& name);
  CandidateRecordState* MutableCandidate(const std::string& id);
};

}  // namespace attune

#endif  // ATTUNE_ENGINE_CAMPAIGN_CAMPAIGN_STATE_H_
