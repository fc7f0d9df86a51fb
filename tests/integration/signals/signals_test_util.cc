// Copyright attune authors.

#include "signals_test_util.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "test_files.h"

namespace attune::signals_test {
namespace {

namespace fs = std::filesystem;

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Outside ctest (which sets them) the engine still finds this build's plugins and the stacks' data.
void DefaultEnvironment() {
  ::setenv("ATTUNE_PLUGIN_PATH", ATTUNE_PLUGIN_DIR, 0);
  ::setenv("ATTUNE_DATA_DIR", ATTUNE_SOURCE_DIR, 0);
  ::setenv("ATTUNE_BIN", testing::AttuneBinaryPath().c_str(), 0);
}

// The token that names everything one Scratch creates (directory, campaign ids, job names).
std::string NewToken() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  std::ostringstream token;  // (not string concatenation: g++ 12 -O2 warns falsely on that here)
  token << 's' << ::getpid() << 'x' << counter++ << 'r' << rd() % 100000;
  return token.str();
}

// Reads a whole /proc file that may contain NULs (cmdline, environ).
std::string ProcFile(pid_t pid, const char* name) {
  return testing::ReadWholeFile("/proc/" + std::to_string(pid) + "/" + name);
}

std::string RecordDir(const std::string& dir, const std::string& job) {
  return dir + "/launcher-local/jobs/" + job;
}

}  // namespace

Scratch::Scratch() {
  DefaultEnvironment();
  token_ = NewToken();
  root_ = (fs::temp_directory_path() / ("attune-signals-" + token_)).string();
  fs::remove_all(root_);
  fs::create_directories(root_);
}

Scratch::~Scratch() {
  // Jobs left running (a test failed before its campaign finished) must not outlive the test.
  for (pid_t pid : ProcessesMentioning(token_)) ::kill(pid, SIGKILL);
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::string Scratch::Campaign(const std::string& what) const {
  return root_ + "/" + what + "-" + token_;
}

std::string Workflow(const std::string& file) {
  return std::string(ATTUNE_SOURCE_DIR) + "/tests/integration/signals/" + file;
}

namespace {

// In a forked child: the standard streams, the working directory, then exec. Exits 126/127 when
// any of it fails.
[[noreturn]] void Exec(char* const* argv, int in, int out, int err, const char* cwd) {
  if (in < 0 || out < 0 || err < 0 || (cwd && ::chdir(cwd) != 0)) ::_exit(126);
  ::dup2(in, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  ::execv(argv[0], argv);
  ::_exit(127);
}

std::vector<char*> Argv(std::vector<std::string>& strings) {
  std::vector<char*> argv;
  for (auto& a : strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

}  // namespace

Engine Start(const Scratch& s, const std::string& tag, const std::vector<std::string>& args,
             Piped piped) {
  static std::atomic<int> counter{0};
  Engine e;
  const std::string stem = s.Path(tag + "-" + std::to_string(counter++));
  e.out_path = stem + ".out";
  e.err_path = stem + ".err";
  std::vector<std::string> strings = {testing::AttuneBinaryPath()};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv = Argv(strings);
  std::vector<std::string> tee_strings = {"/usr/bin/tee", e.out_path};
  std::vector<char*> tee_argv = Argv(tee_strings);
  int pipe_fds[2] = {-1, -1};
  if (piped == Piped::kTee) REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  const std::string cwd = ATTUNE_SOURCE_DIR;
  e.pid = ::fork();
  REQUIRE(e.pid >= 0);
  if (e.pid == 0) {
    ::setpgid(0, 0);  // its own group, like a shell's foreground job: Ctrl-C is kill(-pgid, SIGINT)
    int out = piped == Piped::kTee ? pipe_fds[1]
                                   : ::open(e.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    Exec(argv.data(), ::open("/dev/null", O_RDONLY), out,
         ::open(e.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), cwd.c_str());
  }
  ::setpgid(e.pid, e.pid);  // both sides, so that a kill(-pgid) right after fork cannot miss
  if (piped == Piped::kTee) {
    e.tee_pid = ::fork();
    REQUIRE(e.tee_pid >= 0);
    if (e.tee_pid == 0) {
      ::setpgid(0, e.pid);
      Exec(tee_argv.data(), pipe_fds[0], ::open("/dev/null", O_WRONLY),
           ::open("/dev/null", O_WRONLY), nullptr);
    }
    ::setpgid(e.tee_pid, e.pid);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
  }
  return e;
}

std::optional<int> WaitExit(pid_t pid, double timeout_s) {
  const double give_up = Seconds() + timeout_s;
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (done < 0 && errno != EINTR) return -1;
    if (Seconds() > give_up) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void KillAndReap(const Engine& e) {
  if (e.pid <= 0) return;
  ::kill(-e.pid, SIGKILL);
  ::waitpid(e.pid, nullptr, 0);
  if (e.tee_pid > 0) ::waitpid(e.tee_pid, nullptr, 0);
}

Outcome Attune(const Scratch& s, const std::vector<std::string>& args, double timeout_s) {
  Engine e = Start(s, "attune", args);
  std::optional<int> code = WaitExit(e.pid, timeout_s);
  if (!code) KillAndReap(e);
  Outcome o;
  o.code = code.value_or(-1);
  o.out = testing::ReadWholeFile(e.out_path);
  o.err = testing::ReadWholeFile(e.err_path);
  return o;
}

std::vector<json> Events(const Scratch& s, const std::string& dir) {
  Outcome o = Attune(s, {"events", dir, "--json"}, 60);
  INFO("attune events " << dir << ": " << o.err);
  REQUIRE(o.code == 0);
  std::vector<json> out;
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

json Status(const Scratch& s, const std::string& dir) {
  Outcome o = Attune(s, {"status", dir, "--json"}, 60);
  INFO("attune status " << dir << ": " << o.err);
  REQUIRE(o.code == 0);
  return json::parse(o.out);
}

std::vector<json> PrintedEvents(const Engine& e) {
  std::vector<json> out;
  const std::string text = testing::ReadWholeFile(e.out_path);
  size_t begin = 0;
  for (size_t end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    json event = json::parse(text.substr(begin, end - begin), nullptr, false);
    if (event.is_object() && event.contains("type")) out.push_back(std::move(event));
  }
  return out;
}

std::optional<json> WaitPrinted(const Engine& e, const std::function<bool(const json&)>& match,
                                double timeout_s) {
  std::optional<json> found;
  WaitUntil(
      [&] {
        for (const json& event : PrintedEvents(e)) {
          if (match(event)) {
            found = event;
            return true;
          }
        }
        return !ProcessAlive(e.pid);
      },
      timeout_s);
  return found;
}

bool WaitUntil(const std::function<bool()>& done, double timeout_s) {
  const double give_up = Seconds() + timeout_s;
  while (!done()) {
    if (Seconds() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  const std::string text = ProcFile(pid, "stat");
  auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

bool AttuneCatchesStopSignals(pid_t pid) {
  // Before exec the child is a copy of this test, whose handlers (Catch2's) would look the same.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  if (ec || exe != fs::canonical(testing::AttuneBinaryPath(), ec)) return false;
  std::istringstream status(ProcFile(pid, "status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    const unsigned long long caught = std::stoull(line.substr(7), nullptr, 16);
    const unsigned long long wanted = (1ULL << (SIGINT - 1)) | (1ULL << (SIGTERM - 1));
    return (caught & wanted) == wanted;
  }
  return false;
}

std::vector<pid_t> ProcessesMentioning(const std::string& needle) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid() || !ProcessAlive(pid)) continue;
    if (ProcFile(pid, "cmdline").find(needle) != std::string::npos ||
        ProcFile(pid, "environ").find(needle) != std::string::npos) {
      out.push_back(pid);
    }
  }
  return out;
}

json StartRecord(const std::string& dir, const std::string& job) {
  const std::string text = testing::ReadWholeFile(RecordDir(dir, job) + "/start.json");
  return text.empty() ? json::object() : json::parse(text);
}

bool HasEndRecord(const std::string& dir, const std::string& job) {
  return fs::exists(RecordDir(dir, job) + "/end.json");
}

std::vector<std::string> Submissions(const std::string& dir) {
  std::vector<std::string> out;
  std::istringstream lines(testing::ReadWholeFile(dir + "/launcher-local/submissions.log"));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string ReadText(const std::string& path) { return testing::ReadWholeFile(path); }

std::vector<json> OfType(const std::vector<json>& events, const std::string& type) {
  std::vector<json> out;
  for (const json& e : events) {
    if (e.value("type", "") == type) out.push_back(e);
  }
  return out;
}

std::vector<std::string> RunArgs(const std::string& workflow, const std::string& dir,
                                 const std::vector<std::string>& more) {
  // The directory's name as the campaign id, so that job names are known in advance.
  std::vector<std::string> args = {"run", Workflow(workflow), "--dir", dir, "--json",
                                   "--campaign-id", fs::path(dir).filename().string()};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

bool IsEvent(const json& e, const std::string& type, const std::string& job) {
  return e.value("type", "") == type &&
         (job.empty() || (e.contains("data") && e["data"].value("job", "") == job));
}

std::vector<json> JobEvents(const std::vector<json>& events, const std::string& type,
                            const std::string& job) {
  std::vector<json> out;
  for (const json& e : events) {
    if (IsEvent(e, type, job)) out.push_back(e);
  }
  return out;
}

void CheckVerifies(const Scratch& s, const std::string& dir) {
  Outcome v = Attune(s, {"verify", dir});
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  CHECK_THAT(v.out, Catch::Contains("chain intact"));
}

void CheckFinishedCampaign(const Scratch& s, const std::string& dir) {
  std::vector<json> events = Events(s, dir);
  REQUIRE(!events.empty());
  REQUIRE(events.back().value("type", "") == "CampaignFinished");
  std::set<std::string> submitted;
  double charged = 0;
  for (const json& req : OfType(events, "JobRequested")) {
    const std::string job = req["data"]["job"];
    INFO("job " << job);
    CHECK(JobEvents(events, "JobFinished", job).size() == 1);
    CHECK(JobEvents(events, "JobSubmitted", job).size() <= 1);
    if (!JobEvents(events, "JobSubmitted", job).empty()) submitted.insert(job);
  }
  for (const json& fin : OfType(events, "JobFinished")) charged += fin["data"].value("charged_gpu_hours", 0.0);
  std::vector<std::string> started = Submissions(dir);
  CHECK(std::set<std::string>(started.begin(), started.end()).size() == started.size());
  CHECK(std::set<std::string>(started.begin(), started.end()) == submitted);
  json status = Status(s, dir);
  CHECK(status["state"] == "finished");
  CHECK(status["budget"]["reserved_gpu_hours"].get<double>() == Approx(0).margin(1e-12));
  CHECK(status["budget"]["charged_gpu_hours"].get<double>() == Approx(charged).epsilon(1e-9));
  CHECK(events.back()["data"]["charged_gpu_hours"].get<double>() == Approx(charged).epsilon(1e-9));
  CHECK(status["jobs_in_flight"].empty());
  CheckVerifies(s, dir);
}

}  // namespace attune::signals_test
