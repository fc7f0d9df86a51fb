// Copyright attune authors.
//
// The campaign event catalog: the type names the engine appends and folds. docs/event-types.md is
// the reference (each type, its version, its fields, who appends it and when). A type's name and
// its fields never change meaning; a changed schema gets a new `v`.
#ifndef ATTUNE_ENGINE_CAMPAIGN_EVENTS_H_
#define ATTUNE_ENGINE_CAMPAIGN_EVENTS_H_

#include <optional>
#include <string_view>

namespace attune::events {

inline constexpr char kCampaignStarted[] = "CampaignStarted";
inline constexpr char kCampaignResumed[] = "CampaignResumed";
inline constexpr char kWorkflowAmended[] = "WorkflowAmended";
inline constexpr char kStepStarted[] = "StepStarted";
inline constexpr char kStepFinished[] = "StepFinished";
inline constexpr char kProposalRecorded[] = "ProposalRecorded";
inline constexpr char kAgentFailed[] = "AgentFailed";
inline constexpr char kGateVerdict[] = "GateVerdict";
inline constexpr char kJobRequested[] = "JobRequested";
inline constexpr char kJobSubmitted[] = "JobSubmitted";
inline constexpr char kJobCancelRequested[] = "JobCancelRequested";
inline constexpr char kJobStopRequested[] = "JobStopRequested";
inline constexpr char kJobFinished[] = "JobFinished";
inline constexpr char kCandidateRanked[] = "CandidateRanked";
inline constexpr char kLeaderChanged[] = "LeaderChanged";
inline constexpr char kPairedLossChecked[] = "PairedLossChecked";
inline constexpr char kSpeedupMeasured[] = "SpeedupMeasured";
inline constexpr char kProfileAnalyzed[] = "ProfileAnalyzed";
inline constexpr char kCampaignPaused[] = "CampaignPaused";
inline constexpr char kCampaignFinished[] = "CampaignFinished";
inline constexpr char kReportWritten[] = "ReportWritten";

// The id under which the baseline recipe appears wherever a candidate id may.
inline constexpr char kBaselineId[] = "baseline";

}  // namespace attune::events

namespace attune {

// Why a job runs (JobRequested.purpose): measuring the baseline, measuring a candidate, a
// paired-loss verification run, or a profiled run (the profile step). The names are what the log
// stores; the fold refuses any other.
enum class JobPurpose { kBaseline, kCandidate, kVerify, kProfile };

constexpr std::string_view JobPurposeName(JobPurpose p) {
  switch (p) {
    case JobPurpose::kBaseline: return "baseline";
    case JobPurpose::kCandidate: return "candidate";
    case JobPurpose::kVerify: return "verify";
    case JobPurpose::kProfile: return "profile";
  }
  return "?";
}

constexpr std::optional<JobPurpose> JobPurposeFromName(std::string_view name) {
  for (JobPurpose p :
       {JobPurpose::kBaseline, JobPurpose::kCandidate, JobPurpose::kVerify, JobPurpose::kProfile}) {
    if (JobPurposeName(p) == name) return p;
  }
  return std::nullopt;
}

// Runs whose throughput ranks the recipe (not verification or profiled runs: a profiler slows the
// steps it records).
constexpr bool IsTuning(JobPurpose p) {
  return p == JobPurpose::kBaseline || p == JobPurpose::kCandidate;
}

}  // namespace attune

#endif  // ATTUNE_ENGINE_CAMPAIGN_EVENTS_H_
