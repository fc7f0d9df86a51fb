// Helpers shared by the sim launcher tests: small Megatron recipes and job specs.
#ifndef ATTUNE_TESTS_UNIT_SIM_SIM_TEST_UTIL_H_
#define ATTUNE_TESTS_UNIT_SIM_SIM_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "attune/launcher.h"
#include "attune/recipe.h"
#include "automodel_stack.h"
#include "megatron_stack.h"
#include "slime_stack.h"

namespace attune::sim::testing {

using Flags = std::vector<std::pair<std::string, std::string>>;

// A Megatron recipe of `flags` alone ("" for a switch), for tests of the mapping and the model.
inline Recipe MegatronRecipe(const Flags& flags) {
  Recipe r;
  r.stack = "megatron";
  r.env = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  for (const auto& [flag, value] : flags) {
    r.args.push_back({flag, value.empty() ? std::vector<std::string>{} : std::vector<std::string>{value}});
  }
  return r;
}

// A 1.3B-class GPT recipe for 8 GPUs (TP 2, DP 4) that Megatron accepts and that fits an H100.
inline Recipe SmallGpt(std::initializer_list<std::pair<std::string, std::string>> overrides = {}) {
  Recipe r;
  r.stack = "megatron";
  r.entry = {"python3", "pretrain_gpt.py"};
  r.topology = {1, 8, "H100"};
  r.env = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  std::vector<std::pair<std::string, std::string>> args = {
      {"--num-layers", "24"},          {"--hidden-size", "2048"},
      {"--num-attention-heads", "16"}, {"--seq-length", "2048"},
      {"--max-position-embeddings", "2048"}, {"--micro-batch-size", "2"},
      {"--global-batch-size", "64"},   {"--tensor-model-parallel-size", "2"},
      {"--lr", "3e-4"},                {"--train-iters", "50"},
      {"--log-interval", "10"},        {"--bf16", ""},
      {"--log-throughput", ""},        {"--sequence-parallel", ""},
      {"--use-distributed-optimizer", ""}, {"--vocab-size", "50257"}};
  for (const auto& [flag, value] : args) {
    r.args.push_back({flag, value.empty() ? std::vector<std::string>{} : std::vector<std::string>{value}});
  }
  for (const auto& [flag, value] : overrides) {
    REQUIRE(SetValue(&r, flag, value == "<absent>" ? std::nullopt : std::optional<std::string>(value)).ok());
  }
  return r;
}

// The Megatron stack, whose dry-run mapping and log renderer the simulated jobs go through (the
// sim launcher models the stack's parallel plan; attune/sim_plan.h).
inline const Stack* MegatronStackForSim() {
  static const std::unique_ptr<megatron::MegatronStack> stack = [] {
    auto opened = megatron::MegatronStack::Open(ATTUNE_SOURCE_DIR);
    if (!opened.ok()) FAIL("stacks/megatron knowledge not loadable: " + opened.status().message());
    return std::move(*opened);
  }();
  return stack.get();
}

// The AutoModel stack, for AutoModel recipes' dry runs.
inline const Stack* AutoModelStackForSim() {
  static const std::unique_ptr<automodel::AutoModelStack> stack = [] {
    auto opened = automodel::AutoModelStack::Create(ATTUNE_SOURCE_DIR);
    if (!opened.ok()) FAIL("stacks/automodel knowledge not loadable: " + opened.status().message());
    return std::move(*opened);
  }();
  return stack.get();
}

// The slime stack, for slime recipes' dry runs (composed with its own Megatron stack).
inline const Stack* SlimeStackForSim() {
  static const std::unique_ptr<slime::SlimeStack> stack = [] {
    auto opened = slime::SlimeStack::Open(ATTUNE_SOURCE_DIR);
    if (!opened.ok()) FAIL("stacks/slime knowledge not loadable: " + opened.status().message());
    return std::move(*opened);
  }();
  return stack.get();
}

// The stack plugin a recipe names, for the stacks the simulated cluster maps.
inline const Stack* StackForSim(const Recipe& recipe) {
  if (recipe.stack == "slime") return SlimeStackForSim();
  return recipe.stack == "automodel" ? AutoModelStackForSim() : MegatronStackForSim();
}

inline JobSpec Spec(const std::string& name, const Recipe& recipe, const std::string& dir) {
  JobSpec s;
  s.stack = StackForSim(recipe);
  s.name = name;
  s.job_dir = dir + "/" + name;
  s.log_path = s.job_dir + "/stdout.log";
  s.recipe = recipe;
  s.devices = s.stack->Devices(recipe);  // slime: the rollout GPUs too
  s.nodes = recipe.topology.nodes;
  s.time_limit_s = 3600;
  return s;
}

// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("attune-sim-test-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The whole content of a text file ("" when it cannot be read).
inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace attune::sim::testing

#endif  // ATTUNE_TESTS_UNIT_SIM_SIM_TEST_UTIL_H_
