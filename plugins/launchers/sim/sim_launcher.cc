#include "sim_launcher.h"

#include "attune/support/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "job_sim.h"
#include "predict.h"

namespace attune::sim {
namespace {

namespace fs = std::filesystem;

bool ValidJobName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Writes `data` to `path` so that readers see the old or the new content, never a torn file,
// whatever moment the process dies at. No fsync: everything here can be rebuilt after a power
// loss (a lost record re-simulates to the same bytes; the clock is recovered from the records).
Status WriteAtomically(const std::string& path, const std::string& data) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  Status written = support::WriteFileAtomically(path, data, support::Durability::kCrashOnly);
  if (written.ok()) return written;
  return Status(written.code(), "sim launcher: " + written.message());
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("sim launcher: cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

SimLauncher::SimLauncher(ClusterSpec cluster, std::string state_dir, ModelFactors factors)
    : cluster_(std::move(cluster)), state_dir_(std::move(state_dir)), factors_(factors) {
  if (state_dir_.empty()) return;
  auto text = ReadFile(state_dir_ + "/clock");
  if (text.ok()) {
    try {
      clock_ = std::stod(*text);
    } catch (...) {
      clock_ = 0;  // unreadable: recovered from the records below
    }
  }
  RecoverClockFromRecords();
}

void SimLauncher::RecoverClockFromRecords() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(state_dir_ + "/jobs", ec)) {
    if (entry.path().extension() != ".json") continue;
    auto record = Find(entry.path().stem().string());
    if (record.ok() && *record && (*record)->polled) {
      clock_ = std::max(clock_, (*record)->status.end_time.value_or(0));
    }
  }
}

Result<std::unique_ptr<SimLauncher>> SimLauncher::Create(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(ClusterSpec cluster, ParseClusterConfig(context.config, context.seed));
  std::string dir = context.config.value("state_dir", std::string());
  if (dir.empty() && !context.campaign_dir.empty()) dir = context.campaign_dir + "/sim";
  return std::make_unique<SimLauncher>(std::move(cluster), dir);
}

std::vector<PluginCommand> SimLauncher::Commands() const {
  return {{"predict", "predict step time, throughput and memory for rows of a calibration CSV"}};
}

int SimLauncher::RunCommand(const std::string& command, const std::vector<std::string>& args,
                            std::ostream& out, std::ostream& err) {
  if (command == "predict") return RunPredictCommand(args, out, err);
  return Launcher::RunCommand(command, args, out, err);
}

ClusterInfo SimLauncher::Cluster() const { return ToClusterInfo(cluster_); }

double SimLauncher::Now() const { return clock_; }

std::string SimLauncher::RecordPath(const std::string& name) const {
  return state_dir_ + "/jobs/" + name + ".json";
}

Result<std::optional<SimLauncher::Record>> SimLauncher::Find(const std::string& name) {
  auto cached = records_.find(name);
  if (cached != records_.end()) return std::optional<Record>(cached->second);
  if (state_dir_.empty()) return std::optional<Record>();
  auto text = ReadFile(RecordPath(name));
  if (!text.ok()) return std::optional<Record>();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.contains("status")) {
    return Status::Corruption("sim launcher: " + RecordPath(name) +
                              " is not a job record (delete it to resubmit the job)");
  }
  ATTUNE_ASSIGN_OR_RETURN(JobStatus status, JobStatusFromJson(j.at("status")));
  Record r{status, j.value("log_path", std::string()), j.value("polled", false)};
  records_[name] = r;
  return std::optional<Record>(r);
}

Status SimLauncher::Store(const std::string& name, const Record& record) {
  records_[name] = record;
  if (state_dir_.empty()) return Status::Ok();
  nlohmann::json j = {{"status", JobStatusToJson(record.status)},
                      {"log_path", record.log_path},
                      {"polled", record.polled}};
  return WriteAtomically(RecordPath(name), j.dump(2) + "\n");
}

Status SimLauncher::AdvanceClock(double to) {
  if (to <= clock_) return Status::Ok();
  clock_ = to;
  if (state_dir_.empty()) return Status::Ok();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g\n", clock_);  // round-trips exactly
  return WriteAtomically(state_dir_ + "/clock", buf);
}

JobStatus SimLauncher::RunningView(const Record& record) const {
  if (record.polled) return record.status;
  JobStatus running = record.status;
  running.state = JobState::kRunning;
  running.end_time.reset();
  running.exit_code.reset();
  running.reason.clear();
  return running;
}

Result<JobStatus> SimLauncher::Submit(const JobSpec& spec) {
  if (!ValidJobName(spec.name)) {
    return Status::InvalidArgument("sim launcher: job name '" + spec.name +
                                   "' must match [A-Za-z0-9._-]+");
  }
  ATTUNE_ASSIGN_OR_RETURN(auto existing, Find(spec.name));
  if (existing) return RunningView(*existing);
  double start = clock_ + cluster_.queue_s;
  ATTUNE_ASSIGN_OR_RETURN(JobOutcome outcome, SimulateJob(spec, cluster_, start, factors_));
  Record r;
  r.status.name = spec.name;
  r.status.launcher_job_id = "sim-" + spec.name;
  r.status.state = outcome.state;
  r.status.start_time = start;
  r.status.end_time = start + outcome.duration_s;
  r.status.exit_code = outcome.exit_code;
  r.status.reason = outcome.reason;
  r.status.devices = spec.devices > 0 ? spec.devices : spec.recipe.topology.WorldSize();
  r.log_path = spec.log_path;
  if (r.log_path.empty() && !state_dir_.empty()) r.log_path = state_dir_ + "/logs/" + spec.name + ".log";
  if (r.log_path.empty()) {
    memory_logs_[spec.name] = outcome.log;
  } else {
    // The log first, then the record: a crash in between leaves no record, so the job is simply
    // simulated again (deterministically the same) on the next Submit.
    ATTUNE_RETURN_IF_ERROR(WriteAtomically(r.log_path, outcome.log));
  }
  ATTUNE_RETURN_IF_ERROR(Store(spec.name, r));
  ATTUNE_RETURN_IF_ERROR(AppendSubmission(spec.name));
  return RunningView(r);
}

Status SimLauncher::AppendSubmission(const std::string& name) const {
  // An audit trail of every job this launcher really started, one name a line, appended after
  // the job's record is durable (so a crash can drop a line, never add a false one). The kill -9
  // suite reads it to prove that no job ever started twice.
  if (state_dir_.empty()) return Status::Ok();
  std::string path = state_dir_ + "/submissions.log";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("sim launcher: cannot append to '" + path + "': " + std::strerror(errno));
  std::string line = name + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return Status::IoError("sim launcher: cannot write '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

Result<JobStatus> SimLauncher::Poll(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(auto record, Find(name));
  if (!record) {
    JobStatus unknown;
    unknown.name = name;
    unknown.state = JobState::kUnknown;
    return unknown;
  }
  if (!record->polled) {
    record->polled = true;
    ATTUNE_RETURN_IF_ERROR(Store(name, *record));
  }
  ATTUNE_RETURN_IF_ERROR(AdvanceClock(record->status.end_time.value_or(clock_)));
  return record->status;
}

Result<std::string> SimLauncher::ReadLog(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(auto record, Find(name));
  if (!record) return std::string();
  if (record->log_path.empty()) {
    auto it = memory_logs_.find(name);
    return it == memory_logs_.end() ? std::string() : it->second;
  }
  auto text = ReadFile(record->log_path);
  if (!text.ok()) return std::string();
  return *text;
}

Status SimLauncher::Cancel(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(auto record, Find(name));
  if (!record) return Status::NotFound("sim launcher: no job named '" + name + "' to cancel");
  if (record->polled || record->status.end_time.value_or(0) <= clock_) return Status::Ok();
  record->status.state = JobState::kCancelled;
  record->status.end_time = std::max(clock_, record->status.start_time.value_or(clock_));
  record->status.reason = "cancelled";
  record->status.exit_code.reset();
  record->polled = true;
  return Store(name, *record);
}

}  // namespace attune::sim
