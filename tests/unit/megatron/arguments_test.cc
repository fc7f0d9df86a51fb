// Copyright attune authors.
//
// Megatron-LM's argument list (stacks/megatron/arguments.txt) and rule args.known: a flag no
// release of Megatron-LM accepts is refused at validation, with the flag it most likely means.
#include "arguments.h"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "attune/recipe.h"
#include "megatron_stack.h"
#include "test_support.h"

namespace attune::megatron {
namespace {

using testing::DenseRecipe;
using testing::H100;
using testing::MinigptRecipe;
using testing::Stack;
using testing::With;

const KnownArguments& Known() { return Stack().knowledge().arguments; }

TEST_CASE("the argument list spans Megatron-LM's releases", "[megatron][arguments]") {
  const KnownArguments& known = Known();
  REQUIRE_FALSE(known.Empty());
  CHECK(known.first == "core_v0.4.0");
  CHECK_FALSE(known.last.empty());
  // Current flags, flags later releases dropped, and the ModelOpt ones pretrain_gpt.py adds.
  for (const char* flag :
       {"--global-batch-size", "--step-batch-size-schedule", "--rampup-batch-size",
        "--num-layers-per-virtual-pipeline-stage", "--use-flash-attn", "--enable-gpt-oss"}) {
    CAPTURE(flag);
    CHECK(known.flags.count(flag) == 1);
  }
  CHECK(known.flags.count("--global-batch-sise") == 0);
}

TEST_CASE("a misspelt flag is refused with the flag it most likely means",
          "[megatron][arguments]") {
  Recipe r = With(DenseRecipe(), "--global-batch-sise", "12");
  Status s = Stack().Validate(r, H100());
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(),
             Catch::Contains("args.known: --global-batch-sise is not an argument of Megatron-LM's "
                             "pretrain_gpt.py") &&
                 Catch::Contains("unrecognized arguments") &&
                 Catch::Contains("did you mean --global-batch-size?") &&
                 Catch::Contains("extra_arguments: [--global-batch-sise]"));
  // Underscores for dashes: argparse takes the flag as written, so it is refused too.
  CHECK(NearestArgument(Known(), "--micro_batch_size") == "--micro-batch-size");
  CHECK(NearestArgument(Known(), "--sequence-paralel") == "--sequence-parallel");
  CHECK(NearestArgument(Known(), "--recompute-granulatiry") == "--recompute-granularity");
  // Nothing near: no guess.
  CHECK(NearestArgument(Known(), "--frobnicate-everything") == "");
  Status far = Stack().Validate(With(DenseRecipe(), "--frobnicate-everything", "1"), H100());
  REQUIRE_FALSE(far.ok());
  CHECK_THAT(far.message(), Catch::Contains("--frobnicate-everything is not an argument"));
  CHECK_THAT(far.message(), !Catch::Contains("did you mean"));
}

TEST_CASE("a recipe of known flags passes, and other programs' flags are not checked",
          "[megatron][arguments]") {
  REQUIRE(Stack().Validate(DenseRecipe(), H100()).ok());
  CHECK(UnknownArguments(Known(), DenseRecipe()).empty());
  // minigpt's script is named pretrain_gpt.py and takes a subset of Megatron-LM's flags.
  CHECK(MegatronTrainingScript(MinigptRecipe()) == "pretrain_gpt.py");
  CHECK(UnknownArguments(Known(), MinigptRecipe()).empty());
  // A program of the user's own (or pretrain_vlm.py, whose extra arguments the list lacks) may
  // take any flag.
  Recipe own = With(DenseRecipe(), "--my-own-flag", "1");
  own.entry = {"python3", "/work/train_vlm.py"};
  CHECK(MegatronTrainingScript(own) == "");
  CHECK(UnknownArguments(Known(), own).empty());
  // Megatron-DeepSpeed's pretrain_gpt.py takes the fork's own flags too.
  Recipe fork = With(With(DenseRecipe(), "--deepspeed", ""), "--zero-stage", "1");
  CHECK(MegatronTrainingScript(fork) == "");
  CHECK(UnknownArguments(Known(), fork).empty());
  CHECK(UnknownArguments(Known(), With(DenseRecipe(), "--zero-stage", "1")).size() == 1);
}

TEST_CASE("every lever key is a Megatron-LM argument", "[megatron][arguments]") {
  // Legal moves change only lever keys and are not checked against the list one by one
  // (ClusterViolations): a lever key outside it would make every candidate that sets it invalid.
  int keys = 0;
  for (const LeverSpec& spec : Stack().knowledge().levers) {
    for (const std::string& key : spec.lever.keys) {
      if (key.rfind("--", 0) != 0) continue;  // env:NAME
      CAPTURE(spec.lever.id, key);
      CHECK(Known().flags.count(key) == 1);
      ++keys;
    }
  }
  CHECK(keys >= 30);  // 36 command-line keys in levers.yaml today
  // Nor the keys a move's companions set (--sequence-parallel with --tp-comm-overlap, ...).
  for (const Recipe& r : {DenseRecipe(), testing::MoeRecipe()}) {
    for (const Move& m : Stack().LegalMoves(r, H100())) {
      for (const Change& c : m.changes) {
        if (c.key.rfind("--", 0) != 0) continue;
        CAPTURE(m.lever_id, c.key);
        CHECK(Known().flags.count(c.key) == 1);
      }
    }
  }
}

TEST_CASE("extra_arguments declares flags the list lacks", "[megatron][arguments]") {
  auto opened =
      MegatronStack::Open(ATTUNE_SOURCE_DIR, {{"extra_arguments", {"--global-batch-sise"}}});
  REQUIRE(opened.ok());
  Recipe r = With(DenseRecipe(), "--global-batch-sise", "12");
  CHECK((*opened)->Validate(r, H100()).ok());
  CHECK_FALSE(Stack().Validate(r, H100()).ok());
}

TEST_CASE("a malformed argument list is a clear error", "[megatron][arguments]") {
  auto no_revisions = ParseArguments("--a\n--b\n", "arguments.txt");
  REQUIRE_FALSE(no_revisions.ok());
  CHECK_THAT(no_revisions.status().message(),
             Catch::Contains("Revisions read") && Catch::Contains("tools/megatron_arguments.py"));
  auto bad_line = ParseArguments("# Revisions read: a b\n--a\nnot a flag\n", "arguments.txt");
  REQUIRE_FALSE(bad_line.ok());
  CHECK_THAT(bad_line.status().message(), Catch::StartsWith("arguments.txt:3:"));
  auto good = ParseArguments("# Revisions read: r1 r2 r3\n--a\n--b-c\n", "arguments.txt");
  REQUIRE(good.ok());
  CHECK(good->first == "r1");
  CHECK(good->last == "r3");
  CHECK(good->flags.size() == 2);
  // A line ending in '*' is a family of flags; the family's prefix alone is not a flag.
  auto family = ParseArguments("# Revisions read: r1\n--a\n--sglang-*\n", "arguments.txt");
  REQUIRE(family.ok());
  CHECK(family->flags.size() == 1);
  CHECK(family->Knows("--sglang-mem-fraction-static"));
  CHECK_FALSE(family->Knows("--sglang-"));
  CHECK_FALSE(family->Knows("--sglan-mem-fraction-static"));
  CHECK(family->Knows("--a"));
}

TEST_CASE("every Megatron recipe the project ships uses known flags", "[megatron][arguments]") {
  // The examples, the tuner benchmark's scenarios and probes: recipes written from real scripts.
  namespace fs = std::filesystem;
  int checked = 0;
  for (const char* dir : {"workflows", "tools/bench/tuners/probes/recipes"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(ATTUNE_SOURCE_DIR) / dir)) {
      if (entry.path().extension() != ".yaml") continue;
      YAML::Node node = YAML::LoadFile(entry.path().string());
      if (!node.IsMap() || !node["stack"] || node["stack"].as<std::string>() != "megatron" ||
          !node["args"])
        continue;
      auto recipe = LoadRecipeFile(entry.path().string());
      REQUIRE(recipe.ok());
      CAPTURE(entry.path().string());
      std::string unknown;
      for (const auto& u : UnknownArguments(Known(), *recipe)) unknown += u.flag + " ";
      CHECK(unknown == "");
      ++checked;
    }
  }
  CHECK(checked >= 20);
}

}  // namespace
}  // namespace attune::megatron
