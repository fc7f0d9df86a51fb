// Every example campaign (workflows/examples/sim-*.yaml): its baseline recipe is valid for its
// stack and fits in memory on the cluster the workflow describes, and the run is not trivially optimal.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "hardware.h"
#include "job_sim.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

nlohmann::json ToJson(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : node) j[kv.first.as<std::string>()] = ToJson(kv.second);
    return j;
  }
  if (node.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& item : node) j.push_back(ToJson(item));
    return j;
  }
  const std::string& s = node.Scalar();
  // Integers stay integers (as the workflow loader reads them): the launcher's schema wants them.
  try {
    size_t used = 0;
    long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
  } catch (...) {
    // not an integer
  }
  try {
    size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
    // not a number: a string
  }
  return s;
}

TEST_CASE("every sim example campaign's baseline runs on its cluster", "[sim][scenarios]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(ATTUNE_SOURCE_DIR) / "workflows" / "examples";
  int found = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string file = entry.path().filename().string();
    if (file.rfind("sim-", 0) != 0 || entry.path().extension() != ".yaml") continue;
    ++found;
    INFO(file);
    YAML::Node wf = YAML::LoadFile(entry.path().string());
    REQUIRE(wf["launcher"]["name"].as<std::string>() == "sim");
    auto cluster = ParseClusterConfig(ToJson(wf["launcher"]["with"]), 1);
    INFO((cluster.ok() ? std::string() : cluster.status().ToString()));
    REQUIRE(cluster.ok());
    auto recipe = LoadRecipeFile((dir / wf["recipe"].as<std::string>()).string());
    REQUIRE(recipe.ok());
    // The GPUs a job occupies (slime: the training actors and the rollout engines).
    CHECK(testing::StackForSim(*recipe)->Devices(*recipe) == cluster->WorldSize());
    // What a campaign runs: the stack's benchmark form of the recipe.
    auto form = testing::StackForSim(*recipe)->BenchmarkForm(*recipe);
    REQUIRE(form.ok());
    JobSpec spec = testing::Spec("scenario-1-1", *form, "/nonexistent");
    spec.time_limit_s = wf["budget"]["job_time_limit_s"].as<double>();
    cluster->failures = {};
    auto outcome = SimulateJob(spec, *cluster, 0);
    REQUIRE(outcome.ok());
    INFO(outcome->log.substr(outcome->log.size() > 3000 ? outcome->log.size() - 3000 : 0));
    // It ends well, or (sim-qwen2.5-14b-64k-h200x32, on purpose) its time limit cuts it after
    // enough steady iterations for the engine to measure it from its log (the adaptive stop's 20
    // and the warm-up before them).
    if (outcome->state == JobState::kTimedOut) {
      size_t iterations = 0;
      for (size_t at = outcome->log.find("] iteration "); at != std::string::npos;
           at = outcome->log.find("] iteration ", at + 1)) {
        ++iterations;
      }
      CHECK(iterations >= 22);
    } else {
      CHECK(outcome->state == JobState::kSucceeded);
    }
    // The campaign can afford a baseline, its repeats and a few dozen candidates.
    double job_gpu_hours = cluster->WorldSize() * outcome->duration_s / 3600;
    CHECK(job_gpu_hours * 20 < wf["budget"]["gpu_hours"].as<double>());
  }
  CHECK(found >= 5);
}

}  // namespace
}  // namespace attune::sim
