// Copyright attune authors.
#include "attune/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

extern char** environ;

namespace attune::support {
namespace {

// write(2) to a pipe whose reader may be gone (a program that exits without reading its stdin):
// EPIPE instead of a SIGPIPE that would end the calling process wherever SIGPIPE is not ignored
// (tests, tools; `attune run` ignores it). The signal write(2) raises is directed at this thread,
// so blocking it here and consuming it keeps it from ever being delivered.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  ssize_t n = write(fd, data, size);
  int saved = errno;
  if (n < 0 && errno == EPIPE) {
    timespec now{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return n;
}

using Clock = std::chrono::steady_clock;

std::vector<std::string> Environment(const ProcessOptions& o) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; !o.clear_environment && e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : o.env) vars[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& words) {
  std::vector<char*> out;
  for (auto& w : words) out.push_back(w.data());
  out.push_back(nullptr);
  return out;
}

// The parent's ends and the child's ends of three pipes; closes whatever it still holds.
struct Fds {
  int fd[6] = {-1, -1, -1, -1, -1, -1};  // stdin r/w, stdout r/w, stderr r/w
  ~Fds() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
  void Close(int i) {
    if (fd[i] >= 0) close(fd[i]);
    fd[i] = -1;
  }
};

void Keep(const char* data, size_t n, size_t max, std::string* sink, size_t* dropped) {
  size_t room = max == 0 ? n : (sink->size() >= max ? 0 : max - sink->size());
  size_t take = std::min(room, n);
  sink->append(data, take);
  *dropped += n - take;
}

// How long the pipes may stay open after the program exited, when its leftovers are killed (a
// grandchild that left the process group could otherwise hold them open until the deadline).
constexpr auto kExitGrace = std::chrono::seconds(2);

// The state of one run between spawn and reaping.
struct Run {
  pid_t pid = 0;
  bool exited = false;  // reaped; `status` holds its wait status
  int status = 0;
};

// Reaps the program when it has exited (never blocks).
void ReapIfExited(Run* run) {
  if (!run->exited && waitpid(run->pid, &run->status, WNOHANG) == run->pid) run->exited = true;
}

// Writes `input` and reads both outputs until they close or the deadline passes. False: timeout.
// With `kill_leftovers`, the program's exit ends the run: its process group is killed and the
// pipes get kExitGrace to reach end of file.
bool Exchange(Fds& fds, const ProcessOptions& options, Clock::time_point deadline, Run* run,
              ProcessResult* r) {
  const std::string& input = options.input;
  size_t written = 0;
  if (input.empty()) fds.Close(1);
  std::string* sinks[2] = {&r->out, &r->err};
  char buffer[16384];
  Clock::time_point drain_until = Clock::time_point::max();
  while (fds.fd[2] >= 0 || fds.fd[4] >= 0) {
    if (Clock::now() >= drain_until) return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 && !run->exited) return false;
    constexpr std::chrono::milliseconds kTick(100);  // how often a killed-leftovers run checks the exit
    auto wait = run->exited ? kTick : options.kill_leftovers ? std::min(left, kTick) : left;
    pollfd p[3] = {{fds.fd[2], POLLIN, 0}, {fds.fd[4], POLLIN, 0}, {fds.fd[1], POLLOUT, 0}};
    int ready = poll(p, 3, static_cast<int>(std::max<long>(wait.count(), 0)));
    for (int i = 0; ready > 0 && i < 2; ++i) {
      if (p[i].fd < 0 || p[i].revents == 0) continue;
      ssize_t n = read(p[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        Keep(buffer, static_cast<size_t>(n), options.max_output, sinks[i], &r->dropped);
      } else if (n == 0 || errno != EINTR) {
        fds.Close(2 + 2 * i);
      }
    }
    if (ready > 0 && p[2].fd >= 0 && p[2].revents != 0) {
      ssize_t n = WriteNoSigpipe(p[2].fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if ((n < 0 && errno != EINTR && errno != EAGAIN) || written == input.size()) fds.Close(1);
    }
    if (options.kill_leftovers && !run->exited) {
      ReapIfExited(run);
      if (run->exited) {
        kill(-run->pid, SIGKILL);
        drain_until = Clock::now() + kExitGrace;
      }
    }
  }
  return true;
}

}  // namespace

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("RunProcess: empty argv");
  Fds fds;
  for (int i = 0; i < 3; ++i) {
    if (pipe2(&fds.fd[2 * i], O_CLOEXEC) != 0) {
      return Status::IoError(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
  }
  // Writes to a child that has exited must fail with EPIPE, not kill attune.
  fcntl(fds.fd[1], F_SETFL, O_NONBLOCK);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.input.empty()) {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&actions, fds.fd[0], 0);
  }
  posix_spawn_file_actions_adddup2(&actions, fds.fd[3], 1);
  posix_spawn_file_actions_adddup2(&actions, fds.fd[5], 2);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  std::vector<std::string> words = argv, env_words = Environment(options);
  auto c_argv = Pointers(words);
  auto c_env = Pointers(env_words);
  pid_t pid = 0;
  const auto start = Clock::now();
  int rc = posix_spawnp(&pid, c_argv[0], &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::NotFound("cannot run '" + argv[0] + "'" +
                            (options.cwd.empty() ? "" : " in " + options.cwd) + ": " +
                            std::strerror(rc) + " (is it installed and on PATH?)");
  }
  fds.Close(0);
  fds.Close(3);
  fds.Close(5);
  ProcessResult result;
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options.timeout_s));
  Run run{pid};
  if (!Exchange(fds, options, deadline, &run, &result)) {
    result.timed_out = true;
    kill(-pid, SIGKILL);
  }
  while (!run.exited && waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  if (options.kill_leftovers) kill(-pid, SIGKILL);
  int status = run.status;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (result.timed_out) result.exit_code = -1;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

std::string FindExecutable(const std::string& name, const std::vector<std::string>& also) {
  auto executable = [](const std::string& path) { return access(path.c_str(), X_OK) == 0; };
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  std::vector<std::string> dirs;
  const char* path = std::getenv("PATH");
  std::string list = path ? path : "";
  for (size_t start = 0; start <= list.size();) {
    const size_t colon = std::min(list.find(':', start), list.size());
    if (colon > start) dirs.push_back(list.substr(start, colon - start));
    start = colon + 1;
  }
  dirs.insert(dirs.end(), also.begin(), also.end());
  for (const std::string& dir : dirs) {
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
  }
  return "";
}

std::vector<std::string> NpmBinDirs() {
  std::vector<std::string> dirs{"/usr/local/bin"};
  if (const char* home = std::getenv("HOME"); home && *home) dirs.push_back(std::string(home) + "/.local/bin");
  return dirs;
}

}  // namespace attune::support
