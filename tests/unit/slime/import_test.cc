#include <catch2/catch.hpp>

#include <algorithm>

#include "slime_fixture.h"

using namespace attune;
using namespace attune::slime;
using namespace attune::slime::testing;

TEST_CASE("a recorded ray job submit call becomes a slime recipe", "[slime][import]") {
  std::vector<std::string> unknown;
  auto r = ImportRecordedCall(Qwen3Call(), &unknown);
  REQUIRE(r.ok());
  CHECK(r->stack == "slime");
  CHECK(r->launcher_hint == "ray");
  REQUIRE(r->entry.size() == 2);
  CHECK(r->entry[1] == "train.py");
  CHECK(r->topology.nodes == 1);
  CHECK(r->topology.gpus_per_node == 4);
  CHECK(GetValue(*r, "--tensor-model-parallel-size") == std::optional<std::string>("2"));
  CHECK(GetValue(*r, "--sequence-parallel") == std::optional<std::string>(""));
  CHECK(GetValue(*r, "--sglang-mem-fraction-static") == std::optional<std::string>("0.7"));
  CHECK(GetValue(*r, "--rollout-batch-size") == std::optional<std::string>("32"));
  CHECK(GetValue(*r, "env:CUDA_DEVICE_MAX_CONNECTIONS") == std::optional<std::string>("1"));
}

TEST_CASE("recorded env and awkward words survive the hand-over", "[slime][import]") {
  RecordedCall call;
  call.env = {{"NCCL_NVLS_ENABLE", "0"}};
  call.argv = {"python3", "train_async.py", "--actor-num-nodes", "2", "--actor-num-gpus-per-node", "8",
               "--rollout-num-gpus", "8", "--custom-rm-path", "my rm's module.py:reward", "--rollout-stop", "</answer>"};
  std::vector<std::string> unknown;
  auto r = ImportRecordedCall(call, &unknown);
  REQUIRE(r.ok());
  CHECK(r->topology.WorldSize() == 16);
  CHECK(r->entry.back() == "train_async.py");
  CHECK(GetValue(*r, "--custom-rm-path") == std::optional<std::string>("my rm's module.py:reward"));
  CHECK(GetValue(*r, "--rollout-stop") == std::optional<std::string>("</answer>"));
  CHECK(GetValue(*r, "env:NCCL_NVLS_ENABLE") == std::optional<std::string>("0"));
}

TEST_CASE("a script with arrays as slime's run scripts build them", "[slime][import]") {
  const char* script = R"(#!/bin/bash
MODEL_ARGS=(
   --num-layers 36 --hidden-size 2560
   --swiglu
)
ROLLOUT_ARGS=(--rollout-batch-size 32 --n-samples-per-prompt 8)
PERF_ARGS=(
   --tensor-model-parallel-size 2
   --use-dynamic-batch-size
   --max-tokens-per-gpu 9216
)
ray job submit --address="http://127.0.0.1:8265" \
   --runtime-env-json='{"env_vars": {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}}' \
   -- python3 train.py \
   --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate \
   ${MODEL_ARGS[@]} "${ROLLOUT_ARGS[@]}" "${PERF_ARGS[@]}"
)";
  std::vector<std::string> unknown;
  auto r = TheStack().ImportLaunch(script, &unknown);
  REQUIRE(r.ok());
  CHECK(r->stack == "slime");
  CHECK(r->topology.gpus_per_node == 8);
  CHECK(GetValue(*r, "--max-tokens-per-gpu") == std::optional<std::string>("9216"));
  CHECK(GetValue(*r, "--n-samples-per-prompt") == std::optional<std::string>("8"));
  CHECK(GetValue(*r, "--swiglu") == std::optional<std::string>(""));
  CHECK(TheStack().Validate(*r, ClusterInfo{}).ok());
}

TEST_CASE("a launch that is not slime's train.py is refused with what to do", "[slime][import]") {
  RecordedCall call;
  call.argv = {"torchrun", "--nproc-per-node", "8", "pretrain_gpt.py", "--num-layers", "2"};
  std::vector<std::string> unknown;
  auto r = ImportRecordedCall(call, &unknown);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("train.py") != std::string::npos);
  CHECK(r.status().message().find("--stack megatron") != std::string::npos);
  CHECK_FALSE(ImportRecordedCall(RecordedCall{}, &unknown).ok());
}

TEST_CASE("render gives the ray job submit call back for the recipe's topology", "[slime][import]") {
  Recipe r = Qwen3Recipe();
  r.topology.gpus_per_node = 8;
  auto spec = TheStack().RenderLaunch(r);
  REQUIRE(spec.ok());
  REQUIRE(spec->argv.size() > 6);
  CHECK(spec->argv[0] == "ray");
  auto it = std::find(spec->argv.begin(), spec->argv.end(), "--actor-num-gpus-per-node");
  REQUIRE(it != spec->argv.end());
  CHECK(*(it + 1) == "8");
}

TEST_CASE("slime's combination rules name the rule and the fix", "[slime][validate]") {
  Recipe r = Qwen3Recipe();
  REQUIRE(TheStack().Validate(r, ClusterInfo{}).ok());
  auto refused = [&](const Recipe& bad, const std::string& rule) {
    Status s = TheStack().Validate(bad, ClusterInfo{});
    INFO(rule);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find("[" + rule + "]") != std::string::npos);
  };
  refused(With(r, "--max-tokens-per-gpu", std::nullopt), "slime.dynamic_needs_max_tokens");
  refused(With(r, "--sglang-mem-fraction-static", "1.2"), "slime.mem_fraction_range");
  refused(With(r, "--rollout-num-gpus-per-engine", "3"), "slime.engines_split");
  refused(With(r, "--rollout-num-gpus", std::nullopt), "slime.rollout_gpus_required");
  refused(With(r, "--update-weight-mode", "delta"), "slime.delta_weights");
  Recipe async = r;
  async.entry.back() = "train_async.py";
  refused(With(async, "--colocate", ""), "slime.colocate_async");
  // A Megatron rule, through the composed Megatron stack: 36 layers cannot split into 5 stages.
  Status pp = TheStack().Validate(With(r, "--pipeline-model-parallel-size", "5"), ClusterInfo{});
  CHECK_FALSE(pp.ok());
}

TEST_CASE("Megatron's rules see what slime hands Megatron", "[slime][validate]") {
  // slime always turns the distributed optimizer on, so a recipe need not say it to overlap the
  // parameter gather; Megatron alone would refuse the same flags.
  Recipe r = With(With(Qwen3Recipe(), "--use-distributed-optimizer", std::nullopt), "--overlap-grad-reduce", "");
  r = With(r, "--overlap-param-gather", "");
  INFO(TheStack().Validate(r, ClusterInfo{}).ToString());
  CHECK(TheStack().Validate(r, ClusterInfo{}).ok());
  CHECK_FALSE(TheStack().Validate(With(r, "--overlap-grad-reduce", std::nullopt), ClusterInfo{}).ok());
  // slime's own default micro-batch size is 1 (slime's Kimi-K2 script gives none).
  Recipe no_mbs = With(Qwen3Recipe(), "--micro-batch-size", std::nullopt);
  INFO(TheStack().Validate(no_mbs, ClusterInfo{}).ToString());
  CHECK(TheStack().Validate(no_mbs, ClusterInfo{}).ok());
}

TEST_CASE("a bad actor count names the flag", "[slime][import]") {
  RecordedCall call;
  call.argv = {"python3", "train.py", "--actor-num-gpus-per-node", "eight", "--colocate"};
  std::vector<std::string> unknown;
  auto r = ImportRecordedCall(call, &unknown);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("--actor-num-gpus-per-node 'eight'") != std::string::npos);
}

TEST_CASE("a sourced model file is reported, not silently lost", "[slime][import]") {
  const char* script =
      "SCRIPT_DIR=/root/slime/scripts\n"
      "  source \"${SCRIPT_DIR}/models/qwen3-4B.sh\"\n"
      "python3 train.py --actor-num-gpus-per-node 8 --colocate \"${MODEL_ARGS[@]}\"\n";
  std::vector<std::string> unknown;
  auto r = TheStack().ImportLaunch(script, &unknown);
  REQUIRE(r.ok());
  // The Megatron reader reports the undefined $MODEL_ARGS; the slime import names the source line.
  auto it = std::find_if(unknown.begin(), unknown.end(),
                         [](const std::string& u) { return u.find("was not followed") != std::string::npos; });
  REQUIRE(it != unknown.end());
  CHECK(it->find("line 2") != std::string::npos);
  CHECK(it->find("models/qwen3-4B.sh") != std::string::npos);
  CHECK(std::any_of(unknown.begin(), unknown.end(),
                    [](const std::string& u) { return u.find("MODEL_ARGS") != std::string::npos; }));
}
