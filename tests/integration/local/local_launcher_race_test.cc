// Copyright attune authors.
//
// The local launcher's resubmission race and the descriptors a job inherits, made deterministic.
//
// The race: an engine spawns a job wrapper and is killed before it writes spawn.json; the restarted
// engine polls (no start.json yet: unknown) and submits again; meanwhile the first wrapper takes
// wrapper.lock and writes start.json. Submit must then keep start.json and the lock, so that the
// wrapper it spawns refuses and the job runs once. The window between Submit's poll and its
// cleaning of the record is opened on purpose: a LocalLauncher whose Poll, once answered, runs a
// hook (the first wrapper's moves) before returning. Submit polls through the virtual Poll, and
// each test checks that the hook ran and saw "unknown", so a change that bypasses it fails here
// instead of silently testing nothing.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include "job_records.h"
#include "local_test_util.h"

namespace attune::local::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Waits for a condition; fails the test (REQUIRE) past the deadline.
void WaitFor(const std::function<bool()>& done, const std::string& what, double timeout_s = 20) {
  const double give_up = Seconds() + timeout_s;
  while (!done()) {
    INFO("waiting for " << what);
    REQUIRE(Seconds() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The restarted engine's launcher; the hook armed with AfterNextPoll runs once, after the next
// Poll has computed its answer and before the caller gets it.
class HookedLauncher : public LocalLauncher {
 public:
  using LocalLauncher::LocalLauncher;

  void AfterNextPoll(std::function<void()> hook) { hook_ = std::move(hook); }
  bool hook_ran() const { return hook_ran_; }
  JobState state_seen_by_hook() const { return state_seen_by_hook_; }

  Result<JobStatus> Poll(const std::string& name) override {
    Result<JobStatus> status = LocalLauncher::Poll(name);
    if (hook_) {
      std::function<void()> hook = std::move(hook_);
      hook_ = nullptr;
      hook_ran_ = true;
      if (status.ok()) state_seen_by_hook_ = status->state;
      hook();
    }
    return status;
  }

 private:
  std::function<void()> hook_;
  bool hook_ran_ = false;
  JobState state_seen_by_hook_ = JobState::kPending;  // not kUnknown until the hook ran
};

// Starts a job wrapper as the killed engine did (the test stands in for that engine).
pid_t StartWrapper(const std::string& record, const std::string& log, const std::string& script) {
  std::vector<std::string> args = {LOCAL_JOBWRAP_RUNNER, "job-exec", "--record", record, "--log",
                                   log, "--grace", "1", "--", "/bin/sh", "-c", script};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  REQUIRE(pid > 0);
  return pid;
}

// Reaps a child started by StartWrapper; its exit status, or -1 past the deadline.
int WaitExit(pid_t pid, double timeout_s = 20) {
  const double give_up = Seconds() + timeout_s;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (Seconds() > give_up) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What the killed engine left: submit.json only (it died before spawn.json).
void WriteFirstSubmission(const std::string& record, const JobSpec& spec) {
  fs::create_directories(record);
  REQUIRE(WriteJsonAtomically(record + "/" + kSubmitFile,
                              {{"name", spec.name}, {"log_path", spec.log_path}, {"devices", 1}})
              .ok());
}

json ReadRecord(const std::string& path) {
  Result<json> value = ReadJsonIfExists(path);
  REQUIRE(value.ok());
  return *value;
}

// The wrapper the resubmission spawned, from the spawn.json it wrote.
int SecondWrapperPid(const std::string& record) {
  int pid = ReadRecord(record + "/" + kSpawnFile).value("wrapper_pid", 0);
  REQUIRE(pid > 1);
  return pid;
}

std::string WaitingJob(const std::string& counter, const std::string& go) {
  return "echo start >> " + counter + "; while [ ! -e " + go + " ]; do sleep 0.05; done";
}

TEST_CASE("a first wrapper that starts the job in the resubmission's window keeps it: the second "
          "wrapper refuses and the job runs once", "[local][race]") {
  ScratchDir dir;
  HookedLauncher launcher(TestOptions(dir));
  const std::string counter = dir.File("starts"), go = dir.File("go");
  JobSpec spec = ShellJob(dir, "c1-late-0", WaitingJob(counter, go));
  const std::string record = launcher.RecordDir(spec.name);
  WriteFirstSubmission(record, spec);
  REQUIRE(launcher.Poll(spec.name)->state == JobState::kUnknown);

  pid_t first = 0;
  launcher.AfterNextPoll([&] {
    first = StartWrapper(record, dir.File("first-wrapper.log"), spec.launch.argv[2]);
    WaitFor([&] { return fs::exists(record + "/" + kStartFile); }, "the first wrapper's start");
  });
  Result<JobStatus> resubmitted = launcher.Submit(spec);
  REQUIRE(launcher.hook_ran());
  CHECK(launcher.state_seen_by_hook() == JobState::kUnknown);
  REQUIRE(resubmitted.ok());
  CHECK(resubmitted->state == JobState::kRunning);
  json start = ReadRecord(record + "/" + kStartFile);
  CHECK(start.value("wrapper_pid", 0) == first);
  CHECK(resubmitted->launcher_job_id == std::to_string(start.value("job_pid", 0)));

  // The second wrapper finds the lock held for the whole job and gives up.
  CHECK(WaitProcessGone(SecondWrapperPid(record), 20));
  CHECK_THAT(ReadText(spec.log_path),
             Catch::Contains("is owned by another live wrapper; not starting the job"));
  CHECK(launcher.Poll(spec.name)->state == JobState::kRunning);
  CHECK(CountLines(counter) == 1);

  std::ofstream(go) << "go\n";
  JobStatus done = WaitTerminal(launcher, spec.name);
  CHECK(done.state == JobState::kSucceeded);
  CHECK(WaitExit(first) == 0);
  CHECK(CountLines(counter) == 1);
  CHECK(MakeLauncher(dir)->Submit(spec)->state == JobState::kSucceeded);
  CHECK(CountLines(counter) == 1);
}

TEST_CASE("a first wrapper whose job ends in the resubmission's window keeps its start and end: "
          "the second wrapper refuses and nothing runs again", "[local][race]") {
  ScratchDir dir;
  HookedLauncher launcher(TestOptions(dir));
  const std::string counter = dir.File("starts");
  JobSpec spec = ShellJob(dir, "c1-late-done-0", "echo start >> " + counter);
  const std::string record = launcher.RecordDir(spec.name);
  WriteFirstSubmission(record, spec);

  int first_exit = -1;
  launcher.AfterNextPoll([&] {
    first_exit = WaitExit(StartWrapper(record, dir.File("first-wrapper.log"), spec.launch.argv[2]));
  });
  Result<JobStatus> resubmitted = launcher.Submit(spec);
  REQUIRE(launcher.hook_ran());
  CHECK(launcher.state_seen_by_hook() == JobState::kUnknown);
  CHECK(first_exit == 0);
  REQUIRE(resubmitted.ok());
  CHECK(resubmitted->state == JobState::kSucceeded);
  CHECK(resubmitted->exit_code == 0);

  // The lock is free now, so the second wrapper takes it, finds start.json and stops there.
  CHECK(WaitProcessGone(SecondWrapperPid(record), 20));
  CHECK_THAT(ReadText(spec.log_path),
             Catch::Contains("shows the job already started once; not starting it again"));
  json start = ReadRecord(record + "/" + kStartFile);
  json end = ReadRecord(record + "/" + kEndFile);
  CHECK(end.value("state", "") == "succeeded");
  CHECK(end.value("start_time", 0.0) == start.value("start_time", -1.0));
  CHECK(launcher.Poll(spec.name)->state == JobState::kSucceeded);
  CHECK(CountLines(counter) == 1);
}

// What a wrapper whose fork failed leaves: its lock file (free) and end.json, no start.json.
void WriteForkFailure(const std::string& record) {
  std::ofstream(record + "/" + kLockFile) << "999999\n";
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
  REQUIRE(WriteJsonAtomically(record + "/" + kEndFile,
                              {{"state", "failed"}, {"exit_code", 126}, {"signal", nullptr},
                               {"start_time", now}, {"end_time", now},
                               {"reason", "fork failed: Resource temporarily unavailable"}})
              .ok());
}

TEST_CASE("an end.json without start.json that appears in the resubmission's window is stale: it "
          "is removed and the job starts once", "[local][race]") {
  ScratchDir dir;
  HookedLauncher launcher(TestOptions(dir));
  const std::string counter = dir.File("starts");
  JobSpec spec = ShellJob(dir, "c1-forkfail-0", "echo start >> " + counter + "; echo ran");
  const std::string record = launcher.RecordDir(spec.name);
  WriteFirstSubmission(record, spec);

  launcher.AfterNextPoll([&] { WriteForkFailure(record); });
  Result<JobStatus> resubmitted = launcher.Submit(spec);
  REQUIRE(launcher.hook_ran());
  CHECK(launcher.state_seen_by_hook() == JobState::kUnknown);
  REQUIRE(resubmitted.ok());
  CHECK((resubmitted->state == JobState::kRunning || resubmitted->state == JobState::kSucceeded));
  JobStatus done = WaitTerminal(launcher, spec.name);
  CHECK(done.state == JobState::kSucceeded);
  CHECK(done.exit_code == 0);
  CHECK(done.reason.empty());
  CHECK(CountLines(counter) == 1);
  CHECK_THAT(ReadText(spec.log_path), Catch::Contains("ran"));
  CHECK(MakeLauncher(dir)->Submit(spec)->state == JobState::kSucceeded);
  CHECK(CountLines(counter) == 1);
}

TEST_CASE("a fork failure recorded before the resubmission polls is the job's answer and starts "
          "nothing", "[local][race]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  const std::string counter = dir.File("starts");
  JobSpec spec = ShellJob(dir, "c1-forkfail-1", "echo start >> " + counter);
  const std::string record = launcher->RecordDir(spec.name);
  WriteFirstSubmission(record, spec);
  WriteForkFailure(record);
  Result<JobStatus> resubmitted = launcher->Submit(spec);
  REQUIRE(resubmitted.ok());
  CHECK(resubmitted->state == JobState::kFailed);
  CHECK_THAT(resubmitted->reason, Catch::Contains("fork failed"));
  CHECK_FALSE(fs::exists(record + "/" + kSpawnFile));
  CHECK(CountLines(counter) == 0);
}

// Marks every descriptor above 2 of this process close-on-exec: descriptors it inherited from
// whoever runs the tests (a shell, ctest) would otherwise reach the job too (see the last case).
void MakeOwnDescriptorsCloseOnExec() {
  std::vector<int> fds;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    fds.push_back(std::stoi(entry.path().filename().string()));
  }
  for (int fd : fds) {
    int flags = fd > 2 ? ::fcntl(fd, F_GETFD) : -1;
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

// A job that lists its own descriptors (those of the shell, which opens none) into its log.
std::string ListingJob(const std::string& go) {
  return "echo fds-begin; ls -l /proc/$$/fd; echo fds-end; "
         "while [ ! -e " + go + " ]; do sleep 0.05; done";
}

// fd -> target from the `ls -l` lines between fds-begin and fds-end.
std::map<int, std::string> ListedDescriptors(const std::string& log) {
  std::map<int, std::string> fds;
  auto begin = log.find("fds-begin\n");
  if (begin == std::string::npos) return fds;
  std::istringstream in(log.substr(begin + 10));
  for (std::string line; std::getline(in, line) && line != "fds-end";) {
    auto arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;  // "total 0"
    auto space = line.rfind(' ', arrow - 1);
    fds[std::stoi(line.substr(space + 1, arrow - space - 1))] = line.substr(arrow + 4);
  }
  return fds;
}

// The descriptors of a live process whose target is `target`.
std::set<int> DescriptorsOn(int pid, const std::string& target) {
  std::set<int> fds;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    if (fs::read_symlink(entry.path(), link_ec).string() == target) {
      fds.insert(std::stoi(entry.path().filename().string()));
    }
  }
  return fds;
}

TEST_CASE("a job inherits only 0, 1 and 2 from the launcher and its wrapper, and the wrapper has "
          "no second descriptor on /dev/null or the log", "[local][fds]") {
  MakeOwnDescriptorsCloseOnExec();
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  const std::string go = dir.File("go");
  JobSpec spec = ShellJob(dir, "c1-fds-0", ListingJob(go));
  REQUIRE(launcher->Submit(spec).ok());
  const std::string log = fs::canonical(spec.log_path).string();
  WaitFor([&] { return ReadText(spec.log_path).find("fds-end") != std::string::npos; },
          "the job's listing");
  int wrapper = WrapperPidFromLock(launcher->RecordDir(spec.name));
  REQUIRE(ProcessAlive(wrapper));
  CHECK(DescriptorsOn(wrapper, "/dev/null") == std::set<int>{0});
  CHECK(DescriptorsOn(wrapper, log) == std::set<int>{1, 2});
  std::ofstream(go) << "go\n";
  CHECK(WaitTerminal(*launcher, spec.name).state == JobState::kSucceeded);

  std::string text = ReadText(spec.log_path);
  INFO("job log:\n" << text);
  std::map<int, std::string> fds = ListedDescriptors(text);
  CHECK(fds == std::map<int, std::string>{{0, "/dev/null"}, {1, log}, {2, log}});
}

// A descriptor the engine holds without close-on-exec (one it inherited from its own parent, or a
// library's) must not reach the job: SpawnDetached (spawn.cc) and the wrapper (job_wrapper.cc)
// mark everything above stderr close-on-exec before exec. This case failed before they did.
TEST_CASE("a descriptor the engine holds without close-on-exec does not reach the job",
          "[local][fds]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  const std::string go = dir.File("go"), leaked_path = dir.File("engine-private.txt");
  int leaked = ::open(leaked_path.c_str(), O_WRONLY | O_CREAT, 0644);  // no O_CLOEXEC on purpose
  REQUIRE(leaked > 2);
  JobSpec spec = ShellJob(dir, "c1-fds-1", ListingJob(go));
  std::ofstream(go) << "go\n";
  Result<JobStatus> submitted = launcher->Submit(spec);
  ::close(leaked);
  REQUIRE(submitted.ok());
  CHECK(WaitTerminal(*launcher, spec.name).state == JobState::kSucceeded);
  std::string text = ReadText(spec.log_path);
  INFO("job log:\n" << text);
  std::map<int, std::string> fds = ListedDescriptors(text);
  CHECK(fds.count(leaked) == 0);
  CHECK(fds.size() == 3);
}

}  // namespace
}  // namespace attune::local::testing
