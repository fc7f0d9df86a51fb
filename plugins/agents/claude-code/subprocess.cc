// Copyright attune authors.
#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

extern char** environ;

namespace attune::agents {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Owns the two read ends; closes them on every path.
struct Pipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  ~Pipes() {
    for (int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) close(fd);
    }
  }
};

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Reads what is available; returns false at EOF or error.
bool Drain(int fd, std::string* into, size_t limit) {
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    size_t room = into->size() < limit ? limit - into->size() : 0;
    into->append(buf, std::min(room, static_cast<size_t>(n)));
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

Result<pid_t> Spawn(const ProcessSpec& spec, Pipes* pipes) {
  if (spec.argv.empty()) return Status::InvalidArgument("RunProcess: empty argv");
  if (pipe2(pipes->out, O_CLOEXEC) != 0 || pipe2(pipes->err, O_CLOEXEC) != 0) {
    return Status::IoError(std::string("cannot create pipes: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipes->out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipes->err[1], 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group, so a timeout can kill its children too
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  auto argv = CStrings(spec.argv);
  auto envp = CStrings(spec.env);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(pipes->out[1]);
  close(pipes->err[1]);
  pipes->out[1] = pipes->err[1] = -1;
  if (rc != 0) {
    return Status::NotFound("cannot start '" + spec.argv[0] + "': " + std::strerror(rc) +
                            " (check the binary path and PATH)");
  }
  return pid;
}

void KillGroup(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
}

void RecordExit(int status, ProcessResult* r) {
  if (WIFEXITED(status)) r->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r->term_signal = WTERMSIG(status);
}

}  // namespace

Result<ProcessResult> RunProcess(const ProcessSpec& spec) {
  Pipes pipes;
  ATTUNE_ASSIGN_OR_RETURN(pid_t pid, Spawn(spec, &pipes));
  fcntl(pipes.out[0], F_SETFL, O_NONBLOCK);
  fcntl(pipes.err[0], F_SETFL, O_NONBLOCK);
  ProcessResult r;
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(spec.timeout_s));
  // After the child exits, its group is killed and the pipes get this long to reach EOF (a
  // grandchild that left the group could otherwise hold them open forever).
  constexpr auto kGrace = std::chrono::seconds(2);
  Clock::time_point exit_time;
  bool out_open = true, err_open = true, exited = false;
  int status = 0;
  while (out_open || err_open) {
    auto now = Clock::now();
    if (exited && now - exit_time > kGrace) break;
    if (!exited && now >= deadline) {
      r.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? pipes.out[0] : -1, POLLIN, 0},
                     {err_open ? pipes.err[0] : -1, POLLIN, 0}};
    int n = poll(fds, 2, 100);
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents) out_open = Drain(pipes.out[0], &r.out, spec.max_output_bytes);
    if (fds[1].revents) err_open = Drain(pipes.err[0], &r.err, spec.max_output_bytes);
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      exit_time = Clock::now();
      kill(-pid, SIGKILL);  // leftover tool processes of the agent
    }
  }
  // Both pipes closed before the child exited: it may still finish in time.
  while (!exited && !r.timed_out) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
    } else if (Clock::now() >= deadline) {
      r.timed_out = true;
    } else {
      usleep(20000);
    }
  }
  if (!exited) {
    KillGroup(pid);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  kill(-pid, SIGKILL);
  RecordExit(status, &r);
  r.elapsed_s = Seconds(Clock::now() - start);
  return r;
}

std::vector<std::string> MergedEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : overrides) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace attune::agents
