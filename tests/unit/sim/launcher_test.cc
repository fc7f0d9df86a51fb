// The launcher contract (launcher.h): idempotent submit, find-by-name from a fresh object, a
// monotone virtual clock, determinism, speed.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>

#include "hardware.h"
#include "sim_launcher.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

ClusterSpec Cluster(nlohmann::json with = {{"gpu", "H100"}, {"nodes", 2}}) {
  auto c = ParseClusterConfig(with, 11);
  REQUIRE(c.ok());
  return *c;
}

TEST_CASE("a submitted job is running, then finished on the first poll", "[sim][launcher]") {
  testing::TempDir dir;
  SimLauncher launcher(Cluster(), dir.str() + "/sim");
  CHECK(launcher.PollIntervalSeconds() == 0);
  auto submitted = launcher.Submit(testing::Spec("camp-1-1", testing::SmallGpt(), dir.str()));
  REQUIRE(submitted.ok());
  CHECK(submitted->state == JobState::kRunning);
  CHECK(*submitted->start_time == 0);
  auto polled = launcher.Poll("camp-1-1");
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kSucceeded);
  CHECK(*polled->end_time > 90);  // start-up alone is 90 virtual seconds
  CHECK(launcher.Now() == *polled->end_time);
  CHECK(polled->devices == 8);
  CHECK(polled->DeviceHours() > 0);
}

TEST_CASE("submitting a name twice starts nothing and returns the same job", "[sim][launcher]") {
  testing::TempDir dir;
  SimLauncher launcher(Cluster(), dir.str() + "/sim");
  auto spec = testing::Spec("camp-2-1", testing::SmallGpt(), dir.str());
  auto first = launcher.Submit(spec);
  REQUIRE(first.ok());
  REQUIRE(launcher.Poll("camp-2-1").ok());
  double clock = launcher.Now();
  auto log_time = std::filesystem::last_write_time(spec.log_path);
  spec.recipe = testing::SmallGpt({{"--micro-batch-size", "4"}});  // even a different recipe
  auto again = launcher.Submit(spec);
  REQUIRE(again.ok());
  CHECK(again->state == JobState::kSucceeded);
  CHECK(again->start_time == first->start_time);
  CHECK(launcher.Now() == clock);
  CHECK(std::filesystem::last_write_time(spec.log_path) == log_time);
  // The audit trail the kill -9 suite reads names the job once.
  CHECK(testing::ReadText(dir.str() + "/sim/submissions.log") == "camp-2-1\n");
}

TEST_CASE("a job its stack cannot map to a parallel plan is refused and nothing runs", "[sim][launcher]") {
  testing::TempDir dir;
  SimLauncher launcher(Cluster(), dir.str() + "/sim");
  // The Megatron mapping needs the network's shape from Megatron's flags.
  auto spec = testing::Spec("camp-shape-1", testing::SmallGpt({{"--num-layers", "<absent>"}}), dir.str());
  auto submitted = launcher.Submit(spec);
  REQUIRE_FALSE(submitted.ok());
  CHECK_THAT(submitted.status().message(),
             Catch::Contains("camp-shape-1") && Catch::Contains("has no --num-layers"));
  CHECK(launcher.Poll("camp-shape-1")->state == JobState::kUnknown);
  // Without its stack there is no plan to model.
  auto orphan = testing::Spec("camp-orphan-1", testing::SmallGpt(), dir.str());
  orphan.stack = nullptr;
  auto refused = launcher.Submit(orphan);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("without its stack"));
  CHECK(launcher.Poll("camp-orphan-1")->state == JobState::kUnknown);
  CHECK(testing::ReadText(dir.str() + "/sim/submissions.log").empty());
}

TEST_CASE("a fresh launcher finds the jobs of an earlier one and keeps the clock", "[sim][launcher]") {
  testing::TempDir dir;
  std::string state = dir.str() + "/sim";
  std::string log;
  double clock = 0;
  {
    SimLauncher first(Cluster(), state);
    REQUIRE(first.Submit(testing::Spec("camp-3-1", testing::SmallGpt(), dir.str())).ok());
    REQUIRE(first.Poll("camp-3-1").ok());
    REQUIRE(first.Submit(testing::Spec("camp-3-2", testing::SmallGpt(), dir.str())).ok());
    log = *first.ReadLog("camp-3-1");
    clock = first.Now();
  }
  SimLauncher second(Cluster(), state);  // as after an engine crash
  CHECK(second.Now() == clock);
  auto done = second.Poll("camp-3-1");
  REQUIRE(done.ok());
  CHECK(done->state == JobState::kSucceeded);
  CHECK(*second.ReadLog("camp-3-1") == log);
  auto pending = second.Poll("camp-3-2");  // submitted, never polled before the crash
  REQUIRE(pending.ok());
  CHECK(pending->state == JobState::kSucceeded);
  CHECK(second.Now() >= clock);
  auto unknown = second.Poll("camp-3-9");
  REQUIRE(unknown.ok());
  CHECK(unknown->state == JobState::kUnknown);
  CHECK(second.ReadLog("camp-3-9")->empty());
}

TEST_CASE("a lost clock file is recovered from the finished jobs' records", "[sim][launcher]") {
  testing::TempDir dir;
  std::string state = dir.str() + "/sim";
  double end = 0;
  {
    SimLauncher first(Cluster(), state);
    REQUIRE(first.Submit(testing::Spec("camp-6-1", testing::SmallGpt(), dir.str())).ok());
    end = *first.Poll("camp-6-1")->end_time;
  }
  std::filesystem::remove(state + "/clock");
  SimLauncher second(Cluster(), state);
  CHECK(second.Now() == end);
}

TEST_CASE("the same seed and job name give the same log; another name other timings", "[sim][launcher]") {
  testing::TempDir a, b;
  SimLauncher one(Cluster(), a.str() + "/sim");
  SimLauncher two(Cluster(), b.str() + "/sim");
  REQUIRE(one.Submit(testing::Spec("camp-4-1", testing::SmallGpt(), a.str())).ok());
  REQUIRE(two.Submit(testing::Spec("camp-4-1", testing::SmallGpt(), b.str())).ok());
  REQUIRE(two.Submit(testing::Spec("camp-4-2", testing::SmallGpt(), b.str())).ok());
  CHECK(*one.ReadLog("camp-4-1") == *two.ReadLog("camp-4-1"));
  CHECK(*two.ReadLog("camp-4-1") != *two.ReadLog("camp-4-2"));
}

TEST_CASE("Cluster() reports virtual time and the GPU generation", "[sim][launcher]") {
  SimLauncher launcher(Cluster({{"gpu", "B200"}, {"nodes", 4}, {"gpus_per_node", 8}}), "");
  ClusterInfo info = launcher.Cluster();
  CHECK(info.virtual_time);
  CHECK(info.device_type == "B200");
  CHECK(info.compute_capability_major == 10);
  CHECK(info.max_nodes == 4);
  CHECK(info.peak_tflops == 2250);
}

TEST_CASE("an unknown key in with: is refused with the known ones", "[sim][launcher]") {
  auto c = ParseClusterConfig({{"gpus", "H100"}}, 1);
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(c.status().message(), Catch::Contains("with.gpus: unknown key") && Catch::Contains("gpu,"));
}

TEST_CASE("a job larger than the cluster is refused at submit", "[sim][launcher]") {
  testing::TempDir dir;
  SimLauncher launcher(Cluster({{"gpu", "H100"}, {"nodes", 1}}), "");
  Recipe big = testing::SmallGpt();
  big.topology.nodes = 2;
  auto r = launcher.Submit(testing::Spec("camp-5-1", big, dir.str()));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("needs 16 GPUs but the cluster has 8"));
  CHECK(launcher.Poll("camp-5-1")->state == JobState::kUnknown);
}

TEST_CASE("a hundred candidate jobs simulate in well under five seconds", "[sim][launcher]") {
  testing::TempDir dir;
  SimLauncher launcher(Cluster(), dir.str() + "/sim");
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    std::string name = "speed-" + std::to_string(i) + "-1";
    Recipe r = testing::SmallGpt({{"--micro-batch-size", std::to_string(1 << (i % 3))}});
    REQUIRE(launcher.Submit(testing::Spec(name, r, dir.str())).ok());
    REQUIRE(launcher.Poll(name)->state == JobState::kSucceeded);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5.0);
}

}  // namespace
}  // namespace attune::sim
