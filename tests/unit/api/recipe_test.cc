#include <catch2/catch.hpp>

#include "attune/recipe.h"

using attune::Change;
using attune::Recipe;

namespace {

Recipe Sample() {
  Recipe r;
  r.stack = "megatron";
  r.entry = {"python3", "pretrain_gpt.py"};
  r.args = {{"--num-layers", {"32"}}, {"--bf16", {}}, {"--micro-batch-size", {"1"}}};
  r.env = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  r.topology = {2, 8, "H100"};
  return r;
}

}  // namespace

TEST_CASE("a switch reads as an empty value and an absent flag as nullopt", "[recipe]") {
  Recipe r = Sample();
  CHECK(attune::GetValue(r, "--bf16") == std::optional<std::string>(""));
  CHECK(attune::GetValue(r, "--fp8-format") == std::nullopt);
  CHECK(attune::GetValue(r, "env:CUDA_DEVICE_MAX_CONNECTIONS") == std::optional<std::string>("1"));
  CHECK(attune::GetValue(r, "topology:nodes") == std::optional<std::string>("2"));
}

TEST_CASE("applying the diff of two recipes turns one into the other", "[recipe]") {
  Recipe base = Sample();
  Recipe candidate = base;
  REQUIRE(attune::SetValue(&candidate, "--micro-batch-size", "2").ok());
  REQUIRE(attune::SetValue(&candidate, "--sequence-parallel", "").ok());
  REQUIRE(attune::SetValue(&candidate, "env:NCCL_ALGO", "Ring").ok());
  REQUIRE(attune::SetValue(&candidate, "--bf16", std::nullopt).ok());
  auto diff = attune::Diff(base, candidate);
  CHECK(diff.size() == 4);
  Recipe rebuilt = base;
  REQUIRE(attune::ApplyChanges(&rebuilt, diff).ok());
  CHECK(attune::Diff(rebuilt, candidate).empty());
  CHECK(attune::RecipeId(rebuilt) == attune::RecipeId(candidate));
}

TEST_CASE("a change made against another recipe is refused with both values", "[recipe]") {
  Recipe r = Sample();
  auto status = attune::ApplyChanges(&r, {Change{"--micro-batch-size", "4", "8"}});
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains("'1'") && Catch::Contains("another recipe"));
}

TEST_CASE("argument order does not change the recipe id but a value does", "[recipe]") {
  Recipe a = Sample();
  Recipe b = a;
  std::swap(b.args[0], b.args[2]);
  CHECK(attune::RecipeId(a) == attune::RecipeId(b));
  REQUIRE(attune::SetValue(&b, "--num-layers", "24").ok());
  CHECK(attune::RecipeId(a) != attune::RecipeId(b));
}

TEST_CASE("config keys address nested values and keep their types", "[recipe]") {
  Recipe r = Sample();
  REQUIRE(attune::SetValue(&r, "config:distributed.tp_size", "2").ok());
  CHECK(r.config["distributed"]["tp_size"].is_number_integer());
  CHECK(attune::GetValue(r, "config:distributed.tp_size") == std::optional<std::string>("2"));
  REQUIRE(attune::SetValue(&r, "config:distributed.tp_size", std::nullopt).ok());
  CHECK(attune::GetValue(r, "config:distributed.tp_size") == std::nullopt);
}

TEST_CASE("a recipe survives YAML and JSON round trips", "[recipe]") {
  Recipe r = Sample();
  r.args.push_back({"--cp-comm-type", {"p2p", "a2a"}});
  auto yaml = attune::ParseRecipeYaml(attune::RecipeToYaml(r), "mem.yaml");
  REQUIRE(yaml.ok());
  CHECK(*yaml == r);
  auto json = attune::RecipeFromJson(attune::RecipeToJson(r));
  REQUIRE(json.ok());
  CHECK(*json == r);
}

TEST_CASE("a recipe file with an unknown key is refused with its line and column", "[recipe]") {
  auto r = attune::ParseRecipeYaml("stack: megatron\nentry: [python3, x.py]\nargz: []\n", "r.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::StartsWith("r.yaml:3:1: argz: unknown key"));
}

TEST_CASE("an argument given as --flag=value is the flag and its value, as argparse reads it",
          "[recipe]") {
  auto r = attune::ParseRecipeYaml(
      "stack: megatron\nentry: [python3, x.py]\nargs:\n  - --micro-batch-size=2\n"
      "  - [--lr=1e-4]\n  - --data-path=a b\n",
      "r.yaml");
  REQUIRE(r.ok());
  CHECK(attune::GetValue(*r, "--micro-batch-size") == std::optional<std::string>("2"));
  CHECK(attune::GetValue(*r, "--lr") == std::optional<std::string>("1e-4"));
  CHECK(attune::GetValue(*r, "--data-path") == std::optional<std::string>("a b"));
  CHECK_FALSE(attune::GetValue(*r, "--micro-batch-size=2"));
}

TEST_CASE("a flag given twice is refused with both places", "[recipe]") {
  // argparse keeps the last value; every reader of the recipe (tuner, gate, dry run) the first.
  auto r = attune::ParseRecipeYaml(
      "stack: megatron\nentry: [python3, x.py]\nargs:\n  - [--micro-batch-size, \"1\"]\n"
      "  - [--lr, \"1e-4\"]\n  - --micro-batch-size=4\n",
      "r.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::StartsWith("r.yaml:6:5: args[2]: --micro-batch-size is given again (first at "
                               "r.yaml:4:5)") &&
                 Catch::Contains("keep one"));
}

TEST_CASE("a malformed key is refused", "[recipe]") {
  Recipe r = Sample();
  auto status = attune::SetValue(&r, "micro-batch-size", "2");
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains("malformed recipe key"));
}

TEST_CASE("shell words honour quotes, escapes and line continuations", "[recipe]") {
  auto words = attune::SplitShellWords("torchrun --a 'x y' \"q\\\"z\" \\\n --b c\\ d");
  REQUIRE(words.ok());
  CHECK(*words == std::vector<std::string>{"torchrun", "--a", "x y", "q\"z", "--b", "c d"});
  auto bad = attune::SplitShellWords("echo 'open");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("unterminated ' quote"));
}

TEST_CASE("config strings that look like other types survive a write and a read", "[recipe][yaml]") {
  attune::Recipe r;
  r.stack = "automodel";
  r.entry = {"automodel", "cfg.yaml"};
  r.config = nlohmann::json::parse(R"({
    "env_vars": {"REQUIRE_FINITE_METRICS": "true", "N": "5", "EMPTY": "", "TILDE": "~"},
    "slurm": {"time": "00:30:00", "answer": "yes", "lr_text": "1e-5", "name": "h100"},
    "optimizer": {"lr": 5e-05, "eps": 1e-08, "fused": true, "steps": 100, "none": null}
  })");
  const std::string yaml = attune::RecipeToYaml(r);
  INFO(yaml);
  auto back = attune::ParseRecipeYaml(yaml, "mem.yaml");
  REQUIRE(back.ok());
  CHECK(back->config == r.config);
  CHECK(yaml.find("\"true\"") != std::string::npos);
  CHECK(yaml.find("\"00:30:00\"") != std::string::npos);
  CHECK(yaml.find("name: h100") != std::string::npos);  // plain text stays plain
}

TEST_CASE("a data declaration is part of the recipe: keys, files, JSON and id", "[recipe][data]") {
  Recipe r = Sample();
  const std::string plain_id = attune::RecipeId(r);
  REQUIRE(attune::SetValue(&r, "data:fixed_length", "true").ok());
  REQUIRE(attune::SetValue(&r, "data:loss_mask", "none").ok());
  CHECK(attune::GetValue(r, "data:loss_mask") == std::optional<std::string>("none"));
  CHECK(attune::RecipeId(r) != plain_id);
  auto yaml = attune::ParseRecipeYaml(attune::RecipeToYaml(r), "mem.yaml");
  REQUIRE(yaml.ok());
  CHECK(*yaml == r);
  auto json = attune::RecipeFromJson(attune::RecipeToJson(r));
  REQUIRE(json.ok());
  CHECK(*json == r);
  CHECK_FALSE(attune::RecipeToJson(Sample()).contains("data"));  // older events stay as they were
  auto diff = attune::Diff(Sample(), r);
  REQUIRE(diff.size() == 2);
  CHECK(diff[0].key == "data:fixed_length");
  auto bad = attune::ParseRecipeYaml("stack: megatron\nentry: [x.py]\ndata: [1, 2]\n", "bad.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("data"));
}
