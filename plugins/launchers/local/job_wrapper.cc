// Copyright attune authors.
//
// The job wrapper. It is single-threaded and blocks SIGCHLD/SIGTERM/SIGINT/SIGHUP, waiting for
// them with sigtimedwait: no signal handler runs, so there is no race between a signal and the
// state it changes.

#include "job_wrapper.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "attune/support/atomic_file.h"

namespace attune::jobwrap {
namespace {

using nlohmann::json;

constexpr double kNoDeadline = std::numeric_limits<double>::infinity();
constexpr int kLockAttempts = 40;  // × 50 ms: rides out a launcher's brief liveness probe

double UnixNow() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void Say(const std::string& message) {
  std::string line = "[attune local job-exec] " + message + "\n";
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

Result<double> ParseSeconds(const std::string& flag, const std::string& text) {
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size() && value >= 0) return value;
  } catch (const std::exception&) {
    // falls through to the error below
  }
  return Status::InvalidArgument(flag + ": expected a number of seconds >= 0, found '" + text +
                                 "'");
}

Status SetOption(WrapperOptions* o, const std::string& flag, const std::string& value) {
  if (flag == "--record") {
    o->record_dir = value;
  } else if (flag == "--log") {
    o->log_path = value;
  } else if (flag == "--workdir") {
    o->workdir = value;
  } else if (flag == "--time-limit" || flag == "--grace") {
    ATTUNE_ASSIGN_OR_RETURN(double seconds, ParseSeconds(flag, value));
    (flag == "--time-limit" ? o->time_limit_s : o->grace_s) = seconds;
  } else if (flag == "--devices") {
    try {
      o->devices = std::stoi(value);
    } catch (const std::exception&) {
      return Status::InvalidArgument("--devices: expected an integer, found '" + value + "'");
    }
  } else {
    return Status::InvalidArgument("unknown option '" + flag + "' (see the usage below)");
  }
  return Status::Ok();
}

// The start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat): with the
// pid it identifies a process even after its pid is reused.
unsigned long long ProcessStartTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = text.rfind(')');  // because the command name may contain spaces
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::stoull(field);
  }
  return 0;
}

// Takes the record's lock; -1 when another live wrapper holds it.
int AcquireLock(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  for (int i = 0; i < kLockAttempts; ++i) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::string pid = std::to_string(::getpid()) + "\n";
      (void)!::ftruncate(fd, 0);
      (void)!::pwrite(fd, pid.data(), pid.size(), 0);
      return fd;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::close(fd);
  return -1;
}

std::string FormatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// In the forked child: becomes the job. Only async-signal-safe calls until exec (the wrapper is
// single-threaded, so execvp's PATH search is safe here too).
[[noreturn]] void ExecJob(const WrapperOptions& o, pid_t wrapper_pid, int report_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != wrapper_pid) ::_exit(1);  // because the wrapper died before prctl took hold
  // The job starts with default signal handling whatever the engine ignored or blocked (exec
  // keeps ignored dispositions and the mask).
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Close-on-exec, so that the job inherits the dup2'ed stdin and not a second descriptor.
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd == STDIN_FILENO) {
    ::fcntl(null_fd, F_SETFD, 0);  // because dup2 onto itself would keep close-on-exec
  } else if (null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
  }
  if (!o.workdir.empty() && ::chdir(o.workdir.c_str()) != 0) {
    int err = errno;
    (void)!::write(report_fd, &err, sizeof err);
    ::_exit(126);
  }
  // Nothing above stderr reaches the job, whatever the engine inherited or opened without
  // close-on-exec: the job outlives the engine, and a pipe it kept open would keep whoever reads
  // that pipe waiting for end-of-file until the job ends. (report_fd is close-on-exec already.)
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 1024; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // kernels before 5.11
  }
  std::vector<char*> argv;
  for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  int err = errno;
  (void)!::write(report_fd, &err, sizeof err);
  ::_exit(err == ENOENT ? 127 : 126);
}

struct JobOutcome {
  std::string state;
  int exit_code = 0;
  int signal = 0;
  std::string reason;
};

// Waits for the job's leader, enforcing the time limit and cancellation.
JobOutcome Supervise(const WrapperOptions& o, pid_t child, double start, const sigset_t& set) {
  const double deadline = o.time_limit_s > 0 ? start + o.time_limit_s : kNoDeadline;
  double kill_at = kNoDeadline;
  bool term_sent = false, kill_sent = false;
  std::string stop_state, stop_reason;
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) != child) {
    double now = UnixNow();
    if (stop_state.empty() && now >= deadline) {
      stop_state = "timed_out";
      stop_reason = "time limit of " + FormatSeconds(o.time_limit_s) + " s reached";
    }
    if (!stop_state.empty() && !term_sent) {
      Say(stop_reason + "; sending SIGTERM to process group " + std::to_string(child));
      ::kill(-child, SIGTERM);
      term_sent = true;
      kill_at = now + o.grace_s;
    } else if (term_sent && !kill_sent && now >= kill_at) {
      Say("still running " + FormatSeconds(o.grace_s) + " s after SIGTERM; sending SIGKILL");
      ::kill(-child, SIGKILL);
      kill_sent = true;
    }
    double wake = now + 1.0;
    if (!term_sent) wake = std::min(wake, deadline);
    if (term_sent && !kill_sent) wake = std::min(wake, kill_at);
    wake = std::max(wake - now, 0.001);
    timespec ts{static_cast<time_t>(wake),
                static_cast<long>((wake - static_cast<double>(static_cast<time_t>(wake))) * 1e9)};
    int sig = ::sigtimedwait(&set, nullptr, &ts);
    if ((sig == SIGTERM || sig == SIGINT || sig == SIGHUP) && stop_state.empty()) {
      stop_state = "cancelled";
      stop_reason = std::string("cancelled by ") + ::strsignal(sig);
    }
  }
  ::kill(-child, SIGKILL);  // because the job is over when its leader exits; no stragglers
  JobOutcome out;
  if (WIFEXITED(status)) {
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.exit_code = 128 + out.signal;
  }
  if (!stop_state.empty()) {
    out.state = stop_state;
    out.reason = stop_reason;
  } else if (out.exit_code == 0) {
    out.state = "succeeded";
  } else {
    out.state = "failed";
    out.reason = out.signal ? std::string("killed by signal ") + std::to_string(out.signal) +
                                  " (" + ::strsignal(out.signal) + ")"
                            : "exited with status " + std::to_string(out.exit_code);
  }
  return out;
}

void RedirectOutputToLog(const std::string& log_path) {
  if (log_path.empty()) return;
  int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    Say("cannot open log '" + log_path + "': " + std::strerror(errno));
    return;
  }
  ::dup2(fd, STDOUT_FILENO);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
}

json StartRecord(const WrapperOptions& o, pid_t child, double start) {
  return {{"wrapper_pid", ::getpid()}, {"job_pid", child},       {"pgid", child},
          {"job_start_ticks", ProcessStartTicks(child)},        {"start_time", start},
          {"argv", o.argv}, {"time_limit_s", o.time_limit_s}, {"devices", o.devices},
          {"log", o.log_path}};
}

json EndRecord(const JobOutcome& r, double start, double end) {
  json j = {{"state", r.state}, {"exit_code", r.exit_code}, {"start_time", start},
            {"end_time", end},  {"reason", r.reason}};
  j["signal"] = r.signal ? json(r.signal) : json(nullptr);
  return j;
}

// Forks and supervises the job; the record lock is held by the caller.
int RunLocked(const WrapperOptions& o, const sigset_t& set) {
  const std::string start_path = o.record_dir + "/" + kStartFile;
  const std::string end_path = o.record_dir + "/" + kEndFile;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return kExitOsError;
  const double start = UnixNow();
  const pid_t wrapper_pid = ::getpid();
  pid_t child = ::fork();
  if (child < 0) {
    Say(std::string("fork failed: ") + std::strerror(errno));
    JobOutcome failed{"failed", 126, 0, std::string("fork failed: ") + std::strerror(errno)};
    (void)support::WriteFileAtomically(end_path, EndRecord(failed, start, UnixNow()).dump(2));
    return kExitOsError;
  }
  if (child == 0) ExecJob(o, wrapper_pid, report[1]);
  ::close(report[1]);
  ::setpgid(child, child);  // both sides set it, so a kill(-pgid) right after fork cannot miss
  Status started = support::WriteFileAtomically(start_path, StartRecord(o, child, start).dump(2));
  if (!started.ok()) {
    Say(started.message() + "; stopping the job");
    ::kill(-child, SIGKILL);
  }
  int exec_errno = 0;
  ssize_t n = ::read(report[0], &exec_errno, sizeof exec_errno);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    Say("cannot execute '" + o.argv[0] + "': " + std::strerror(exec_errno));
  }
  JobOutcome outcome = Supervise(o, child, start, set);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    outcome.reason = "cannot execute '" + o.argv[0] + "': " + std::strerror(exec_errno);
  }
  Status ended = support::WriteFileAtomically(end_path, EndRecord(outcome, start, UnixNow()).dump(2));
  if (!ended.ok()) {
    Say(ended.message());
    return kExitOsError;
  }
  if (!outcome.reason.empty()) Say("job " + outcome.state + ": " + outcome.reason);
  return started.ok() ? outcome.exit_code : kExitOsError;
}

}  // namespace

std::string WrapperUsage() {
  return "usage: attune local job-exec --record DIR [--log FILE] [--time-limit SECONDS] "
         "[--grace SECONDS] [--workdir DIR] [--devices N] -- PROGRAM [ARGS...]\n"
         "Runs PROGRAM as its own process group and records start.json/end.json in DIR.\n";
}

Result<WrapperOptions> ParseWrapperArgs(const std::vector<std::string>& args) {
  WrapperOptions o;
  size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    std::string flag = args[i], value;
    auto eq = flag.find('=');
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < args.size() && args[i + 1] != "--") {
      value = args[++i];
    } else {
      return Status::InvalidArgument(flag + ": missing value");
    }
    ATTUNE_RETURN_IF_ERROR(SetOption(&o, flag, value));
  }
  if (o.record_dir.empty()) return Status::InvalidArgument("--record DIR is required");
  if (i + 1 >= args.size()) {
    return Status::InvalidArgument("missing the job's command after '--'");
  }
  o.argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  if (o.devices < 1) return Status::InvalidArgument("--devices: expected at least 1");
  return o;
}

int RunJobWrapper(const std::vector<std::string>& args) {
  Result<WrapperOptions> parsed = ParseWrapperArgs(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "attune local job-exec: %s\n%s", parsed.status().message().c_str(),
                 WrapperUsage().c_str());
    return kExitUsage;
  }
  const WrapperOptions& o = *parsed;
  RedirectOutputToLog(o.log_path);
  if (::mkdir(o.record_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    Say("cannot create record directory '" + o.record_dir + "': " + std::strerror(errno));
    return kExitOsError;
  }
  // Block the signals before anything can send them; Supervise waits for them synchronously.
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  int lock_fd = AcquireLock(o.record_dir + "/" + kLockFile);
  if (lock_fd < 0) {
    Say("record '" + o.record_dir + "' is owned by another live wrapper; not starting the job");
    return kExitRecordBusy;
  }
  if (FileExists(o.record_dir + "/" + kStartFile)) {
    Say("record '" + o.record_dir + "' shows the job already started once; not starting it again");
    ::close(lock_fd);
    return kExitRecordBusy;
  }
  int code = RunLocked(o, set);
  ::close(lock_fd);
  return code;
}

}  // namespace attune::jobwrap
