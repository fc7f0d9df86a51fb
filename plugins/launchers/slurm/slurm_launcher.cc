// Copyright attune authors.
#include "slurm_launcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/hash.h"
#include "job_script.h"

namespace attune::slurm {
namespace {

namespace fs = std::filesystem;

std::string FormatTime(double t) { return std::to_string(static_cast<long long>(t)); }

std::optional<double> ModificationTime(const std::string& path) {
  struct stat st {};
  if (path.empty() || stat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<double>(st.st_mtim.tv_sec);
}

// Where a job's files go when the engine gave no directory.
std::string JobDirOf(const JobSpec& spec, const std::string& state_dir) {
  return spec.job_dir.empty() ? (fs::path(state_dir) / spec.name).string() : spec.job_dir;
}

std::string LogPathOf(const JobSpec& spec, const SlurmOptions& o, const std::string& job_dir) {
  if (!o.log_dir.empty()) return (fs::path(o.log_dir) / (spec.name + ".log")).string();
  if (!spec.log_path.empty()) return spec.log_path;
  return (fs::path(job_dir) / (spec.name + ".log")).string();
}

// The status the job's own marker file tells, for a job the controller no longer knows.
JobStatus StatusFromMarker(const JobRecord& record, const Marker& marker) {
  JobStatus s;
  s.name = record.name;
  s.launcher_job_id = record.job_id.empty() ? marker.job_id : record.job_id;
  s.devices = record.devices;
  s.start_time = marker.start_time;
  std::string forgotten = "slurm job " + s.launcher_job_id +
                          " is no longer known to the controller (past MinJobAge, no "
                          "accounting); ";
  if (marker.exit_code) {
    s.state = *marker.exit_code == 0 ? JobState::kSucceeded : JobState::kFailed;
    s.exit_code = marker.exit_code;
    s.end_time = marker.end_time;
    if (*marker.exit_code != 0) {
      s.reason = forgotten + "its batch script exited " + std::to_string(*marker.exit_code);
    }
    return s;
  }
  // Started but never wrote its exit line: Slurm killed the batch script.
  s.state = JobState::kFailed;
  s.end_time = ModificationTime(record.log_path);
  if (!s.end_time) s.end_time = ModificationTime(record.marker_path);
  s.reason = forgotten +
             "it started but left no exit marker: it was stopped by Slurm (time "
             "limit, cancel, node failure or preemption); the exact cause is lost";
  return s;
}

}  // namespace

SlurmLauncher::SlurmLauncher(SlurmOptions options, std::string state_dir)
    : options_(std::move(options)),
      state_dir_(std::move(state_dir)),
      owner_("attune:" +
             Sha256Hex(fs::weakly_canonical(fs::absolute(state_dir_)).string()).substr(0, 12)),
      client_(options_) {
  cluster_.device_type = !options_.device_type.empty() ? options_.device_type
                         : options_.gpus_per_node > 0  ? "gpu"
                                                       : "cpu";
  cluster_.device_memory_gib = options_.device_memory_gib;
  cluster_.peak_tflops = options_.peak_tflops;
  cluster_.compute_capability_major = options_.compute_capability_major;
  cluster_.devices_per_node =
      options_.devices_per_node > 0 ? options_.devices_per_node : options_.gpus_per_node;
  cluster_.max_nodes = options_.max_nodes;
  if (cluster_.devices_per_node > 0 && cluster_.max_nodes > 0) return;
  // Ask the cluster for what the workflow did not say; an unreachable controller leaves 1.
  auto facts = client_.Partition(options_.partition);
  if (facts.ok()) {
    if (cluster_.devices_per_node <= 0) {
      cluster_.devices_per_node =
          facts->gpus_per_node > 0 ? facts->gpus_per_node : facts->cpus_per_node;
    }
    if (cluster_.max_nodes <= 0) cluster_.max_nodes = facts->nodes;
  }
  cluster_.devices_per_node = std::max(1, cluster_.devices_per_node);
  cluster_.max_nodes = std::max(1, cluster_.max_nodes);
}

ClusterInfo SlurmLauncher::Cluster() const { return cluster_; }

double SlurmLauncher::Now() const {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

Result<std::optional<JobRecord>> SlurmLauncher::Locate(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, LoadRecord(state_dir_, name));
  if (record && !record->job_id.empty()) return record;
  return AdoptFromSlurm(name, std::move(record));
}

Result<std::optional<JobRecord>> SlurmLauncher::AdoptFromSlurm(const std::string& name,
                                                               std::optional<JobRecord> record) {
  ATTUNE_ASSIGN_OR_RETURN(std::vector<std::string> ids, client_.FindByName(name, owner_));
  std::optional<SlurmJob> found;
  if (!ids.empty()) {
    ATTUNE_ASSIGN_OR_RETURN(found, client_.ShowJob(ids.back()));
  } else {
    ATTUNE_ASSIGN_OR_RETURN(bool accounting, client_.HasAccounting());
    if (accounting) {
      ATTUNE_ASSIGN_OR_RETURN(found, client_.SacctByName(name, owner_));
    }
  }
  if (!found) return record;
  // A job by this name exists although no record says so: a crash came between sbatch and the
  // record, or the record was lost. Adopt it rather than submit a second one.
  JobRecord adopted = record.value_or(JobRecord{});
  adopted.name = name;
  adopted.job_id = found->job_id;
  if (adopted.log_path.empty()) adopted.log_path = found->std_out;
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, adopted));
  return std::optional<JobRecord>(adopted);
}

Result<JobStatus> SlurmLauncher::StatusOf(JobRecord* record) {
  if (record->final_status) return *record->final_status;
  JobStatus status;
  std::optional<SlurmJob> job;
  if (!record->job_id.empty()) {
    ATTUNE_ASSIGN_OR_RETURN(job, client_.ShowJob(record->job_id));
  }
  if (job) {
    status = ToJobStatus(*job, record->name, record->devices);
  } else {
    ATTUNE_ASSIGN_OR_RETURN(status, StatusAfterPurge(*record));
  }
  // With requeue on, Slurm may revive a NODE_FAIL or PREEMPTED job, so nothing is final.
  if (IsTerminal(status.state) && !options_.requeue) {
    record->final_status = status;
    ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, *record));
  }
  return status;
}

Result<JobStatus> SlurmLauncher::StatusAfterPurge(const JobRecord& record) {
  ATTUNE_ASSIGN_OR_RETURN(bool accounting, client_.HasAccounting());
  if (accounting) {
    ATTUNE_ASSIGN_OR_RETURN(std::optional<SlurmJob> job, client_.SacctByName(record.name, owner_));
    if (job) return ToJobStatus(*job, record.name, record.devices);
  }
  if (auto marker = ReadMarker(record.marker_path)) return StatusFromMarker(record, *marker);
  JobStatus s;
  s.name = record.name;
  s.launcher_job_id = record.job_id;
  s.devices = record.devices;
  if (record.job_id.empty()) {
    // Only an intent: sbatch was about to run, and Slurm has no job by this name.
    s.state = JobState::kUnknown;
    s.reason = "an earlier submission of '" + record.name + "' was interrupted at " +
               FormatTime(record.intent_time) + " before Slurm queued it";
    return s;
  }
  s.state = JobState::kFailed;
  s.reason = "slurm job " + record.job_id +
             " left the queue without starting (cancelled while "
             "pending, or refused at launch) and the controller no longer knows it";
  return s;
}

Result<JobRecord> SlurmLauncher::SubmitNew(const JobSpec& spec, const SlurmOptions& o) {
  JobRecord r;
  r.name = spec.name;
  r.job_dir = JobDirOf(spec, state_dir_);
  r.log_path = LogPathOf(spec, o, r.job_dir);
  r.marker_path = (fs::path(r.job_dir) / (spec.name + ".slurm-marker")).string();
  r.script_path = (fs::path(r.job_dir) / (spec.name + ".sbatch")).string();
  r.devices = spec.devices;
  r.intent_time = Now();
  ATTUNE_ASSIGN_OR_RETURN(std::string script,
                          RenderJobScript(spec, o, ScriptPaths{r.log_path, r.marker_path, owner_}));
  std::error_code ec;
  fs::create_directories(fs::path(r.log_path).parent_path(), ec);
  ATTUNE_RETURN_IF_ERROR(WriteFileAtomically(r.script_path, script));
  fs::remove(r.marker_path, ec);  // a stale marker must not speak for this submission
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, r));  // the intent, before anything is queued
  // The job starts in the engine's working directory (sbatch's default; shared filesystem), where
  // relative entry points such as tools/minigpt/pretrain_gpt.py resolve as they do locally.
  auto id = client_.Sbatch(r.script_path, spec.launch.workdir);
  if (!id.ok()) {
    if (id.status().code() != StatusCode::kUnavailable) return id.status();
    return id.status().WithContext("job '" + spec.name +
                                   "' may or may not be queued; the next "
                                   "Submit or Poll finds it by name");
  }
  r.job_id = *id;
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, r));
  return r;
}

Result<JobStatus> SlurmLauncher::Submit(const JobSpec& spec) {
  ATTUNE_ASSIGN_OR_RETURN(SlurmOptions o, ParseSlurmOptions(spec.options, options_));
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, Locate(spec.name));
  if (record) {
    ATTUNE_ASSIGN_OR_RETURN(JobStatus existing, StatusOf(&*record));
    if (existing.state != JobState::kUnknown) return existing;
  }
  ATTUNE_ASSIGN_OR_RETURN(JobRecord fresh, SubmitNew(spec, o));
  return StatusOf(&fresh);
}

Result<JobStatus> SlurmLauncher::Poll(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, Locate(name));
  if (!record) {
    JobStatus s;
    s.name = name;
    return s;  // kUnknown: never submitted
  }
  return StatusOf(&*record);
}

Result<std::string> SlurmLauncher::ReadLog(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, LoadRecord(state_dir_, name));
  if (!record || record->log_path.empty()) {
    ATTUNE_ASSIGN_OR_RETURN(record, Locate(name));
  }
  if (!record || record->log_path.empty()) return std::string();
  std::ifstream in(record->log_path, std::ios::binary);
  if (!in) return std::string();  // not started yet: Slurm creates the file at start
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status SlurmLauncher::Cancel(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, Locate(name));
  if (!record || record->job_id.empty() || record->final_status) return Status::Ok();
  return client_.Cancel(record->job_id);
}

Result<std::unique_ptr<Plugin>> CreateSlurmLauncher(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(SlurmOptions options, ParseSlurmOptions(context.config));
  std::string state_dir = options.state_dir;
  if (state_dir.empty() && !context.campaign_dir.empty()) {
    state_dir = (fs::path(context.campaign_dir) / "slurm").string();
  }
  if (state_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    state_dir =
        (fs::path(tmp ? tmp : "/tmp") / ("attune-slurm-" + std::to_string(getuid()))).string();
  }
  return std::unique_ptr<Plugin>(new SlurmLauncher(std::move(options), std::move(state_dir)));
}

}  // namespace attune::slurm
