// An AutoModel recipe through the sim launcher: the AutoModel stack maps it to a plan, the launcher
// models it, the stack renders AutoModel's log, and the stack's own parser, measurement and triage
// read that log back.
#include <catch2/catch.hpp>

#include <cmath>

#include "automodel_stack.h"
#include "hardware.h"
#include "recipe_import.h"
#include "sim_launcher.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

const Stack& AutoModel() { return *testing::AutoModelStackForSim(); }

Recipe AutoModelRecipe(std::initializer_list<std::pair<std::string, std::optional<std::string>>> changes = {}) {
  std::string dir = std::string(ATTUNE_SOURCE_DIR) + "/tests/fixtures/automodel";
  std::vector<std::string> unknown;
  auto r = automodel::ImportLaunchScript(testing::ReadText(dir + "/launch_automodel.sh"), dir, &unknown);
  REQUIRE(r.ok());
  for (const auto& [key, value] : changes) REQUIRE(SetValue(&*r, key, value).ok());
  r->topology = {1, 8, "H100"};
  return *r;
}

struct Ran {
  JobStatus status;
  std::string log;
};

Ran Run(const Recipe& recipe, const std::string& name, nlohmann::json with = {{"gpu", "H100"}}) {
  testing::TempDir dir;
  auto cluster = ParseClusterConfig(with, 3);
  REQUIRE(cluster.ok());
  SimLauncher launcher(*cluster, dir.str() + "/sim");
  JobSpec spec = testing::Spec(name, recipe, dir.str());
  auto submitted = launcher.Submit(spec);
  REQUIRE(submitted.ok());
  auto polled = launcher.Poll(name);
  REQUIRE(polled.ok());
  auto log = launcher.ReadLog(name);
  REQUIRE(log.ok());
  return {*polled, *log};
}

TEST_CASE("an AutoModel recipe dry-runs and its own parser measures the simulated log", "[sim][automodel]") {
  // 200 steps of an 8B FSDP2 fine-tune would be long; the benchmark form's length is the stack's
  // business, here a short run.
  Recipe r = AutoModelRecipe({{"config:step_scheduler.max_steps", "20"}});
  Ran run = Run(r, "am-1");
  REQUIRE(run.status.state == JobState::kSucceeded);
  LogParse parse = AutoModel().ParseLog(run.log);
  CHECK(parse.iterations.size() == 20);
  auto m = AutoModel().Measure(parse, r);
  REQUIRE(m.ok());
  // tokens per step / step time / world: what the stack derives from AutoModel's tps.
  const double tokens = 64.0 * 4096;
  CHECK(m->tokens_per_s_per_gpu == Approx(tokens / m->step_time_s / 8).epsilon(0.02));
  CHECK(m->step_time_s > 0.1);
  // A lever leaves the losses as they were; an objective change moves them.
  Ran tp4 = Run(AutoModelRecipe({{"config:step_scheduler.max_steps", "20"}, {"--distributed.tp_size", "4"}}), "am-2");
  Ran lr = Run(AutoModelRecipe({{"config:step_scheduler.max_steps", "20"}, {"--optimizer.lr", "3e-5"}}), "am-3");
  LogParse p4 = AutoModel().ParseLog(tp4.log), plr = AutoModel().ParseLog(lr.log);
  REQUIRE((p4.iterations.size() == 20 && plr.iterations.size() == 20));
  CHECK(p4.iterations[5].loss == parse.iterations[5].loss);
  CHECK(plr.iterations[5].loss != parse.iterations[5].loss);
}

TEST_CASE("AutoModel's refusals and out-of-memory runs triage as AutoModel's failures", "[sim][automodel]") {
  Ran refused = Run(AutoModelRecipe({{"--distributed.tp_size", "3"}}), "am-bad-1");
  CHECK(refused.status.state == JobState::kFailed);
  Failure config = AutoModel().Triage(refused.log, {1, "failed", 10});
  CHECK(config.kind == FailureKind::kConfigError);
  // No activation checkpointing, 8 sequences of 4096 per GPU and no sharding: far past 80 GB.
  Ran oom = Run(AutoModelRecipe({{"config:distributed.activation_checkpointing", "false"},
                                 {"--step_scheduler.local_batch_size", "8"},
                                 {"config:distributed.strategy", "ddp"},
                                 {"--distributed.tp_size", "1"},
                                 {"--distributed.sequence_parallel", std::nullopt}}),
                "am-oom-1");
  CHECK(oom.status.state == JobState::kFailed);
  CHECK(AutoModel().Triage(oom.log, {1, "failed", 100}).kind == FailureKind::kOom);
}

TEST_CASE("a recipe whose data have no fixed length dry-runs at the length the cluster is given",
          "[sim][automodel]") {
  // SQuAD unpacked: each batch is as long as its longest sample, which the recipe does not say.
  Recipe r = AutoModelRecipe(
      {{"config:step_scheduler.max_steps", "20"}, {"config:dataset.seq_length", std::nullopt}});
  testing::TempDir dir;
  auto bare = ParseClusterConfig({{"gpu", "H100"}}, 3);
  REQUIRE(bare.ok());
  SimLauncher refusing(*bare, dir.str() + "/sim");
  auto refused = refusing.Submit(testing::Spec("am-var-1", r, dir.str()));
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("sequence_length"));
  Ran ran = Run(r, "am-var-2", {{"gpu", "H100"}, {"sequence_length", 512}});
  REQUIRE(ran.status.state == JobState::kSucceeded);
  LogParse parse = AutoModel().ParseLog(ran.log);
  REQUIRE(parse.iterations.size() == 20);
  CHECK(parse.iterations[3].extra.at("num_label_tokens") == 64 * 512);
  // The option is checked as the others are.
  CHECK_FALSE(ParseClusterConfig({{"gpu", "H100"}, {"sequence_length", 0}}, 3).ok());
}

}  // namespace
}  // namespace attune::sim
