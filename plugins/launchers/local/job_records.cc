// Copyright attune authors.
//
// Reading and settling the record directory of a local job.

#include "job_records.h"

#include "attune/support/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace attune::local {
namespace {

using nlohmann::json;

double UnixNow() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Kills what is left of a job whose wrapper died. The group id is the job leader's pid; it is only
// signalled when that pid is not now a different process (pid reuse).
void StopLeftovers(const json& start) {
  long pgid = start.value("pgid", 0L);
  if (pgid <= 1) return;
  unsigned long long ticks = ProcessStartTicks(pgid);
  unsigned long long recorded = start.value("job_start_ticks", 0ULL);
  if (ticks != 0 && recorded != 0 && ticks != recorded) return;  // another process owns the pid
  ::kill(static_cast<pid_t>(-pgid), SIGKILL);
}

double LastSignOfLife(const json& submit, double start_time) {
  struct stat st {};
  std::string log = submit.value("log_path", "");
  if (log.empty() || ::stat(log.c_str(), &st) != 0) return start_time;
  double mtime = static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9;
  return std::max(mtime, start_time);
}

Result<JobStatus> SettleDeadWrapper(JobStatus status, const std::string& record_dir,
                                    const json& submit, const json& start) {
  StopLeftovers(start);
  double start_time = start.value("start_time", UnixNow());
  // The wrapper's death time is unknown; the log's last write is the best bound we have.
  json end = {{"state", "node_failure"},
              {"exit_code", nullptr},
              {"signal", nullptr},
              {"start_time", start_time},
              {"end_time", LastSignOfLife(submit, start_time)},
              {"reason",
               "the job wrapper (pid " + std::to_string(start.value("wrapper_pid", 0)) +
                   ") disappeared without recording an exit status (killed, or the host "
                   "restarted); leftovers of the job were stopped"}};
  ATTUNE_RETURN_IF_ERROR(WriteJsonAtomically(record_dir + "/" + kEndFile, end));
  status.state = JobState::kNodeFailure;
  status.start_time = start_time;
  status.end_time = end["end_time"].get<double>();
  status.reason = end["reason"].get<std::string>();
  return status;
}

Result<JobStatus> FromEndRecord(JobStatus status, const json& end) {
  auto state = JobStateFromName(end.value("state", ""));
  if (!state || !IsTerminal(*state)) {
    return Status::Corruption("local launcher: job '" + status.name + "': end.json has state '" +
                              end.value("state", "") + "', expected a terminal state");
  }
  status.state = *state;
  if (end.contains("start_time") && end["start_time"].is_number()) {
    status.start_time = end["start_time"].get<double>();
  }
  if (end.contains("end_time") && end["end_time"].is_number()) {
    status.end_time = end["end_time"].get<double>();
  }
  if (end.contains("exit_code") && end["exit_code"].is_number_integer()) {
    status.exit_code = end["exit_code"].get<int>();
  }
  status.reason = end.value("reason", "");
  return status;
}

// True when the wrapper the launcher spawned (spawn.json) still exists: it is starting.
bool SpawnedWrapperAlive(const json& spawn) {
  long pid = spawn.value("wrapper_pid", 0L);
  unsigned long long ticks = spawn.value("wrapper_start_ticks", 0ULL);
  return pid > 1 && ticks != 0 && ProcessStartTicks(pid) == ticks;
}

}  // namespace

// Field 22 of /proc/<pid>/stat; a zombie counts as gone (it has exited, only its parent has not
// reaped it yet).
unsigned long long ProcessStartTicks(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return 0;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = text.rfind(')');  // because the command name may contain spaces
  if (paren == std::string::npos || paren + 2 >= text.size()) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return 0;
    if (i == 22) return std::stoull(field);
  }
  return 0;
}

Status WriteJsonAtomically(const std::string& path, const json& value) {
  return support::WriteFileAtomically(path, value.dump(2) + "\n");
}

Result<json> ReadJsonIfExists(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json::object();
  std::stringstream text;
  text << in.rdbuf();
  json value = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    return Status::Corruption("local launcher: '" + path +
                              "' is not a JSON object (records are written atomically, so this "
                              "file was changed by something else); remove the job directory to "
                              "forget the job");
  }
  return value;
}

bool WrapperAlive(const std::string& record_dir) {
  std::string path = record_dir + "/" + kLockFile;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // A shared lock is refused exactly while a wrapper holds its exclusive one. A wrapper that starts
  // during this brief probe retries its lock, so probing cannot keep it from starting.
  bool alive = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return alive;
}

int WrapperPidFromLock(const std::string& record_dir) {
  std::ifstream in(record_dir + "/" + kLockFile);
  int pid = 0;
  in >> pid;
  return pid;
}

Result<JobStatus> ReadJobStatus(const std::string& name, const std::string& record_dir) {
  JobStatus status;
  status.name = name;
  ATTUNE_ASSIGN_OR_RETURN(json submit, ReadJsonIfExists(record_dir + "/" + kSubmitFile));
  if (submit.empty()) return status;  // kUnknown: never submitted
  status.devices = submit.value("devices", 1);
  ATTUNE_ASSIGN_OR_RETURN(json end, ReadJsonIfExists(record_dir + "/" + kEndFile));
  ATTUNE_ASSIGN_OR_RETURN(json start, ReadJsonIfExists(record_dir + "/" + kStartFile));
  if (!start.empty()) status.launcher_job_id = std::to_string(start.value("job_pid", 0));
  if (!end.empty()) return FromEndRecord(status, end);
  bool alive = WrapperAlive(record_dir);
  if (alive && start.empty()) {
    status.state = JobState::kPending;
    return status;
  }
  if (alive) {
    status.state = JobState::kRunning;
    status.start_time = start.value("start_time", 0.0);
    return status;
  }
  // Read end.json again: the wrapper may have finished between the first read and the probe.
  ATTUNE_ASSIGN_OR_RETURN(end, ReadJsonIfExists(record_dir + "/" + kEndFile));
  if (!end.empty()) return FromEndRecord(status, end);
  if (start.empty()) {
    ATTUNE_ASSIGN_OR_RETURN(json spawn, ReadJsonIfExists(record_dir + "/" + kSpawnFile));
    if (SpawnedWrapperAlive(spawn)) status.state = JobState::kPending;
    return status;  // otherwise kUnknown: the wrapper never started the job
  }
  return SettleDeadWrapper(status, record_dir, submit, start);
}

}  // namespace attune::local
