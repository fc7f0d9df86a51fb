// The simulated logs through the Megatron stack's own parser and triage (built only when
// plugins/stacks/megatron is): what the sim writes is what the stack reads.
#include <catch2/catch.hpp>

#include "hardware.h"
#include "log_parser.h"
#include "megatron_stack.h"
#include "sim_launcher.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

struct Run {
  JobStatus status;
  std::string log;
};

Run RunJob(const Recipe& recipe, nlohmann::json with = {{"gpu", "H100"}, {"nodes", 1}}) {
  testing::TempDir dir;
  auto cluster = ParseClusterConfig(with, 5);
  REQUIRE(cluster.ok());
  SimLauncher launcher(*cluster, dir.str() + "/sim");
  REQUIRE(launcher.Submit(testing::Spec("p-1-1", recipe, dir.str())).ok());
  return {*launcher.Poll("p-1-1"), *launcher.ReadLog("p-1-1")};
}

TEST_CASE("the Megatron stack parses every simulated iteration and memory line", "[sim][megatron]") {
  Run r = RunJob(testing::SmallGpt());
  LogParse parse = megatron::ParseMegatronLog(r.log);
  CHECK(parse.training_started);
  CHECK(parse.warnings.empty());
  REQUIRE(parse.iterations.size() == 6);
  CHECK(parse.iterations[0].iteration == 1);
  CHECK(parse.iterations.back().iteration == 50);
  CHECK(parse.iterations.back().train_iters == 50);
  CHECK(parse.iterations.back().global_batch_size == 64);
  CHECK(parse.iterations.back().loss.has_value());
  CHECK(parse.iterations.back().tflops_per_gpu.has_value());
  CHECK(parse.memory.size() == 4);
  auto m = megatron::MeasureRun(parse, testing::SmallGpt());
  REQUIRE(m.ok());
  CHECK(m->step_time_s > 0);
  CHECK(m->tokens_per_s_per_gpu == Approx(64.0 * 2048 / m->step_time_s / 8).epsilon(0.001));
}

TEST_CASE("the Megatron stack triages simulated failures", "[sim][megatron]") {
  auto stack = megatron::MegatronStack::Open(ATTUNE_SOURCE_DIR);
  if (!stack.ok()) {
    WARN("stacks/megatron knowledge not loadable: " + stack.status().message());
    return;
  }
  JobEnd end{1, "failed", 100};
  Run oom = RunJob(testing::SmallGpt({{"--num-layers", "80"}, {"--hidden-size", "8192"},
                                      {"--num-attention-heads", "64"}, {"--micro-batch-size", "1"},
                                      {"--tensor-model-parallel-size", "8"}}));
  CHECK((*stack)->Triage(oom.log, end).kind == FailureKind::kOom);
  Run config = RunJob(testing::SmallGpt({{"--num-attention-heads", "12"}, {"--tensor-model-parallel-size", "8"}}));
  CHECK((*stack)->Triage(config.log, end).kind == FailureKind::kConfigError);
  Run timeout = RunJob(testing::SmallGpt(), {{"gpu", "H100"}, {"failures", {{"nccl_timeout", 1.0}}}});
  CHECK((*stack)->Triage(timeout.log, end).kind == FailureKind::kNcclTimeout);
  Run ok = RunJob(testing::SmallGpt());
  CHECK((*stack)->Triage(ok.log, JobEnd{0, "succeeded", 100}).kind == FailureKind::kNone);
}

}  // namespace
}  // namespace attune::sim
