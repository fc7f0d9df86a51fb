// The Slurm launcher against a real one-node Slurm cluster (tools/ci/slurm-up.sh). Jobs are tiny
// shell commands: the machine has two cores shared with builds.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "process.h"
#include "slurm_test_support.h"
#include "conformance_report.h"
#include "test_files.h"

using attune::JobState;
using attune::StatusCode;
using namespace attune::slurm_test;

namespace {

const std::vector<std::string> kSleep(int seconds) { return {"sleep", std::to_string(seconds)}; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a tiny job runs to success, its log is read and its device-hours come from Slurm",
          "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  REQUIRE(launcher);
  std::string name = UniqueName("ok");
  auto spec = Spec(name, {"bash", "-c",
                          "echo hello $MASTER_ADDR:$MASTER_PORT rank=$NODE_RANK "
                          "world=$WORLD_SIZE; sleep 2"});
  spec.devices = 2;  // charged: the cluster has no GPUs, so the engine's device count is used
  auto begin = std::chrono::steady_clock::now();
  auto submitted = launcher->Submit(spec);
  REQUIRE(submitted.ok());
  CHECK_FALSE(submitted->launcher_job_id.empty());
  auto done = WaitTerminal(*launcher, name);
  double latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::cout << "slurm: submit -> succeeded of a 2 s job took " << latency << " s\n";
  REQUIRE(done.state == JobState::kSucceeded);
  CHECK(done.exit_code == 0);
  REQUIRE(done.start_time);
  REQUIRE(done.end_time);
  CHECK(*done.end_time - *done.start_time >= 2);
  CHECK(done.devices == 2);
  CHECK(done.DeviceHours() == Approx(2 * (*done.end_time - *done.start_time) / 3600.0));
  auto log = launcher->ReadLog(name);
  REQUIRE(log.ok());
  CHECK(log->find("hello ") != std::string::npos);
  CHECK(log->find("rank=0 world=2") != std::string::npos);
  CHECK(log->find(":2") != std::string::npos);  // MASTER_PORT = 20000 + id % 20000
}

TEST_CASE("submitting the same name twice queues one Slurm job", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  std::string name = UniqueName("twice");
  auto first = launcher->Submit(Spec(name, kSleep(1)));
  REQUIRE(first.ok());
  auto second = launcher->Submit(Spec(name, kSleep(1)));
  REQUIRE(second.ok());
  CHECK(second->launcher_job_id == first->launcher_job_id);
  CHECK(SlurmJobsNamed(name) == 1);
  auto done = WaitTerminal(*launcher, name);
  CHECK(done.state == JobState::kSucceeded);
  auto after = launcher->Submit(Spec(name, kSleep(1)));  // finished: still the same job
  REQUIRE(after.ok());
  CHECK(after->state == JobState::kSucceeded);
  CHECK(SlurmJobsNamed(name) == 1);
}

TEST_CASE("a new launcher finds a pending job by name, even without its record", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  // A job holding every core keeps the next one pending.
  std::string blocker = UniqueName("blocker");
  auto cores = MakeLauncher({{"cpus_per_task", 2}});
  REQUIRE(cores->Submit(Spec(blocker, kSleep(60))).ok());
  std::string name = UniqueName("pending");
  auto queued = launcher->Submit(Spec(name, kSleep(1)));
  REQUIRE(queued.ok());
  CHECK(queued->state == JobState::kPending);
  CHECK_FALSE(queued->start_time);

  auto fresh = MakeLauncher();
  auto seen = fresh->Poll(name);
  REQUIRE(seen.ok());
  CHECK(seen->state == JobState::kPending);
  CHECK(seen->launcher_job_id == queued->launcher_job_id);

  // A crash between sbatch and the record: the job is adopted from squeue, not resubmitted.
  std::filesystem::remove(ScratchDir() + "/records/" + name + ".json");
  auto after_crash = MakeLauncher()->Submit(Spec(name, kSleep(1)));
  REQUIRE(after_crash.ok());
  CHECK(after_crash->launcher_job_id == queued->launcher_job_id);
  CHECK(SlurmJobsNamed(name) == 1);

  REQUIRE(cores->Cancel(blocker).ok());
  auto done = WaitTerminal(*fresh, name);
  CHECK(done.state == JobState::kSucceeded);
  CHECK(SlurmJobsNamed(name) == 1);
}

TEST_CASE("another campaign's job with the same name is never taken for ours", "[slurm]") {
  EnsureSlurm();
  // Campaign ids can repeat across campaign directories; the records directory tells them apart.
  auto ours = MakeLauncher({{"state_dir", ScratchDir() + "/records-a"}});
  auto theirs = MakeLauncher({{"state_dir", ScratchDir() + "/records-b"}});
  std::string name = UniqueName("samename");
  auto first = theirs->Submit(Spec(name, kSleep(1)));
  REQUIRE(first.ok());
  auto polled = ours->Poll(name);
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kUnknown);
  auto second = ours->Submit(Spec(name, kSleep(1)));
  REQUIRE(second.ok());
  CHECK(second->launcher_job_id != first->launcher_job_id);
  CHECK(SlurmJobsNamed(name) == 2);
  CHECK(WaitTerminal(*ours, name).launcher_job_id == second->launcher_job_id);
  CHECK(WaitTerminal(*theirs, name).launcher_job_id == first->launcher_job_id);
}

TEST_CASE("a cancelled job reads as cancelled and is charged for the time it ran", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  std::string name = UniqueName("cancel");
  REQUIRE(launcher->Submit(Spec(name, kSleep(120))).ok());
  auto running = WaitRunning(*launcher, name);
  REQUIRE(running.state == JobState::kRunning);
  CHECK(running.start_time);
  CHECK_FALSE(running.end_time);
  REQUIRE(launcher->Cancel(name).ok());
  auto done = WaitTerminal(*launcher, name, 60);
  CHECK(done.state == JobState::kCancelled);
  CHECK(done.reason.find("CANCELLED") != std::string::npos);
  REQUIRE(done.end_time);
  CHECK(*done.end_time >= *done.start_time);
  CHECK(launcher->Cancel(name).ok());  // cancelling a finished job is a no-op
}

TEST_CASE("a failing command reads as failed with its exit code", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  std::string name = UniqueName("fail");
  REQUIRE(launcher->Submit(Spec(name, {"bash", "-c", "echo about to fail; exit 7"})).ok());
  auto done = WaitTerminal(*launcher, name);
  CHECK(done.state == JobState::kFailed);
  CHECK(done.exit_code == 7);
  CHECK(done.reason.find("exit code 7") != std::string::npos);
  CHECK(launcher->ReadLog(name)->find("about to fail") != std::string::npos);
}

TEST_CASE("a job past its time limit reads as timed out", "[slurm][.slow]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  std::string name = UniqueName("limit");
  REQUIRE(launcher->Submit(Spec(name, kSleep(600), /*time_limit_s=*/1)).ok());  // --time=1 (min)
  auto done = WaitTerminal(*launcher, name, 240);
  CHECK(done.state == JobState::kTimedOut);
  CHECK(done.reason.find("TIMEOUT") != std::string::npos);
  REQUIRE(done.end_time);
  CHECK(*done.end_time - *done.start_time >= 60);
}

TEST_CASE("an unknown partition is refused in sbatch's words and nothing is queued", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher({{"partition", "no-such-partition"}});
  std::string name = UniqueName("badpart");
  auto refused = launcher->Submit(Spec(name, kSleep(1)));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(refused.status().message().find("Invalid partition name specified") != std::string::npos);
  CHECK(SlurmJobsNamed(name) == 0);
  auto polled = launcher->Poll(name);
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kUnknown);
}

TEST_CASE("a time limit beyond the partition's is refused in sbatch's words", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  auto refused = launcher->Submit(Spec(UniqueName("toolong"), kSleep(1), 24 * 3600));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(refused.status().message().find("time limit") != std::string::npos);
}

TEST_CASE("an unreachable controller is reported as unavailable and nothing is submitted",
          "[slurm]") {
  EnsureSlurm();
  // The same cluster's configuration with the controller on a port nobody listens on.
  std::string conf = ScratchDir() + "/unreachable.conf";
  {
    std::ofstream out(conf);
    std::string text = Slurp("/etc/slurm/slurm.conf");
    auto at = text.find("SlurmctldPort=6817");
    REQUIRE(at != std::string::npos);
    text.replace(at, 18, "SlurmctldPort=6899");
    out << text;
  }
  auto launcher = MakeLauncher({{"slurm_conf", conf}, {"devices_per_node", 1}, {"max_nodes", 1}});
  std::string name = UniqueName("unreachable");
  auto refused = launcher->Submit(Spec(name, kSleep(1)));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kUnavailable);
  CHECK(refused.status().message().find("controller is unreachable") != std::string::npos);
  CHECK(SlurmJobsNamed(name) == 0);
  auto polled = launcher->Poll(name);
  CHECK(polled.status().code() == StatusCode::kUnavailable);
}

TEST_CASE("a name never submitted polls as unknown and has an empty log", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  auto polled = launcher->Poll(UniqueName("never"));
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kUnknown);
  CHECK(launcher->ReadLog(UniqueName("never"))->empty());
  CHECK(launcher->Cancel(UniqueName("never")).ok());
}

TEST_CASE("a job the controller has forgotten is answered from its exit marker", "[slurm]") {
  EnsureSlurm();
  // What a record and marker look like after the controller purged job 999999 (MinJobAge).
  std::string name = UniqueName("purged");
  std::string dir = ScratchDir() + "/" + name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/m") << "999999 start 1000\n999999 exit 3 1360\n";
  std::ofstream(ScratchDir() + "/records/" + name + ".json") << nlohmann::json{
      {"name", name},
      {"job_id", "999999"},
      {"job_dir", dir},
      {"log_path", dir + "/log"},
      {"marker_path", dir + "/m"},
      {"devices", 4},
      {"intent_time", 999}}.dump();
  auto polled = MakeLauncher()->Poll(name);
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kFailed);
  CHECK(polled->exit_code == 3);
  CHECK(polled->DeviceHours() == Approx(4 * 360 / 3600.0));
  CHECK(polled->reason.find("no longer known to the controller") != std::string::npos);
}

TEST_CASE("an interrupted submission that never reached Slurm is submitted now", "[slurm]") {
  EnsureSlurm();
  auto launcher = MakeLauncher();
  std::string name = UniqueName("intent");
  auto spec = Spec(name, kSleep(1));
  std::filesystem::create_directories(ScratchDir() + "/records");
  std::ofstream(ScratchDir() + "/records/" + name + ".json") << nlohmann::json{
      {"name", name},
      {"job_id", ""},
      {"job_dir", spec.job_dir},
      {"log_path", spec.log_path},
      {"marker_path", spec.job_dir + "/marker"},
      {"devices", 1},
      {"intent_time", 999}}.dump();
  auto polled = launcher->Poll(name);
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kUnknown);
  auto submitted = launcher->Submit(spec);
  REQUIRE(submitted.ok());
  CHECK(submitted->state != JobState::kUnknown);
  CHECK(SlurmJobsNamed(name) == 1);
  CHECK(WaitTerminal(*launcher, name).state == JobState::kSucceeded);
}

TEST_CASE("the slurm launcher keeps the launcher contract (attune launcher check)", "[slurm][conformance]") {
  EnsureSlurm();
  // The CLI users run on their own cluster, here on the test cluster. Slurm rounds the 5 s limit
  // up to a minute: the time-limit clause takes about 80 s.
  attune::slurm::ProcessOptions options;
  options.timeout_s = 600;
  auto r = attune::slurm::RunProcess({attune::testing::AttuneBinaryPath(), "launcher", "check", "slurm", "--with",
                                      R"({"poll_interval_s": 0.5})", "--json", "--time-limit", "5",
                                      "--job-timeout", "180"},
                                     options);
  REQUIRE(r.ok());
  attune::testing::CheckSuitePassed(r->exit_code, r->out, r->err, 10);
}
