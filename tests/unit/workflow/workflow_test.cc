// Workflow parsing and validation: defaults, every error's file:line:col and suggestion, the
// normalized JSON round trip and its hash.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "workflow/workflow.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

// A temp folder holding recipes/r.yaml and the workflow under test at wf.yaml.
class WorkflowDir {
 public:
  WorkflowDir() {
    std::random_device rd;
    root_ = fs::temp_directory_path() /
            ("attune-wf-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(root_ / "recipes");
    std::ofstream(root_ / "recipes/r.yaml")
        << "stack: megatron\nentry: [python3, pretrain_gpt.py]\n"
           "args: [[--micro-batch-size, 1], [--bf16]]\n"
           "topology: {nodes: 1, gpus_per_node: 8, gpu_type: H100}\n";
  }
  ~WorkflowDir() { fs::remove_all(root_); }
  std::string Write(const std::string& text) {
    std::string path = (root_ / "wf.yaml").string();
    std::ofstream(path) << text;
    return path;
  }

 private:
  fs::path root_;
};

const char* kValid = R"(attune: 1
name: quick
stack: megatron
recipe: recipes/r.yaml
launcher: {name: local, with: {devices: 2}}
agent: heuristic
seed: 7
budget: {gpu_hours: 0.5, max_candidates: 12}
steps:
  - {id: baseline, uses: benchmark, with: {repeats: 3}}
  - {id: tune, uses: tune}
  - {id: verify, uses: verify, if: "leader != 'baseline'"}
)";

WorkflowSchema Schema() {
  WorkflowSchema s;
  auto options = [](const char* text) { return support::JsonSchema::Parse(text).value(); };
  s.step_kinds.emplace("benchmark", options(R"({"type": "object", "additionalProperties": false,
      "properties": {"repeats": {"type": "integer", "minimum": 1, "maximum": 100}}})"));
  for (const char* kind : {"tune", "verify", "report"}) {
    s.step_kinds.emplace(kind, options(R"({"type": "object", "additionalProperties": false})"));
  }
  s.condition_names = {"leader", "leader_changed", "speedup"};
  s.stacks = {"megatron", "automodel"};
  s.launchers = {"local", "sim", "slurm"};
  s.agents = {"heuristic", "random"};
  return s;
}

Status Parse(WorkflowDir& dir, const std::string& text) {
  return LoadWorkflowFile(dir.Write(text), Schema()).status();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

void RequireError(const Status& s, const std::string& substring) {
  INFO(s.ToString());
  REQUIRE(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains(substring));
}

TEST_CASE("a valid workflow loads with its recipe and defaults", "[workflow]") {
  WorkflowDir dir;
  auto w = LoadWorkflowFile(dir.Write(kValid), Schema());
  INFO(w.status().ToString());
  REQUIRE(w.ok());
  CHECK(w->name == "quick");
  CHECK(w->stack.name == "megatron");
  CHECK(w->launcher.with["devices"] == 2);
  CHECK(w->seed == 7);
  CHECK(w->budget.gpu_hours == 0.5);
  CHECK(w->budget.job_time_limit_s == 3600);
  CHECK(w->budget.time_limit_factor == 3);
  CHECK(w->measure.noise_band == 0.03);
  CHECK(w->gate.paired_losses == 5);
  REQUIRE(w->steps.size() == 3);
  CHECK(w->steps[0].with["repeats"] == 3);
  CHECK(w->steps[2].if_expr == "leader != 'baseline'");
  CHECK(w->recipe.topology.gpus_per_node == 8);
  CHECK(fs::path(w->recipe_path).is_absolute());
}

TEST_CASE("an unknown top-level key is refused with file:line:col and a suggestion",
          "[workflow]") {
  WorkflowDir dir;
  std::string path = dir.Write("");
  Status s = Parse(dir, Replace(kValid, "seed: 7", "sed: 7"));
  RequireError(s, path + ":7:1: sed: unknown key 'sed' (did you mean 'seed'?)");
}

TEST_CASE("an unknown step kind suggests the nearest", "[workflow]") {
  WorkflowDir dir;
  std::string path = dir.Write("");
  Status s = Parse(dir, Replace(kValid, "uses: benchmark", "uses: benchmrk"));
  RequireError(s, path + ":10:26: steps[0].uses: unknown step 'benchmrk' (did you mean "
                         "'benchmark'?)");
}

TEST_CASE("an unknown step option is refused", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "{repeats: 3}", "{repeat: 3}")),
               "steps[0].with.repeat: unknown key 'repeat' (did you mean 'repeats'?)");
}

TEST_CASE("unknown plugins are refused with a suggestion", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "agent: heuristic", "agent: heuristc")),
               "agent: unknown agent plugin 'heuristc' (did you mean 'heuristic'?)");
  RequireError(Parse(dir, Replace(kValid, "name: local", "name: slurn")),
               "launcher.name: unknown launcher plugin 'slurn' (did you mean 'slurm'?)");
}

TEST_CASE("'attune: 1' is required", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "attune: 1\n", "")),
               "attune: required key is missing: start the file with 'attune: 1'");
  RequireError(Parse(dir, Replace(kValid, "attune: 1", "attune: 2")),
               "unsupported workflow version 2");
}

TEST_CASE("duplicate step ids are refused", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "id: tune", "id: baseline")),
               "steps[1].id: duplicate step id 'baseline' (first used by steps[0])");
}

TEST_CASE("a missing recipe file is reported at the recipe key", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "recipes/r.yaml", "recipes/nope.yaml")), ":4:9: recipe:");
}

TEST_CASE("a recipe for another stack is refused", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "stack: megatron", "stack: automodel")),
               "the recipe is for stack 'megatron' but the workflow uses stack 'automodel'");
}

TEST_CASE("bad values name the key and what was found", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "gpu_hours: 0.5", "gpu_hours: lots")),
               "budget.gpu_hours: expected a number, found 'lots'");
  RequireError(Parse(dir, Replace(kValid, "gpu_hours: 0.5", "gpu_hours: 0")),
               "budget.gpu_hours: must be > 0");
  RequireError(Parse(dir, Replace(kValid, "budget: {gpu_hours: 0.5, max_candidates: 12}\n", "")),
               "budget: required key is missing");
  RequireError(Parse(dir, Replace(kValid, "gpu_hours: 0.5", "gpu_hours: 0.5, time_limit_factor: 1.2")),
               "budget.time_limit_factor: must be 0 (off) or at least 1.5");
  auto off = LoadWorkflowFile(dir.Write(Replace(kValid, "gpu_hours: 0.5", "gpu_hours: 0.5, time_limit_factor: 0")), Schema());
  REQUIRE(off.ok());
  CHECK(off->budget.time_limit_factor == 0);
}

TEST_CASE("a workflow recorded before time_limit_factor keeps fixed time limits", "[workflow]") {
  WorkflowDir dir;
  auto w = LoadWorkflowFile(dir.Write(kValid), Schema());
  REQUIRE(w.ok());
  nlohmann::json recorded = WorkflowToJson(*w);
  recorded["budget"].erase("time_limit_factor");
  auto old = WorkflowFromJson(recorded);
  REQUIRE(old.ok());
  CHECK(old->budget.time_limit_factor == 0);
}

TEST_CASE("measure.early_stop: on by default, off, or its settings", "[workflow][early_stop]") {
  WorkflowDir dir;
  auto with = [&](const std::string& measure) {
    return LoadWorkflowFile(dir.Write(Replace(kValid, "steps:\n", measure + "\nsteps:\n")), Schema());
  };
  auto plain = LoadWorkflowFile(dir.Write(kValid), Schema());
  REQUIRE(plain.ok());
  CHECK(plain->measure.early_stop.enabled);
  CHECK(plain->measure.early_stop.min_iterations == 20);
  CHECK(plain->measure.early_stop.relative_error == 0);
  CHECK(plain->measure.early_stop.check_every_s == 30);
  auto off = with("measure: {early_stop: false}");
  REQUIRE(off.ok());
  CHECK_FALSE(off->measure.early_stop.enabled);
  auto set = with("measure: {early_stop: {min_iterations: 12, relative_error: 0.01, check_every_s: 5}}");
  INFO(set.status().ToString());
  REQUIRE(set.ok());
  CHECK(set->measure.early_stop.enabled);
  CHECK(set->measure.early_stop.min_iterations == 12);
  CHECK(set->measure.early_stop.relative_error == 0.01);
  CHECK(set->measure.early_stop.check_every_s == 5);
  auto back = WorkflowFromJson(WorkflowToJson(*set));
  REQUIRE(back.ok());
  CHECK(back->measure.early_stop.min_iterations == 12);
  CHECK(back->measure.early_stop.check_every_s == 5);
  CHECK(WorkflowHash(*back) == WorkflowHash(*set));
  RequireError(with("measure: {early_stop: {min_iteration: 12}}").status(),
               "measure.early_stop.min_iteration: unknown key 'min_iteration' (did you mean 'min_iterations'?)");
  RequireError(with("measure: {early_stop: {min_iterations: 2}}").status(),
               "measure.early_stop.min_iterations: must be >= 3");
  RequireError(with("measure: {early_stop: {relative_error: 0.7}}").status(),
               "measure.early_stop.relative_error: must be in [0, 0.5)");
  RequireError(with("measure: {early_stop: {check_every_s: 0}}").status(),
               "measure.early_stop.check_every_s: must be > 0 seconds");
  RequireError(with("measure: {early_stop: sometimes}").status(),
               "measure.early_stop: expected true or false, found 'sometimes'");
  RequireError(with("measure: {early_stop: [1]}").status(), "measure.early_stop: expected true, false or a mapping");
}

TEST_CASE("a workflow recorded before the adaptive stop runs every job to its end", "[workflow][early_stop]") {
  WorkflowDir dir;
  auto w = LoadWorkflowFile(dir.Write(kValid), Schema());
  REQUIRE(w.ok());
  nlohmann::json recorded = WorkflowToJson(*w);
  recorded["measure"].erase("early_stop");
  auto old = WorkflowFromJson(recorded);
  REQUIRE(old.ok());
  CHECK_FALSE(old->measure.early_stop.enabled);
}

TEST_CASE("a bad if: expression is refused at validation", "[workflow]") {
  WorkflowDir dir;
  RequireError(Parse(dir, Replace(kValid, "leader != 'baseline'", "leader != ")),
               "steps[2].if: unexpected end of expression");
}

TEST_CASE("YAML syntax errors carry line and column", "[workflow]") {
  WorkflowDir dir;
  std::string path = dir.Write("");
  RequireError(Parse(dir, "attune: 1\nsteps: [a, b\n"), path + ":");
}

TEST_CASE("the normalized JSON round-trips and its hash ignores file locations", "[workflow]") {
  WorkflowDir dir;
  auto w = LoadWorkflowFile(dir.Write(kValid), Schema());
  REQUIRE(w.ok());
  auto back = WorkflowFromJson(WorkflowToJson(*w));
  REQUIRE(back.ok());
  CHECK(WorkflowToJson(*back) == WorkflowToJson(*w));
  CHECK(WorkflowHash(*back) == WorkflowHash(*w));
  Workflow moved = *w;
  moved.source_path = "/elsewhere/wf.yaml";
  CHECK(WorkflowHash(moved) == WorkflowHash(*w));
  moved.budget.gpu_hours = 1;
  CHECK(WorkflowHash(moved) != WorkflowHash(*w));
  CHECK(WorkflowHash(*w).size() == 64);
}

TEST_CASE("an empty schema checks no plugin or step names", "[workflow]") {
  WorkflowDir dir;
  auto w = LoadWorkflowFile(dir.Write(Replace(kValid, "uses: tune", "uses: anything")),
                            WorkflowSchema{});
  CHECK(w.ok());
}

}  // namespace
}  // namespace attune
