// Copyright attune authors.
#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

extern char** environ;

namespace attune::kuberay {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> Environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) vars[k] = v;
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

// Closes whatever it still holds.
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

// Writes `input` and reads both outputs until they close or the deadline passes. False: timeout.
bool Exchange(Fds& fds, const std::string& input, Clock::time_point deadline, CommandResult* r) {
  size_t written = 0;
  if (input.empty()) fds.Close(1);
  std::string* sinks[2] = {&r->out, &r->err};
  char buffer[16384];
  while (fds.fd[2] >= 0 || fds.fd[4] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p[3] = {{fds.fd[2], POLLIN, 0}, {fds.fd[4], POLLIN, 0}, {fds.fd[1], POLLOUT, 0}};
    int ready = poll(p, 3, static_cast<int>(left.count()));
    if (ready <= 0) continue;  // EINTR or the deadline: the loop checks again
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || p[i].revents == 0) continue;
      ssize_t n = read(p[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds.Close(2 + 2 * i);
      }
    }
    if (p[2].fd >= 0 && p[2].revents != 0) {
      ssize_t n = write(p[2].fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if ((n < 0 && errno != EINTR && errno != EAGAIN) || written == input.size()) fds.Close(1);
    }
  }
  return true;
}

}  // namespace

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const std::string& input,
                                 double timeout_s,
                                 const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return Status::InvalidArgument("RunCommand: empty argv");
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
  posix_spawn_file_actions_adddup2(&actions, fds.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, fds.fd[3], 1);
  posix_spawn_file_actions_adddup2(&actions, fds.fd[5], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so a timeout kills what it started too; SIGPIPE back to its default
  // (attune run ignores it, and an ignored disposition survives exec).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  std::vector<std::string> words = argv, env_words = Environment(env);
  auto c_argv = Pointers(words);
  auto c_env = Pointers(env_words);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, c_argv[0], &actions, &attr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::NotFound("cannot run '" + argv[0] + "': " + std::strerror(rc) +
                            " (is it installed and on PATH?)");
  }
  fds.Close(0);
  fds.Close(3);
  fds.Close(5);
  CommandResult result;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s));
  if (!Exchange(fds, input, deadline, &result)) {
    result.timed_out = true;
    kill(-pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace attune::kuberay
