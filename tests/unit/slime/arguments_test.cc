// Copyright attune authors.
//
// slime parses Megatron-LM's arguments and its own with ignore_unknown_args=True, so a misspelt
// flag is dropped without a word: the stack refuses one that no release of either defines.
#include <catch2/catch.hpp>
#include <filesystem>

#include "slime_fixture.h"

namespace attune::slime {
namespace {

using testing::Qwen3Recipe;
using testing::TheStack;
using testing::With;

std::string Refusal(const SlimeStack& stack, const Recipe& r) {
  Status s = stack.Validate(r, ClusterInfo{});
  return s.ok() ? "" : s.message();
}

TEST_CASE("slime's list holds its own flags, the families it builds and patched Megatron flags",
          "[slime][arguments]") {
  const megatron::KnownArguments& known = TheStack().knowledge().arguments;
  CHECK(known.first == "v0.1.0");
  for (const char* flag :
       {"--rollout-batch-size", "--n-samples-per-prompt", "--colocate", "--actor-num-gpus-per-node",
        "--advantage-estimator", "--post-self-attn-layernorm"}) {
    CAPTURE(flag);
    CHECK(known.Knows(flag));
  }
  CHECK(known.Knows("--sglang-mem-fraction-static"));
  CHECK(known.Knows("--router-policy"));
  // Megatron-LM's flags are in Megatron's list, not repeated in slime's.
  CHECK_FALSE(known.flags.count("--tensor-model-parallel-size"));
  // `attune stack show slime` lists the rule.
  bool listed = false;
  const nlohmann::json described = TheStack().Describe();
  for (const auto& c : described["constraints"]) listed = listed || c["id"] == "args.known";
  CHECK(listed);
}

TEST_CASE("a misspelt slime flag is refused with the flag it likely means", "[slime][arguments]") {
  Recipe r = Qwen3Recipe();
  REQUIRE(Refusal(TheStack(), r) == "");
  std::string why = Refusal(TheStack(), With(r, "--rollout-batch-sise", "32"));
  CHECK_THAT(why, Catch::Contains("[args.known] --rollout-batch-sise") &&
                      Catch::Contains("ignore_unknown_args=True") &&
                      Catch::Contains("did you mean --rollout-batch-size?") &&
                      Catch::Contains("stack: {name: slime, with: {extra_arguments: "));
  // A Megatron flag misspelt in a slime recipe: the merged list finds the Megatron one.
  CHECK_THAT(Refusal(TheStack(), With(r, "--sequence-paralel", "")),
             Catch::Contains("did you mean --sequence-parallel?"));
  // A flag slime removed before its first release (its rollout-buffer example still passes it).
  CHECK_THAT(Refusal(TheStack(), With(r, "--ref-micro-batch-size", "8")),
             Catch::Contains("[args.known] --ref-micro-batch-size"));
  // sglang's server arguments come through slime's --sglang- family, whatever their name.
  CHECK(Refusal(TheStack(), With(r, "--sglang-enable-dp-attention", "")) == "");
  // A program other than slime's train scripts has arguments of its own: not checked.
  Recipe other = With(r, "--rollout-batch-sise", "32");
  other.entry.back() = "my_train.py";
  CHECK(TheStack().UnknownArguments(other).empty());
}

TEST_CASE("extra_arguments declares flags slime's list lacks", "[slime][arguments]") {
  auto opened = SlimeStack::Open(ATTUNE_SOURCE_DIR, {{"extra_arguments", {"--my-reward-scale"}}});
  REQUIRE(opened.ok());
  Recipe r = With(Qwen3Recipe(), "--my-reward-scale", "2");
  CHECK(Refusal(**opened, r) == "");
  CHECK_THAT(Refusal(TheStack(), r), Catch::Contains("[args.known] --my-reward-scale"));
}

TEST_CASE("an imported slime launch reports the flags slime would drop", "[slime][arguments]") {
  std::vector<std::string> unknown;
  auto script = std::string(
      "ray job submit -- python3 train.py --actor-num-nodes 1 "
      "--actor-num-gpus-per-node 8 --colocate --rollout-max-respone-len 4096");
  auto r = TheStack().ImportLaunch(script, &unknown);
  REQUIRE(r.ok());
  bool reported = false;
  for (const auto& u : unknown) {
    reported =
        reported || (u.find("--rollout-max-respone-len") != std::string::npos &&
                     u.find("did you mean --rollout-max-response-len?") != std::string::npos);
  }
  CHECK(reported);
}

TEST_CASE("every lever key and every shipped slime recipe is a known flag", "[slime][arguments]") {
  for (const Lever& lever : TheStack().Levers()) {
    for (const std::string& key : lever.keys) {
      if (key.rfind("--", 0) != 0) continue;  // env: keys
      CAPTURE(lever.id, key);
      Recipe r = With(Qwen3Recipe(), key, "1");
      CHECK(TheStack().UnknownArguments(r).empty());
    }
  }
  namespace fs = std::filesystem;
  int checked = 0;
  // The examples and the tuner benchmark's probes.
  for (const char* dir : {"workflows", "tools/bench/tuners/probes/recipes"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(ATTUNE_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".yaml" ||
          entry.path().string().find("recipes") == std::string::npos)
        continue;
      auto recipe = LoadRecipeFile(entry.path().string());
      if (!recipe.ok() || recipe->stack != "slime") continue;
      CAPTURE(entry.path().string());
      std::string unknown;
      for (const auto& u : TheStack().UnknownArguments(*recipe)) unknown += u.flag + " ";
      CHECK(unknown == "");
      ++checked;
    }
  }
  CHECK(checked >= 3);
}

}  // namespace
}  // namespace attune::slime
