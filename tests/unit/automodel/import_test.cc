#include <catch2/catch.hpp>

#include "automodel_fixture.h"
#include "recipe_import.h"

using namespace attune;
using namespace attune::automodel;
using namespace attune::automodel::testing;

TEST_CASE("an automodel launch imports overrides, topology, env and the config", "[automodel][import]") {
  std::vector<std::string> unknown;
  auto r = ImportLaunchScript(ReadFile(FixtureDir() + "/launch_automodel.sh"), FixtureDir(), &unknown);
  REQUIRE(r.ok());
  CHECK(r->stack == "automodel");
  CHECK(r->entry == std::vector<std::string>{"automodel", "llama_sft.yaml"});
  CHECK(r->topology.gpus_per_node == 8);
  CHECK(GetValue(*r, "--distributed.tp_size") == std::optional<std::string>("2"));
  CHECK(GetValue(*r, "--step_scheduler.local_batch_size") == std::optional<std::string>("2"));
  CHECK(GetValue(*r, "--distributed.sequence_parallel") == std::optional<std::string>(""));
  CHECK(GetValue(*r, "env:NCCL_DEBUG") == std::optional<std::string>("WARN"));
  CHECK(r->config["step_scheduler"]["global_batch_size"] == 64);
  // A bare flag is an override too; nothing is dropped.
  CHECK(GetValue(*r, "--mystery-token") == std::optional<std::string>(""));
}

TEST_CASE("a torchrun launch keeps the script and reads torchrun's topology", "[automodel][import]") {
  std::vector<std::string> unknown;
  auto r = ImportLaunchScript(ReadFile(FixtureDir() + "/launch_torchrun.sh"), FixtureDir(), &unknown);
  REQUIRE(r.ok());
  CHECK(r->launcher_hint == "torchrun");
  CHECK(r->topology.nodes == 2);
  CHECK(r->topology.gpus_per_node == 4);
  CHECK(r->entry == std::vector<std::string>{"examples/llm_finetune/finetune.py", "--config", "llama_sft.yaml"});
  CHECK(GetValue(*r, "env:CUDA_DEVICE_MAX_CONNECTIONS") == std::optional<std::string>("1"));
  CHECK(unknown.empty());
}

TEST_CASE("unknown launcher flags are reported, not dropped", "[automodel][import]") {
  std::vector<std::string> unknown;
  auto r = ImportLaunchScript("torchrun --weird-flag 3 x.py --config llama_sft.yaml\n", FixtureDir(), &unknown);
  REQUIRE(r.ok());
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0] == "--weird-flag");
}

TEST_CASE("a launch whose config cannot be read says where it looked", "[automodel][import]") {
  std::vector<std::string> unknown;
  auto r = ImportLaunchScript("automodel nowhere.yaml --nproc-per-node 2\n", FixtureDir(), &unknown);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("nowhere.yaml") && Catch::Contains("cannot be read"));
}

TEST_CASE("import, render and import again give the same recipe", "[automodel][import]") {
  for (const char* script : {"launch_automodel.sh", "launch_torchrun.sh"}) {
    Recipe first = Import(script);
    auto launch = TheStack().RenderLaunch(first);
    REQUIRE(launch.ok());
    std::string command = ShellCommand(launch->env, launch->argv);
    std::vector<std::string> unknown;
    auto second = ImportLaunchScript(command, FixtureDir(), &unknown);
    REQUIRE(second.ok());
    CHECK(*second == first);
  }
}
