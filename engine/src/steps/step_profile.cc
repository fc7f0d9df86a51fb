// Copyright attune authors.
//
// `profile`: one profiled run of the leader (Stack::ProfileForm: the benchmark form with the
// stack's profiler on, one trace per rank into the job's traces folder), its traces analysed by
// engine/src/profile and the analysis recorded (ProfileAnalyzed) before anything reads it, so that
// a replay never reads the traces again. The launcher brings the traces to this machine first
// (Launcher::FetchFiles; by default they are read where the job wrote them): it is asked only
// while the job has no analysis, so a replay never fetches again either. The agents read the profile's diagnosis with the
// leader's (campaign_view.cc); the report shows the per-rank breakdown.
#include <algorithm>
#include <filesystem>

#include "campaign/events.h"
#include "profile/breakdown_chart.h"
#include "profile/profile.h"
#include "steps/job_driver.h"
#include "steps/step_kinds.h"
#include "steps/steps.h"

namespace attune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool IsTraceFile(const fs::path& p) {
  const std::string name = p.filename().string();
  auto ends = [&](std::string_view tail) {
    return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".json") || ends(".json.gz");
}

// The trace files below `dir`, in name order (a replay reads them in the same order).
std::vector<std::string> TraceFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec) && IsTraceFile(it->path())) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The trace files of a finished profiled job on this machine: what the launcher copied into the
// job's trace folder, or (nothing copied: the folder is shared) what the job wrote there.
Result<std::vector<std::string>> FetchTraces(const RunContext& ctx, const JobRecord& job) {
  ATTUNE_ASSIGN_OR_RETURN(std::vector<std::string> fetched,
                          ctx.launcher->FetchFiles(job.name, job.trace_dir, job.trace_dir));
  if (fetched.empty()) return TraceFiles(job.trace_dir);
  std::vector<std::string> files;
  for (const auto& f : fetched) {
    if (IsTraceFile(f)) files.push_back(f);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// ProfileAnalyzed's data for a finished profiled job: the analysis, or why there is none. An
// unreachable cluster (kUnavailable) is returned, not recorded: the campaign stops and the next
// run asks the launcher again.
Result<json> Analyze(const RunContext& ctx, const JobRecord& job) {
  json d{{"job", job.name}, {"traces", 0}};
  if (job.failure) {
    d["error"] = "the profiled job failed (" + std::string(FailureKindName(job.failure->kind)) +
                 "): " + job.failure->evidence;
    return d;
  }
  auto fetched = FetchTraces(ctx, job);
  if (!fetched.ok() && fetched.status().code() == StatusCode::kUnavailable) return fetched.status();
  if (!fetched.ok()) {
    d["error"] = "the " + ctx.state.launcher_name + " launcher cannot bring the job's traces to this machine: " +
                 fetched.status().message();
    return d;
  }
  const std::vector<std::string>& files = *fetched;
  if (files.empty()) {
    // Named relative to the campaign directory: the report must not depend on where it lies.
    std::error_code ec;
    fs::path shown = fs::relative(job.trace_dir, fs::absolute(ctx.log->dir()), ec);
    if (ec || shown.empty()) shown = fs::path(job.trace_dir).filename();
    d["error"] = "the job wrote no trace into " + shown.string() + " (in the campaign directory): the " +
                 ctx.state.launcher_name +
                 " launcher's jobs must be able to write that folder (on a cluster, a file system shared "
                 "with this machine); simulated jobs write none";
    return d;
  }
  d["traces"] = files.size();
  auto report = profile::AnalyzeTraces(files, profile::AnalyzeOptions{});
  if (!report.ok()) {
    // The analyser names the file; the report must not depend on where the campaign lies.
    std::string message = report.status().message();
    const std::string prefix = fs::absolute(ctx.log->dir()).lexically_normal().string() + "/";
    for (size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix, at)) {
      message.erase(at, prefix.size());
    }
    d["error"] = message;
    return d;
  }
  d["bars"] = profile::BarsToJson(profile::BarsOf(*report));
  json diagnoses = json::array();
  for (const Diagnosis& g : report->diagnoses) diagnoses.push_back(DiagnosisToJson(g));
  d["diagnoses"] = diagnoses;
  return d;
}

const ProfileRecord* AnalysisOf(const CampaignState& s, const std::string& job) {
  for (const auto& p : s.profiles) {
    if (p.job == job) return &p;
  }
  return nullptr;
}

}  // namespace

Status RunProfileStep(RunContext& ctx, const StepDecl& step) {
  ATTUNE_ASSIGN_OR_RETURN(const int infra_retries, StepIntOption(step, "infra_retries"));
  while (true) {
    if (ctx.StopRequested()) return StopStatus();
    const CampaignState& s = ctx.state;
    const std::string who = s.leader_id;
    const JobRecord* last = nullptr;
    int infrastructure_failures = 0;
    bool last_blames_infrastructure = false;
    InfrastructureBlame blame;
    for (const auto& j : s.jobs) {
      if (j.purpose != JobPurpose::kProfile || j.candidate != who || j.step != step.id) continue;
      if (!j.InFlight() && !j.Counts()) continue;  // cancelled by the engine: no result
      last = &j;
      last_blames_infrastructure = j.Counts() && blame(j);
      if (last_blames_infrastructure) ++infrastructure_failures;
    }
    if (last && last->InFlight()) {
      std::error_code ec;
      fs::create_directories(last->trace_dir, ec);  // the profiler makes it too; this is for the job's user
      ATTUNE_RETURN_IF_ERROR(DriveJob(ctx, last->name));
      continue;
    }
    if (last && !AnalysisOf(s, last->name)) {
      ATTUNE_ASSIGN_OR_RETURN(json analysis, Analyze(ctx, *last));
      ATTUNE_RETURN_IF_ERROR(ctx.Append({NewEvent{events::kProfileAnalyzed, std::move(analysis)}}));
      continue;
    }
    if (last) {
      const ProfileRecord& p = *AnalysisOf(s, last->name);
      if (p.error.empty()) {
        return FinishStep(ctx, step, "done");
      }
      const bool retry = last_blames_infrastructure && infrastructure_failures <= infra_retries;
      if (!retry) {
        return FinishStep(ctx, step, last->failure ? "profile_failed" : "no_traces");
      }
    }
    auto name = TryRequestJob(ctx, JobAsk{who, JobPurpose::kProfile, 0, step.id});
    // The stack has no profiled form (Unimplemented), or not for this recipe (a run too short to
    // profile, a form the engine refuses): nothing was recorded, and nothing will change that.
    const StatusCode code = name.ok() ? StatusCode::kOk : name.status().code();
    if (code == StatusCode::kUnimplemented || code == StatusCode::kFailedPrecondition) {
      ctx.Say("profile: " + name.status().message());
      return FinishStep(ctx, step, "unsupported");
    }
    if (!name.ok()) return name.status();
    if (!*name) return FinishStep(ctx, step, "budget_exhausted");
  }
}

}  // namespace attune
