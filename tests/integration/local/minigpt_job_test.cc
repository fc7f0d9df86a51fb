// Copyright attune authors.
//
// minigpt (tools/minigpt) run through the local launcher for a few iterations: the log holds
// Megatron-format iteration lines.

#include <string>

#include <catch2/catch.hpp>

#include "local_test_util.h"

namespace attune::local::testing {
namespace {

TEST_CASE("minigpt runs through the local launcher and logs Megatron iteration lines",
          "[local][minigpt]") {
  ScratchDir dir;
  auto launcher = MakeLauncher(dir);
  JobSpec spec = ShellJob(dir, "c1-minigpt-0", "");
  spec.launch.argv = {"/usr/bin/python3", std::string(ATTUNE_SOURCE_DIR) +
                                              "/tools/minigpt/pretrain_gpt.py",
                      "--num-layers", "2", "--hidden-size", "64", "--num-attention-heads", "2",
                      "--seq-length", "32", "--vocab-size", "128", "--micro-batch-size", "2",
                      "--global-batch-size", "4", "--train-iters", "3", "--log-interval", "1",
                      "--log-throughput"};
  spec.launch.env = {{"OMP_NUM_THREADS", "1"}};
  spec.time_limit_s = 120;
  REQUIRE(launcher->Submit(spec).ok());
  JobStatus done = WaitTerminal(*launcher, spec.name, 150);
  std::string log = *launcher->ReadLog(spec.name);
  INFO(log);
  CHECK(done.state == JobState::kSucceeded);
  CHECK_THAT(log, Catch::Contains("training ..."));
  CHECK_THAT(log, Catch::Contains(" iteration        3/       3 | consumed samples:           12 |"));
  CHECK_THAT(log, Catch::Contains("| lm loss: "));
  CHECK_THAT(log, Catch::Contains("[Rank 0] (after 1 iterations) memory (MB) | allocated: "));
}

}  // namespace
}  // namespace attune::local::testing
