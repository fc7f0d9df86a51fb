// Copyright attune authors.
//
// The local launcher (see local_launcher.h).

#include "local_launcher.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "attune/support/json_schema.h"
#include "attune/support/module_path.h"
#include "job_wrapper.h"
#include "job_records.h"
#include "options_schema.h"
#include "spawn.h"

namespace attune::local {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool ValidJobName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status CheckName(const std::string& name) {
  if (ValidJobName(name)) return Status::Ok();
  return Status::InvalidArgument("local launcher: job name '" + name +
                                 "' must match [A-Za-z0-9._-]+");
}

std::string FormatNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string EnvValue(const std::vector<std::pair<std::string, std::string>>& env,
                     const std::string& name) {
  for (const auto& [key, value] : env) {
    if (key == name) return value;
  }
  const char* inherited = std::getenv(name.c_str());
  return inherited ? inherited : "";
}

// Holds flock(LOCK_EX) on a file for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

template <typename T>
Result<T> ConfigValue(const json& config, const char* key, T fallback) {
  if (!config.contains(key)) return fallback;
  try {
    return config.at(key).get<T>();
  } catch (const json::exception& e) {
    return Status::InvalidArgument(std::string("local launcher: option '") + key +
                                   "' has the wrong type: " + e.what());
  }
}

std::vector<std::pair<std::string, std::string>> JobEnvironment(const JobSpec& spec,
                                                                 const LocalOptions& o) {
  auto env = spec.launch.env;
  env.emplace_back("ATTUNE_JOB_NAME", spec.name);
  env.emplace_back("ATTUNE_DEVICES", std::to_string(spec.devices));
  if (o.device_type == "gpu") {
    std::string visible;
    for (int i = 0; i < spec.devices; ++i) {
      if (i > 0) visible += ',';
      visible += std::to_string(i);
    }
    env.emplace_back("CUDA_VISIBLE_DEVICES", visible);
  }
  return env;
}

}  // namespace

Result<LocalOptions> OptionsFromContext(const PluginContext& context) {
  const json c = context.config.is_null() ? json::object() : context.config;
  // The declared schema checks keys, types and ranges (the same check `attune validate` makes).
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(kOptionsSchema, c, "local launcher"));
  LocalOptions o;
  std::string default_state = context.campaign_dir.empty()
                                  ? (fs::temp_directory_path() / "attune-launcher-local").string()
                                  : context.campaign_dir + "/launcher-local";
  ATTUNE_ASSIGN_OR_RETURN(o.state_dir, ConfigValue<std::string>(c, "state_dir", default_state));
  std::string binary = context.attune_binary;
  if (binary.empty() && std::getenv("ATTUNE_BIN")) binary = std::getenv("ATTUNE_BIN");
  std::vector<std::string> fallback;
  if (!binary.empty()) fallback = DefaultWrapper(binary);
  ATTUNE_ASSIGN_OR_RETURN(o.wrapper, ConfigValue<std::vector<std::string>>(c, "wrapper", fallback));
  ATTUNE_ASSIGN_OR_RETURN(o.device_type, ConfigValue<std::string>(c, "device_type", "cpu"));
  if (o.device_type != "cpu" && o.device_type != "gpu") {
    return Status::InvalidArgument("local launcher: option 'device_type' must be \"cpu\" or "
                                   "\"gpu\", found \"" + o.device_type + "\"");
  }
  int cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  ATTUNE_ASSIGN_OR_RETURN(o.devices_per_node, ConfigValue<int>(c, "devices_per_node", cpus));
  ATTUNE_ASSIGN_OR_RETURN(o.grace_s, ConfigValue<double>(c, "grace_s", 10.0));
  ATTUNE_ASSIGN_OR_RETURN(o.pin_cpus, ConfigValue<bool>(c, "pin_cpus", false));
  ATTUNE_ASSIGN_OR_RETURN(o.poll_interval_s, ConfigValue<double>(c, "poll_interval_s", 1.0));
  ATTUNE_ASSIGN_OR_RETURN(o.submit_wait_s, ConfigValue<double>(c, "submit_wait_s", 10.0));
  if (o.devices_per_node < 1) {
    return Status::InvalidArgument("local launcher: option 'devices_per_node' must be >= 1");
  }
  return o;
}

LocalLauncher::LocalLauncher(LocalOptions options) : options_(std::move(options)) {}

LocalLauncher::~LocalLauncher() { ReapChildren(); }

ClusterInfo LocalLauncher::Cluster() const {
  ClusterInfo info;
  info.device_type = options_.device_type;
  info.devices_per_node = options_.devices_per_node;
  info.max_nodes = 1;
  return info;
}

double LocalLauncher::Now() const {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(now).count();
}

std::string LocalLauncher::RecordDir(const std::string& name) const {
  return options_.state_dir + "/jobs/" + name;
}

void LocalLauncher::ReapChildren() {
  for (auto it = children_.begin(); it != children_.end();) {
    pid_t done = ::waitpid(it->second, nullptr, WNOHANG);
    it = (done == it->second || (done < 0 && errno == ECHILD)) ? children_.erase(it) : ++it;
  }
}

Result<JobStatus> LocalLauncher::Poll(const std::string& name) {
  ATTUNE_RETURN_IF_ERROR(CheckName(name));
  ReapChildren();
  return ReadJobStatus(name, RecordDir(name));
}

Result<std::string> LocalLauncher::ReadLog(const std::string& name) {
  ATTUNE_RETURN_IF_ERROR(CheckName(name));
  ATTUNE_ASSIGN_OR_RETURN(json submit, ReadJsonIfExists(RecordDir(name) + "/" + kSubmitFile));
  if (submit.empty()) return std::string();
  std::ifstream in(submit.value("log_path", ""), std::ios::binary);
  if (!in) return std::string();
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Status LocalLauncher::ValidateSpec(const JobSpec& spec) const {
  if (options_.wrapper.empty()) {
    return Status::FailedPrecondition(
        "local launcher: no job wrapper to run; the host gives the attune binary's path, or set "
        "ATTUNE_BIN=/path/to/attune, or the launcher option wrapper: [\"/path/to/attune\", "
        "\"--plugin-path\", \"/path/to/plugins\", \"local\", \"job-exec\"]");
  }
  if (spec.devices < 1 || spec.devices > options_.devices_per_node) {
    return Status::InvalidArgument(
        "launch error: job '" + spec.name + "' asks for " + std::to_string(spec.devices) +
        " devices but the local launcher has " + std::to_string(options_.devices_per_node) +
        " (" + options_.device_type + "); lower the recipe's topology or set devices_per_node");
  }
  if (spec.nodes != 1) {
    return Status::InvalidArgument("launch error: the local launcher runs single-node jobs; job '" +
                                   spec.name + "' asks for " + std::to_string(spec.nodes) +
                                   " nodes");
  }
  if (spec.time_limit_s < 0) {
    return Status::InvalidArgument("launch error: negative time limit for job '" + spec.name + "'");
  }
  return CheckEntryPoint(spec.launch.argv, spec.launch.workdir, EnvValue(spec.launch.env, "PATH"));
}

std::vector<std::string> LocalLauncher::WrapperArgv(const JobSpec& spec,
                                                    const std::string& wrapper0) const {
  std::vector<std::string> argv = options_.wrapper;
  argv[0] = wrapper0;
  double grace = spec.options.value("grace_s", options_.grace_s);
  std::vector<std::string> more = {"--record",     RecordDir(spec.name),
                                   "--log",        spec.log_path,
                                   "--time-limit", FormatNumber(spec.time_limit_s),
                                   "--grace",      FormatNumber(grace),
                                   "--devices",    std::to_string(spec.devices)};
  if (!spec.launch.workdir.empty()) {
    more.push_back("--workdir");
    more.push_back(spec.launch.workdir);
  }
  more.push_back("--");
  argv.insert(argv.end(), more.begin(), more.end());
  argv.insert(argv.end(), spec.launch.argv.begin(), spec.launch.argv.end());
  return argv;
}

Result<JobStatus> LocalLauncher::Submit(const JobSpec& spec) {
  ATTUNE_RETURN_IF_ERROR(CheckName(spec.name));
  std::error_code ec;
  fs::create_directories(options_.state_dir + "/jobs", ec);
  if (ec) {
    return Status::IoError("local launcher: cannot create state directory '" + options_.state_dir +
                           "/jobs': " + ec.message());
  }
  FileLock lock(options_.state_dir + "/jobs/" + spec.name + ".submit-lock");
  if (!lock.ok()) {
    return Status::IoError("local launcher: cannot lock job '" + spec.name + "' in '" +
                           options_.state_dir + "': " + std::strerror(errno));
  }
  return SubmitLocked(spec);
}

Result<JobStatus> LocalLauncher::SubmitLocked(const JobSpec& spec) {
  ATTUNE_ASSIGN_OR_RETURN(JobStatus existing, Poll(spec.name));
  if (existing.state != JobState::kUnknown) return existing;  // idempotent: never a second start
  ATTUNE_RETURN_IF_ERROR(ValidateSpec(spec));
  Result<std::string> wrapper0 = ResolveExecutable(options_.wrapper[0], "", EnvValue({}, "PATH"));
  if (!wrapper0.ok()) {
    return Status::FailedPrecondition("local launcher: the job wrapper '" + options_.wrapper[0] +
                                      "' cannot be run (" + wrapper0.status().message() +
                                      "); set ATTUNE_BIN or the launcher option 'wrapper'");
  }
  ATTUNE_RETURN_IF_ERROR(PrepareLog(spec.log_path));
  const std::string dir = RecordDir(spec.name);
  std::error_code ec;
  // The record showed no start, but it is cleaned, not deleted: a wrapper spawned by an engine that
  // was killed before it wrote spawn.json may take the lock and write start.json at any moment,
  // and deleting the directory under it (its lock file, its start.json) would let the wrapper
  // spawned below start the job a second time. Kept, start.json and the lock make that one refuse.
  // Without start.json, an end.json is that of a wrapper whose fork failed: stale.
  if (!fs::exists(dir + "/" + kStartFile)) fs::remove(dir + "/" + kEndFile, ec);
  fs::remove(dir + "/" + kSpawnFile, ec);
  ec.clear();
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("local launcher: cannot create '" + dir + "': " + ec.message());
  json submit = {{"name", spec.name},        {"log_path", spec.log_path},
                 {"job_dir", spec.job_dir},  {"devices", spec.devices},
                 {"time_limit_s", spec.time_limit_s}, {"argv", spec.launch.argv},
                 {"workdir", spec.launch.workdir},    {"submit_time", Now()}};
  ATTUNE_RETURN_IF_ERROR(WriteJsonAtomically(dir + "/" + kSubmitFile, submit));
  SpawnRequest request{WrapperArgv(spec, *wrapper0), JobEnvironment(spec, options_), spec.log_path,
                       0};
  bool pin = spec.options.value("pin_cpus", options_.pin_cpus);
  if (pin && options_.device_type == "cpu") request.pin_cpus = spec.devices;
  Result<pid_t> pid = SpawnDetached(request);
  if (!pid.ok()) {
    fs::remove(dir + "/" + kSubmitFile, ec);  // nothing started: the name stays unknown
    return pid.status();
  }
  children_[spec.name] = *pid;
  // Recorded so that a wrapper slow to take its lock reads as pending, never as "not started"
  // (which would let a resubmission start a second one).
  json spawn = {{"wrapper_pid", *pid}, {"wrapper_start_ticks", ProcessStartTicks(*pid)}};
  ATTUNE_RETURN_IF_ERROR(WriteJsonAtomically(dir + "/" + kSpawnFile, spawn));
  ATTUNE_RETURN_IF_ERROR(AppendSubmission(spec.name));
  return WaitUntilStarted(spec, *pid);
}

Status LocalLauncher::AppendSubmission(const std::string& name) const {
  // An audit trail of every job this launcher really started, one name a line, appended after
  // the spawn record is durable (a crash can drop a line, never add a false one). The kill -9
  // suite reads it to prove that no job ever started twice.
  std::string path = options_.state_dir + "/submissions.log";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError("local launcher: cannot append to '" + path + "': " + std::strerror(errno));
  }
  std::string line = name + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return Status::IoError("local launcher: cannot write '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

Result<JobStatus> LocalLauncher::WaitUntilStarted(const JobSpec& spec, pid_t wrapper_pid) {
  const double give_up = Now() + options_.submit_wait_s;
  while (true) {
    ATTUNE_ASSIGN_OR_RETURN(JobStatus status, ReadJobStatus(spec.name, RecordDir(spec.name)));
    if (status.state != JobState::kUnknown && status.state != JobState::kPending) return status;
    int wstatus = 0;
    if (::waitpid(wrapper_pid, &wstatus, WNOHANG) == wrapper_pid) {
      children_.erase(spec.name);
      ATTUNE_ASSIGN_OR_RETURN(status, ReadJobStatus(spec.name, RecordDir(spec.name)));
      if (status.state != JobState::kUnknown) return status;
      std::error_code ec;
      fs::remove(RecordDir(spec.name) + "/" + kSubmitFile, ec);
      return Status::InvalidArgument(
          "launch error: the job wrapper exited (status " +
          std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
          ") before starting job '" + spec.name + "'; its message is in " + spec.log_path);
    }
    if (Now() > give_up) return status;  // still pending: the engine keeps polling
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status LocalLauncher::Cancel(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(JobStatus status, Poll(name));
  if (status.state == JobState::kUnknown) {
    return Status::NotFound("local launcher: no job named '" + name + "' was submitted");
  }
  if (IsTerminal(status.state)) return Status::Ok();
  int pid = WrapperPidFromLock(RecordDir(name));
  if (pid > 1 && WrapperAlive(RecordDir(name))) ::kill(pid, SIGTERM);
  const double give_up = Now() + options_.grace_s + 5;
  while (Now() < give_up) {
    ATTUNE_ASSIGN_OR_RETURN(status, Poll(name));
    if (IsTerminal(status.state)) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::DeadlineExceeded("local launcher: job '" + name + "' was sent SIGTERM but is " +
                                  "still " + JobStateName(status.state) + " after " +
                                  FormatNumber(options_.grace_s + 5) + " s; poll it again");
}

std::vector<std::string> DefaultWrapper(const std::string& attune_binary) {
  std::vector<std::string> wrapper = {attune_binary};
  std::string here = support::ThisModuleDir();
  if (!here.empty()) wrapper.insert(wrapper.end(), {"--plugin-path", here});
  wrapper.insert(wrapper.end(), {"local", "job-exec"});
  return wrapper;
}

std::vector<PluginCommand> LocalLauncher::Commands() const {
  return {{"job-exec", "run one job under the wrapper that records its start and end (used by "
                       "this launcher; see job_wrapper.h)"}};
}

int LocalLauncher::RunCommand(const std::string& command, const std::vector<std::string>& args,
                              std::ostream& out, std::ostream& err) {
  if (command != "job-exec") return Launcher::RunCommand(command, args, out, err);
  return jobwrap::RunJobWrapper(args);
}

Result<std::unique_ptr<Plugin>> CreateLocalLauncher(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(LocalOptions options, OptionsFromContext(context));
  return std::unique_ptr<Plugin>(std::make_unique<LocalLauncher>(std::move(options)));
}

}  // namespace attune::local
