// Copyright attune authors.
//
// Pre-launch checks and the fork/exec of the job wrapper.

#include "spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

extern char** environ;

namespace attune::local {
namespace {

namespace fs = std::filesystem;

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string Absolute(const std::string& path, const std::string& workdir) {
  if (path.empty() || path[0] == '/') return path;
  fs::path base = workdir.empty() ? fs::current_path() : fs::path(workdir);
  return (base / path).lexically_normal().string();
}

bool LooksLikePython(const std::string& program) {
  std::string base = fs::path(program).filename().string();
  return base.rfind("python", 0) == 0;
}

// Environment for the child: this process's, with `overrides` replacing or adding entries. The
// engine's crash-point switch (ATTUNE_CRASH_AT, for the crash suite) is the engine's alone: the
// wrapper is the same binary and must never die at an engine crash point.
std::vector<std::string> MergedEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  merged.erase("ATTUNE_CRASH_AT");
  for (const auto& [name, value] : overrides) merged[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : merged) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Makes `target` a copy of `fd` that exec keeps (dup2 of a descriptor onto itself would keep its
// close-on-exec flag, so that case clears it). Async-signal-safe.
void InheritAs(int fd, int target) {
  if (fd == target) {
    ::fcntl(fd, F_SETFD, 0);
  } else {
    ::dup2(fd, target);
  }
}

// The child between fork and exec: async-signal-safe calls only.
[[noreturn]] void BecomeWrapper(char* const* argv, char* const* envp, const char* output,
                                int report_fd, int pin_cpus) {
  ::setsid();
  // O_CLOEXEC: the dup2'ed copies are inherited, the originals are not; otherwise the wrapper and
  // the job would keep an extra descriptor on /dev/null and on the job's log.
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) InheritAs(null_fd, STDIN_FILENO);
  int out_fd = ::open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out_fd >= 0) {
    InheritAs(out_fd, STDOUT_FILENO);
    InheritAs(out_fd, STDERR_FILENO);
  }
  if (pin_cpus > 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < pin_cpus; ++i) CPU_SET(i, &set);
    ::sched_setaffinity(0, sizeof set, &set);
  }
  // Nothing above stderr reaches the wrapper (and so the job), whatever the engine holds without
  // close-on-exec; report_fd is close-on-exec already.
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 1024; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // kernels before 5.11
  }
  ::execve(argv[0], argv, envp);
  int err = errno;
  (void)!::write(report_fd, &err, sizeof err);
  ::_exit(127);
}

}  // namespace

Result<std::string> ResolveExecutable(const std::string& program, const std::string& workdir,
                                      const std::string& path_env) {
  if (program.empty()) return Status::InvalidArgument("the job's program (argv[0]) is empty");
  if (program.find('/') != std::string::npos) {
    std::string path = Absolute(program, workdir);
    if (IsExecutableFile(path)) return path;
    bool exists = fs::exists(path);
    return Status::InvalidArgument("launch error: entry point '" + path + "' " +
                                   (exists ? "is not an executable file (check its permissions)"
                                           : "does not exist") +
                                   "; fix the recipe's entry");
  }
  std::stringstream dirs(path_env);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (IsExecutableFile(candidate)) return Absolute(candidate, workdir);
  }
  return Status::InvalidArgument("launch error: program '" + program +
                                 "' was not found in PATH (" + path_env +
                                 "); give an absolute path or fix PATH in the recipe's env");
}

Status CheckEntryPoint(const std::vector<std::string>& argv, const std::string& workdir,
                       const std::string& path_env) {
  if (argv.empty()) return Status::InvalidArgument("launch error: the job has an empty command");
  if (!workdir.empty() && !fs::is_directory(workdir)) {
    return Status::InvalidArgument("launch error: working directory '" + workdir +
                                   "' does not exist");
  }
  ATTUNE_ASSIGN_OR_RETURN(std::string program, ResolveExecutable(argv[0], workdir, path_env));
  if (LooksLikePython(program) && argv.size() > 1 && argv[1].size() > 3 &&
      argv[1].compare(argv[1].size() - 3, 3, ".py") == 0) {
    std::string script = Absolute(argv[1], workdir);
    if (!fs::is_regular_file(script)) {
      return Status::InvalidArgument("launch error: entry point script '" + script +
                                     "' does not exist; fix the recipe's entry");
    }
  }
  return Status::Ok();
}

Status PrepareLog(const std::string& log_path) {
  if (log_path.empty()) return Status::InvalidArgument("launch error: the job has no log path");
  fs::path dir = fs::path(log_path).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) {
    return Status::InvalidArgument("launch error: cannot create log directory '" + dir.string() +
                                   "': " + ec.message());
  }
  int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::InvalidArgument("launch error: cannot write the job log '" + log_path +
                                   "': " + std::strerror(errno) +
                                   "; make the directory writable or choose another campaign dir");
  }
  ::close(fd);
  return Status::Ok();
}

Result<pid_t> SpawnDetached(const SpawnRequest& request) {
  std::vector<std::string> args = request.argv;
  std::vector<std::string> env = MergedEnvironment(request.env);
  std::vector<char*> argv = CStrings(args);
  std::vector<char*> envp = CStrings(env);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    return Status::IoError(std::string("local launcher: pipe failed: ") + std::strerror(errno));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(report[0]);
    ::close(report[1]);
    return Status::IoError(std::string("local launcher: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    BecomeWrapper(argv.data(), envp.data(), request.output_path.c_str(), report[1],
                  request.pin_cpus);
  }
  ::close(report[1]);
  int err = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &err, sizeof err);  // EOF: exec succeeded (the pipe is close-on-exec)
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    ::waitpid(pid, nullptr, 0);
    return Status::InvalidArgument("launch error: cannot execute the job wrapper '" +
                                   request.argv[0] + "': " + std::strerror(err));
  }
  return pid;
}

}  // namespace attune::local
