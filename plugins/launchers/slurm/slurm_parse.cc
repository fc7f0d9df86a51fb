// Copyright attune authors.
#include "slurm_parse.h"

#include <ctime>
#include <iomanip>
#include <sstream>
#include <vector>

namespace attune::slurm {
namespace {

std::string Get(const std::map<std::string, std::string>& kv, const std::string& key) {
  auto it = kv.find(key);
  return it == kv.end() ? std::string() : it->second;
}

int ToInt(const std::string& text, int fallback) {
  try {
    size_t used = 0;
    int value = std::stoi(text, &used);
    return used == 0 ? fallback : value;
  } catch (const std::exception&) {
    return fallback;  // Slurm prints "N/A" or nothing where it has no number
  }
}

// "3:0" → exit 3, signal 0.
void ParseExitCode(const std::string& text, SlurmJob* job) {
  auto colon = text.find(':');
  if (text.empty() || colon == std::string::npos) return;
  int code = ToInt(text.substr(0, colon), -1);
  if (code >= 0) job->exit_code = code;
  job->exit_signal = ToInt(text.substr(colon + 1), 0);
}

// "cpu=2,mem=1G,node=1,billing=2,gres/gpu=8" → 8.
int GpusInTres(const std::string& tres) {
  std::stringstream in(tres);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.rfind("gres/gpu=", 0) == 0) return ToInt(item.substr(9), 0);
  }
  return 0;
}

// The state word without Slurm's decorations ("CANCELLED by 0" → CANCELLED, "RUNNING+" → RUNNING).
std::string BareState(const std::string& state) {
  auto end = state.find_first_of(" +");
  return end == std::string::npos ? state : state.substr(0, end);
}

// Times are kept only when they are facts: a pending job's StartTime and a running job's
// EndTime are Slurm's forecasts and must not be charged.
void SetTimes(const std::string& start, const std::string& end, SlurmJob* job) {
  if (!HasStarted(job->state)) return;
  job->start_time = ParseSlurmTime(start);
  if (IsTerminal(MapSlurmState(job->state))) job->end_time = ParseSlurmTime(end);
}

}  // namespace

std::map<std::string, std::string> ParseKeyValues(const std::string& line) {
  std::map<std::string, std::string> out;
  std::stringstream in(line);
  std::string word;
  std::string last_key;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      if (!last_key.empty()) out[last_key] += " " + word;
      continue;
    }
    last_key = word.substr(0, eq);
    out[last_key] = word.substr(eq + 1);
  }
  return out;
}

Result<SlurmJob> ParseScontrolJob(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  auto kv = ParseKeyValues(line);
  SlurmJob job;
  job.job_id = Get(kv, "JobId");
  job.state = Get(kv, "JobState");
  if (job.job_id.empty() || job.state.empty()) {
    return Status::Internal("scontrol show job -o: expected JobId= and JobState=, found '" +
                            line.substr(0, 200) + "'");
  }
  job.name = Get(kv, "JobName");
  job.reason = Get(kv, "Reason");
  ParseExitCode(Get(kv, "ExitCode"), &job);
  SetTimes(Get(kv, "StartTime"), Get(kv, "EndTime"), &job);
  job.restarts = ToInt(Get(kv, "Restarts"), 0);
  job.num_nodes = ToInt(Get(kv, "NumNodes"), 0);
  job.gpus = GpusInTres(Get(kv, "TRES"));
  job.std_out = Get(kv, "StdOut");
  job.comment = Get(kv, "Comment");
  return job;
}

Result<SlurmJob> ParseSacctLine(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '|')) fields.push_back(field);
  if (fields.size() < 8) {
    return Status::Internal("sacct -P: expected 9 '|'-separated fields, found '" + line + "'");
  }
  SlurmJob job;
  job.job_id = fields[0];
  job.name = fields[1];
  job.state = BareState(fields[2]);
  ParseExitCode(fields[3], &job);
  SetTimes(fields[4], fields[5], &job);
  job.gpus = GpusInTres(fields[6]);
  job.num_nodes = ToInt(fields[7], 0);
  if (fields.size() > 8) job.reason = fields[8];
  if (fields.size() > 9) job.comment = fields[9];
  return job;
}

std::optional<double> ParseSlurmTime(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  tm.tm_isdst = -1;  // Slurm prints local time; let mktime apply the zone's rules
  std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(t);
}

JobState MapSlurmState(const std::string& slurm_state) {
  static const std::map<std::string, JobState> kStates = {
      {"PENDING", JobState::kPending},       {"REQUEUED", JobState::kPending},
      {"REQUEUE_HOLD", JobState::kPending},  {"REQUEUE_FED", JobState::kPending},
      {"RESV_DEL_HOLD", JobState::kPending}, {"CONFIGURING", JobState::kRunning},
      {"RUNNING", JobState::kRunning},       {"COMPLETING", JobState::kRunning},
      {"SUSPENDED", JobState::kRunning},     {"STOPPED", JobState::kRunning},
      {"SIGNALING", JobState::kRunning},     {"STAGE_OUT", JobState::kRunning},
      {"RESIZING", JobState::kRunning},      {"COMPLETED", JobState::kSucceeded},
      {"FAILED", JobState::kFailed},         {"SPECIAL_EXIT", JobState::kFailed},
      {"CANCELLED", JobState::kCancelled},   {"REVOKED", JobState::kCancelled},
      {"DEADLINE", JobState::kTimedOut},     {"TIMEOUT", JobState::kTimedOut},
      {"NODE_FAIL", JobState::kNodeFailure}, {"BOOT_FAIL", JobState::kNodeFailure},
      {"PREEMPTED", JobState::kPreempted},   {"OUT_OF_MEMORY", JobState::kOutOfMemory},
  };
  auto it = kStates.find(BareState(slurm_state));
  // An unknown word is a state newer than this code: treating it as failed stops the engine
  // from waiting forever and the reason quotes the word.
  return it == kStates.end() ? JobState::kFailed : it->second;
}

bool HasStarted(const std::string& slurm_state) {
  return MapSlurmState(slurm_state) != JobState::kPending;
}

Result<std::string> ParseSbatchJobId(const std::string& out) {
  std::string first = out.substr(0, out.find_first_of(";\n"));
  if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Internal("sbatch --parsable: expected a job id, found '" + out + "'");
  }
  return first;
}

JobStatus ToJobStatus(const SlurmJob& job, const std::string& name, int fallback_devices) {
  JobStatus s;
  s.name = name;
  s.launcher_job_id = job.job_id;
  s.state = MapSlurmState(job.state);
  s.start_time = job.start_time;
  s.end_time = job.end_time;
  s.requeues = job.restarts;
  s.devices = job.gpus > 0 ? job.gpus : fallback_devices;
  if (IsTerminal(s.state)) s.exit_code = job.exit_code;
  if (s.state == JobState::kSucceeded || s.state == JobState::kRunning) return s;
  s.reason = "slurm job " + job.job_id + " " + job.state;
  if (!job.reason.empty() && job.reason != "None") s.reason += " (reason " + job.reason + ")";
  if (IsTerminal(s.state) && job.exit_code) {
    s.reason += ", exit code " + std::to_string(*job.exit_code);
    if (job.exit_signal != 0) s.reason += " signal " + std::to_string(job.exit_signal);
  }
  if (job.restarts > 0) s.reason += ", requeued " + std::to_string(job.restarts) + " time(s)";
  return s;
}

bool SaysControllerUnreachable(const std::string& err) {
  for (const char* needle :
       {"Unable to contact slurm controller", "Socket timed out", "Connection refused",
        "Zero Bytes were transmitted", "Communication connection failure",
        "Transport endpoint is not connected", "Slurm backup controller in standby mode"}) {
    if (err.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace attune::slurm
