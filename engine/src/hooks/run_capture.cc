// Copyright attune authors.
#include "hooks/run_capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace attune::hooks {
namespace {

using Clock = std::chrono::steady_clock;

Result<pid_t> SpawnWithStdout(const std::vector<std::string>& argv, int out_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // SIGPIPE back to its default: `attune run` ignores it, and that would survive the exec.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::NotFound("cannot start '" + argv[0] + "': " + std::strerror(rc));
  return pid;
}

}  // namespace

Result<std::string> RunCapture(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) return Status::InvalidArgument("RunCapture: empty argv");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  auto pid = SpawnWithStdout(argv, fds[1]);
  close(fds[1]);
  if (!pid.ok()) {
    close(fds[0]);
    return pid.status();
  }
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  std::string out;
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  bool timed_out = false;
  while (true) {
    if (Clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) < 0 && errno != EINTR) break;
    char buf[8192];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    if (n == 0) break;
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;
  }
  close(fds[0]);
  if (timed_out) kill(-*pid, SIGKILL);
  int status = 0;
  // Pipe closed: give the child the rest of the time to exit, then kill it.
  while (waitpid(*pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      timed_out = true;
      kill(-*pid, SIGKILL);
    }
    usleep(10000);
  }
  if (timed_out)
    return Status::DeadlineExceeded("'" + argv[0] + "' took longer than " +
                                    std::to_string(timeout_s) + " s");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Unavailable("'" + argv[0] + " " + (argv.size() > 1 ? argv[1] : "") +
                               "' failed (exit status " +
                               std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  return out;
}

}  // namespace attune::hooks
