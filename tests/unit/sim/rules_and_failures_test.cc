// Megatron's refusals, the OOM text, and injected failures (reference §4).
#include <catch2/catch.hpp>

#include "hardware.h"
#include "job_sim.h"
#include "sim_launcher.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

struct Run {
  JobStatus status;
  std::string log;
};

Run RunJob(const Recipe& recipe, nlohmann::json with = {{"gpu", "H100"}, {"nodes", 1}},
           const std::string& name = "camp-1-1") {
  testing::TempDir dir;
  auto cluster = ParseClusterConfig(with, 3);
  REQUIRE(cluster.ok());
  SimLauncher launcher(*cluster, dir.str() + "/sim");
  REQUIRE(launcher.Submit(testing::Spec(name, recipe, dir.str())).ok());
  Run run{*launcher.Poll(name), *launcher.ReadLog(name)};
  return run;
}

TEST_CASE("heads not divisible by TP fail at start-up with Megatron's ValueError", "[sim][rules]") {
  Run r = RunJob(testing::SmallGpt({{"--num-attention-heads", "12"}, {"--tensor-model-parallel-size", "8"}}));
  CHECK(r.status.state == JobState::kFailed);
  CHECK(r.status.exit_code == 1);
  CHECK_THAT(r.log, Catch::Contains("ValueError: num_attention_heads (12) must be a multiple of "
                                    "tensor_model_parallel_size (8)."));
  CHECK_THAT(r.log, !Catch::Contains("training ..."));
  CHECK_THAT(r.log, Catch::Contains("Traceback (most recent call last):"));
}

TEST_CASE("a global batch not divisible by MBS x DP fails with the calculator's message", "[sim][rules]") {
  Run r = RunJob(testing::SmallGpt({{"--global-batch-size", "60"}}));
  CHECK(r.status.state == JobState::kFailed);
  CHECK_THAT(r.log, Catch::Contains("AssertionError: global batch size (60) is not divisible by "
                                    "micro batch size (2) times data parallel size (4)"));
}

TEST_CASE("TP before Blackwell needs CUDA_DEVICE_MAX_CONNECTIONS=1", "[sim][rules]") {
  Recipe r = testing::SmallGpt();
  r.env.clear();
  CHECK_THAT(RunJob(r).log, Catch::Contains("CUDA_DEVICE_MAX_CONNECTIONS to 1"));
  CHECK(RunJob(r, {{"gpu", "B200"}}).status.state == JobState::kSucceeded);
}

TEST_CASE("layers not divisible by PP and interleaving without enough micro-batches are refused",
          "[sim][rules]") {
  CHECK_THAT(RunJob(testing::SmallGpt({{"--pipeline-model-parallel-size", "5"},
                                       {"--tensor-model-parallel-size", "1"},
                                       {"--sequence-parallel", "<absent>"}}))
                 .log,
             Catch::Contains("world size (8) is not divisible by total_model_size (5)"));
  CHECK_THAT(RunJob(testing::SmallGpt({{"--pipeline-model-parallel-size", "4"},
                                       {"--tensor-model-parallel-size", "1"},
                                       {"--num-layers", "22"},
                                       {"--sequence-parallel", "<absent>"}}))
                 .log,
             Catch::Contains("Number of layers should be divisible by the pipeline-model-parallel size"));
  // PP 4, DP 2, M = 8/(1·2) = 4 is fine for VPP; M = 6 leaves a remainder of 2.
  Run ok = RunJob(testing::SmallGpt({{"--pipeline-model-parallel-size", "4"},
                                     {"--num-virtual-stages-per-pipeline-rank", "2"},
                                     {"--micro-batch-size", "1"}, {"--global-batch-size", "8"},
                                     {"--tensor-model-parallel-size", "1"},
                                     {"--sequence-parallel", "<absent>"}}));
  CHECK(ok.status.state == JobState::kSucceeded);
  Run bad = RunJob(testing::SmallGpt({{"--pipeline-model-parallel-size", "4"},
                                      {"--num-virtual-stages-per-pipeline-rank", "2"},
                                      {"--micro-batch-size", "1"}, {"--global-batch-size", "12"},
                                      {"--tensor-model-parallel-size", "1"},
                                      {"--sequence-parallel", "<absent>"}}));
  CHECK_THAT(bad.log, Catch::Contains("RuntimeError: The remainder of M"));
  CHECK_THAT(bad.log, Catch::Contains("training ..."));  // raised inside the first step
}

TEST_CASE("a one-stage virtual pipeline at PP 1 and a large recompute count run, as in Megatron", "[sim][rules]") {
  // Megatron takes VPP 1 as no virtual pipeline and caps the recompute count at a stage's layers.
  Run vpp1 = RunJob(testing::SmallGpt({{"--pipeline-model-parallel-size", "1"},
                                       {"--num-virtual-stages-per-pipeline-rank", "1"}}));
  CHECK(vpp1.status.state == JobState::kSucceeded);
  Run vpp2 = RunJob(testing::SmallGpt({{"--pipeline-model-parallel-size", "1"},
                                       {"--num-virtual-stages-per-pipeline-rank", "2"}}));
  CHECK_THAT(vpp2.log, Catch::Contains("should be greater than 1 with interleaved schedule"));
  Run capped = RunJob(testing::SmallGpt({{"--recompute-granularity", "full"}, {"--recompute-method", "block"},
                                         {"--recompute-num-layers", "64"}}));
  CHECK(capped.status.state == JobState::kSucceeded);
  Run zero = RunJob(testing::SmallGpt({{"--recompute-granularity", "full"}, {"--recompute-method", "block"},
                                       {"--recompute-num-layers", "0"}}));
  CHECK_THAT(zero.log, Catch::Contains("recompute_num_layers must be between 1"));
}

TEST_CASE("FP8 on an A100 is refused by Transformer Engine", "[sim][rules]") {
  Run r = RunJob(testing::SmallGpt({{"--fp8-format", "hybrid"}}), {{"gpu", "A100"}});
  CHECK_THAT(r.log, Catch::Contains("Device compute capability 8.9 or higher required for FP8 execution."));
}

TEST_CASE("an argparse-level bad value exits 2 with argparse's message", "[sim][rules]") {
  Run r = RunJob(testing::SmallGpt({{"--micro-batch-size", "two"}}));
  CHECK(r.status.exit_code == 2);
  CHECK_THAT(r.log, Catch::Contains("pretrain_gpt.py: error: argument --micro-batch-size: invalid int value: 'two'"));
}

TEST_CASE("an oversized recipe fails with PyTorch's OOM text", "[sim][oom]") {
  Run r = RunJob(testing::SmallGpt({{"--num-layers", "80"}, {"--hidden-size", "8192"},
                                    {"--num-attention-heads", "64"}, {"--micro-batch-size", "1"},
                                    {"--tensor-model-parallel-size", "8"}}));
  CHECK(r.status.state == JobState::kFailed);
  CHECK_THAT(r.log, Catch::Contains("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "));
  CHECK_THAT(r.log, Catch::Contains("GPU 0 has a total capacity of 79.60 GiB of which "));
  CHECK_THAT(r.log, Catch::Contains("exitcode  : 1"));
  CHECK_THAT(r.log, !Catch::Contains("iteration        1/"));
}

TEST_CASE("an injected NCCL timeout prints the watchdog text after some iterations", "[sim][failures]") {
  Run r = RunJob(testing::SmallGpt(), {{"gpu", "H100"}, {"failures", {{"nccl_timeout", 1.0}}}});
  CHECK(r.status.state == JobState::kFailed);
  CHECK_THAT(r.log, Catch::Contains("Watchdog caught collective operation timeout: WorkNCCL(SeqNum="));
  CHECK_THAT(r.log, Catch::Contains("Timeout(ms)=600000) ran for 600081 milliseconds before timing out."));
  CHECK_THAT(r.log, Catch::Contains("Some NCCL operations have failed or timed out."));
  CHECK_THAT(r.log, Catch::Contains("Signal 6 (SIGABRT) received by PID"));
  CHECK_THAT(r.log, Catch::Contains("training ..."));
  CHECK(*r.status.end_time - *r.status.start_time > 600);  // the watchdog waited 10 minutes
}

TEST_CASE("an injected hang stops the log and the job runs into its time limit", "[sim][failures]") {
  Run r = RunJob(testing::SmallGpt(), {{"gpu", "H100"}, {"failures", {{"hang", 1.0}}}});
  CHECK(r.status.state == JobState::kTimedOut);
  CHECK(*r.status.end_time - *r.status.start_time == Approx(3600));
  CHECK_THAT(r.log, !Catch::Contains("[after training is done]"));
  CHECK_THAT(r.log, !Catch::Contains("Watchdog"));
}

TEST_CASE("an injected node failure is reported as one", "[sim][failures]") {
  Run r = RunJob(testing::SmallGpt(), {{"gpu", "H100"}, {"failures", {{"node_failure", 1.0}}}});
  CHECK(r.status.state == JobState::kNodeFailure);
}

TEST_CASE("injected failures are a pure function of seed and job name", "[sim][failures]") {
  FailureRates rates{0.2, 0.1, 0.0};
  int timeouts = 0, hangs = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string name = "c-" + std::to_string(i) + "-1";
    InjectedFailure f = DrawFailure(rates, 42, name);
    CHECK(f == DrawFailure(rates, 42, name));
    timeouts += f == InjectedFailure::kNcclTimeout;
    hangs += f == InjectedFailure::kHang;
  }
  CHECK(timeouts == Approx(200).margin(50));
  CHECK(hangs == Approx(100).margin(40));
  Run a = RunJob(testing::SmallGpt(), {{"gpu", "H100"}, {"failures", {{"nccl_timeout", 0.5}}}}, "c-7-1");
  Run b = RunJob(testing::SmallGpt(), {{"gpu", "H100"}, {"failures", {{"nccl_timeout", 0.5}}}}, "c-7-1");
  CHECK(a.log == b.log);
  CHECK(a.status.state == b.status.state);
}

}  // namespace
}  // namespace attune::sim
