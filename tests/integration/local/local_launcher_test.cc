// Copyright attune authors.
//
// The local launcher with real processes: status and log read back, reconciliation after the
// launcher object is gone, idempotent submit, time limits, cancel and launch errors.

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "job_records.h"
#include "local_test_util.h"

namespace attune::local::testing {
namespace {

void Sleep(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

TEST_CASE("a job runs and its status, times and log are read back", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  JobSpec spec = ShellJob(dir, "c1-base-0", "echo hello from the job; sleep 0.3; echo bye");
  spec.devices = 2;
  Result<JobStatus> submitted = launcher->Submit(spec);
  REQUIRE(submitted.ok());
  CHECK((submitted->state == JobState::kRunning || submitted->state == JobState::kSucceeded));
  CHECK_FALSE(submitted->launcher_job_id.empty());

  JobStatus done = WaitTerminal(*launcher, spec.name);
  CHECK(done.state == JobState::kSucceeded);
  REQUIRE(done.exit_code.has_value());
  CHECK(*done.exit_code == 0);
  REQUIRE(done.start_time.has_value());
  REQUIRE(done.end_time.has_value());
  double ran = *done.end_time - *done.start_time;
  CHECK(ran >= 0.3);
  CHECK(ran < 10);
  CHECK(done.devices == 2);
  CHECK(done.DeviceHours() == Approx(2 * ran / 3600.0));
  CHECK(std::abs(*done.end_time - launcher->Now()) < 30);  // Unix time, not a relative clock

  Result<std::string> log = launcher->ReadLog(spec.name);
  REQUIRE(log.ok());
  CHECK(log->find("hello from the job\nbye\n") != std::string::npos);
}

TEST_CASE("a failing job reports its exit code and the reason", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  REQUIRE(launcher->Submit(ShellJob(dir, "c1-fail-0", "echo boom >&2; exit 3")).ok());
  JobStatus done = WaitTerminal(*launcher, "c1-fail-0");
  CHECK(done.state == JobState::kFailed);
  CHECK(done.exit_code == 3);
  CHECK_THAT(done.reason, Catch::Contains("exited with status 3"));
  CHECK_THAT(*launcher->ReadLog("c1-fail-0"), Catch::Contains("boom"));
}

TEST_CASE("a name that was never submitted is unknown and has an empty log", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  Result<JobStatus> status = launcher->Poll("c1-never-0");
  REQUIRE(status.ok());
  CHECK(status->state == JobState::kUnknown);
  CHECK(launcher->ReadLog("c1-never-0")->empty());
  CHECK(launcher->Cancel("c1-never-0").code() == StatusCode::kNotFound);
  CHECK(launcher->Poll("../escape").status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a job that finished while the launcher was gone is reconciled from its records",
          "[local]") {
  ScratchDir dir;
  JobSpec spec = ShellJob(dir, "c1-gone-0", "sleep 0.3; echo finished alone");
  {
    auto first = MakeLauncher(dir);
    REQUIRE(first->Submit(spec).ok());
  }  // the "engine" goes away while the job runs
  Sleep(1.0);
  auto second = MakeLauncher(dir);
  JobStatus done = WaitTerminal(*second, spec.name, 10);
  CHECK(done.state == JobState::kSucceeded);
  CHECK(done.exit_code == 0);
  REQUIRE(done.start_time.has_value());
  REQUIRE(done.end_time.has_value());
  CHECK(*done.end_time - *done.start_time >= 0.3);
  CHECK_THAT(*second->ReadLog(spec.name), Catch::Contains("finished alone"));
}

TEST_CASE("a new launcher finds a job still running, then finished, and never starts it again",
          "[local]") {
  ScratchDir dir;
  const std::string counter = dir.File("starts");
  JobSpec spec = ShellJob(dir, "c1-live-0", "echo start >> " + counter + "; sleep 1.5");
  { REQUIRE(MakeLauncher(dir)->Submit(spec).ok()); }
  auto second = MakeLauncher(dir);
  Result<JobStatus> running = second->Poll(spec.name);
  REQUIRE(running.ok());
  CHECK(running->state == JobState::kRunning);
  CHECK(running->start_time.has_value());
  Result<JobStatus> again = second->Submit(spec);  // the engine resubmits after its restart
  REQUIRE(again.ok());
  CHECK(again->state == JobState::kRunning);
  CHECK(again->launcher_job_id == running->launcher_job_id);
  JobStatus done = WaitTerminal(*second, spec.name);
  CHECK(done.state == JobState::kSucceeded);
  CHECK(CountLines(counter) == 1);
}

TEST_CASE("a job whose submission was recorded but never started is unknown and can be submitted",
          "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  JobSpec spec = ShellJob(dir, "c1-intent-0", "echo ran once");
  // The state an engine crash leaves between writing submit.json and the wrapper starting.
  std::filesystem::create_directories(launcher->RecordDir(spec.name));
  REQUIRE(WriteJsonAtomically(launcher->RecordDir(spec.name) + "/submit.json",
                              {{"name", spec.name}, {"log_path", spec.log_path}, {"devices", 1}})
              .ok());
  CHECK(launcher->Poll(spec.name)->state == JobState::kUnknown);
  REQUIRE(launcher->Submit(spec).ok());
  CHECK(WaitTerminal(*launcher, spec.name).state == JobState::kSucceeded);
  CHECK_THAT(*launcher->ReadLog(spec.name), Catch::Contains("ran once"));
}

TEST_CASE("a wrapper that was spawned but has not taken its lock yet reads as pending", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  JobSpec spec = ShellJob(dir, "c1-slow-0", "echo started >> " + dir.File("starts"));
  const std::string record = launcher->RecordDir(spec.name);
  std::filesystem::create_directories(record);
  REQUIRE(WriteJsonAtomically(record + "/submit.json",
                              {{"name", spec.name}, {"log_path", spec.log_path}, {"devices", 1}})
              .ok());
  // This test process stands in for a live wrapper that is still starting.
  REQUIRE(WriteJsonAtomically(
              record + "/spawn.json",
              {{"wrapper_pid", ::getpid()}, {"wrapper_start_ticks", ProcessStartTicks(::getpid())}})
              .ok());
  CHECK(launcher->Poll(spec.name)->state == JobState::kPending);
  CHECK(launcher->Submit(spec)->state == JobState::kPending);
  Sleep(0.3);
  CHECK(CountLines(dir.File("starts")) == 0);
}

TEST_CASE("a job's devices are exported and, with pin_cpus, its CPU affinity is limited",
          "[local]") {
  ScratchDir dir;
  LocalOptions options = TestOptions(dir);
  options.pin_cpus = true;
  LocalLauncher launcher(options);
  JobSpec spec = ShellJob(dir, "c1-pin-0",
                          "echo devices=$ATTUNE_DEVICES name=$ATTUNE_JOB_NAME; "
                          "grep Cpus_allowed_list /proc/self/status");
  REQUIRE(launcher.Submit(spec).ok());
  CHECK(WaitTerminal(launcher, spec.name).state == JobState::kSucceeded);
  std::string log = *launcher.ReadLog(spec.name);
  CHECK_THAT(log, Catch::Contains("devices=1 name=c1-pin-0"));
  CHECK_THAT(log, Catch::Contains("Cpus_allowed_list:\t0\n"));
}

TEST_CASE("submitting an existing name returns the existing job and starts nothing", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  const std::string counter = dir.File("starts");
  JobSpec spec = ShellJob(dir, "c1-idem-0", "echo start >> " + counter + "; sleep 0.2");
  Result<JobStatus> first = launcher->Submit(spec);
  Result<JobStatus> second = launcher->Submit(spec);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->launcher_job_id == second->launcher_job_id);
  WaitTerminal(*launcher, spec.name);
  Result<JobStatus> after = MakeLauncher(dir)->Submit(spec);
  REQUIRE(after.ok());
  CHECK(after->state == JobState::kSucceeded);
  Sleep(0.3);
  CHECK(CountLines(counter) == 1);
}

TEST_CASE("the time limit stops the job's whole process group", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  const std::string pid_file = dir.File("child.pid");
  JobSpec spec =
      ShellJob(dir, "c1-limit-0", "sleep 60 & echo $! > " + pid_file + "; wait", /*limit=*/1.0);
  REQUIRE(launcher->Submit(spec).ok());
  JobStatus done = WaitTerminal(*launcher, spec.name, 15);
  CHECK(done.state == JobState::kTimedOut);
  CHECK(*done.end_time - *done.start_time < 5);
  CHECK_THAT(done.reason, Catch::Contains("time limit of 1 s reached"));
  int child = std::stoi(ReadText(pid_file));
  CHECK(WaitProcessGone(child, 5));
  CHECK_THAT(*launcher->ReadLog(spec.name), Catch::Contains("sending SIGTERM to process group"));
}

TEST_CASE("a job that ignores SIGTERM is killed after the grace period", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  JobSpec spec = ShellJob(dir, "c1-stubborn-0", "trap '' TERM; sleep 60", /*limit=*/0.5);
  REQUIRE(launcher->Submit(spec).ok());
  JobStatus done = WaitTerminal(*launcher, spec.name, 15);
  CHECK(done.state == JobState::kTimedOut);
  CHECK(done.exit_code == 128 + SIGKILL);
  CHECK_THAT(*launcher->ReadLog(spec.name), Catch::Contains("sending SIGKILL"));
}

TEST_CASE("cancel stops a running job and is a no-op for a finished one", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  JobSpec spec = ShellJob(dir, "c1-cancel-0", "sleep 60");
  REQUIRE(launcher->Submit(spec).ok());
  REQUIRE(launcher->Cancel(spec.name).ok());
  Result<JobStatus> status = launcher->Poll(spec.name);
  REQUIRE(status.ok());
  CHECK(status->state == JobState::kCancelled);
  CHECK(*status->end_time - *status->start_time < 5);
  CHECK(launcher->Cancel(spec.name).ok());
  CHECK(MakeLauncher(dir)->Poll(spec.name)->state == JobState::kCancelled);
}

TEST_CASE("a wrapper killed with SIGKILL is reported as a node failure and its job stopped",
          "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  JobSpec spec = ShellJob(dir, "c1-crash-0", "sleep 60");
  Result<JobStatus> started = launcher->Submit(spec);
  REQUIRE(started.ok());
  int job_pid = std::stoi(started->launcher_job_id);
  int wrapper_pid = WrapperPidFromLock(launcher->RecordDir(spec.name));
  REQUIRE(wrapper_pid > 1);
  REQUIRE(::kill(wrapper_pid, SIGKILL) == 0);
  JobStatus done = WaitTerminal(*launcher, spec.name, 10);
  CHECK(done.state == JobState::kNodeFailure);
  CHECK_THAT(done.reason, Catch::Contains("disappeared without recording an exit status"));
  CHECK(WaitProcessGone(job_pid, 5));
  CHECK(MakeLauncher(dir)->Poll(spec.name)->state == JobState::kNodeFailure);
}

TEST_CASE("launch errors are statuses and start nothing", "[local]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  auto submit_error = [&](JobSpec spec) {
    Result<JobStatus> result = launcher->Submit(spec);
    REQUIRE_FALSE(result.ok());
    CHECK(launcher->Poll(spec.name)->state == JobState::kUnknown);
    return result.status();
  };

  JobSpec missing = ShellJob(dir, "c1-missing-0", "");
  missing.launch.argv = {"/nonexistent/train.sh"};
  Status s = submit_error(missing);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("'/nonexistent/train.sh' does not exist"));

  std::ofstream(dir.File("not-executable.sh")) << "echo hi\n";
  JobSpec plain = ShellJob(dir, "c1-noexec-0", "");
  plain.launch.argv = {dir.File("not-executable.sh")};
  CHECK_THAT(submit_error(plain).message(), Catch::Contains("is not an executable file"));

  JobSpec script = ShellJob(dir, "c1-noscript-0", "");
  script.launch.argv = {"/usr/bin/python3", "no_such_pretrain.py"};
  CHECK_THAT(submit_error(script).message(), Catch::Contains("entry point script"));

  JobSpec not_on_path = ShellJob(dir, "c1-nopath-0", "");
  not_on_path.launch.argv = {"attune-no-such-program"};
  CHECK_THAT(submit_error(not_on_path).message(), Catch::Contains("was not found in PATH"));

  std::ofstream(dir.File("a-file")) << "x";
  JobSpec bad_log = ShellJob(dir, "c1-badlog-0", "true");
  bad_log.log_path = dir.File("a-file/job.log");
  CHECK_THAT(submit_error(bad_log).message(), Catch::Contains("cannot create log directory"));

  JobSpec too_big = ShellJob(dir, "c1-big-0", "true");
  too_big.devices = 5;
  CHECK_THAT(submit_error(too_big).message(), Catch::Contains("asks for 5 devices"));

  LocalOptions no_wrapper = TestOptions(dir);
  no_wrapper.wrapper = {"/nonexistent/attune", "job-exec"};
  LocalLauncher broken(no_wrapper);
  Result<JobStatus> result = broken.Submit(ShellJob(dir, "c1-nowrap-0", "true"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(result.status().message(), Catch::Contains("set ATTUNE_BIN"));
}

TEST_CASE("options come from the plugin context with clear errors", "[local]") {
  PluginContext context;
  context.campaign_dir = "/tmp/campaign-x";
  context.attune_binary = "/opt/attune/bin/attune";
  Result<LocalOptions> options = OptionsFromContext(context);
  REQUIRE(options.ok());
  CHECK(options->state_dir == "/tmp/campaign-x/launcher-local");
  CHECK(options->wrapper == DefaultWrapper("/opt/attune/bin/attune"));
  REQUIRE(options->wrapper.size() == 5);  // attune --plugin-path DIR local job-exec
  CHECK(options->wrapper[0] == "/opt/attune/bin/attune");
  CHECK(options->wrapper[1] == "--plugin-path");
  CHECK(std::vector<std::string>(options->wrapper.end() - 2, options->wrapper.end()) ==
        std::vector<std::string>{"local", "job-exec"});
  CHECK(LocalLauncher(*options).Cluster().device_type == "cpu");

  context.config = {{"grace_s", "soon"}};
  CHECK_THAT(OptionsFromContext(context).status().message(),
             Catch::Contains("with.grace_s: expected a number >= 0, found 'soon'"));
  context.config = {{"devices", 2}};
  CHECK_THAT(OptionsFromContext(context).status().message(),
             Catch::Contains("with.devices: unknown key 'devices'; expected one of: device_type, "
                             "devices_per_node"));
  context.config = {{"device_type", "tpu"}};
  CHECK_THAT(OptionsFromContext(context).status().message(),
             Catch::Contains("with.device_type: expected one of 'cpu', 'gpu', found 'tpu'"));
}

}  // namespace
}  // namespace attune::local::testing
