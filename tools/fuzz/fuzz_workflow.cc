// Fuzzes the workflow YAML loader and validator: every input gives a workflow or a Status.
#include <cstdint>
#include <string>

#include "workflow/workflow.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const attune::WorkflowSchema kSchema = [] {
    attune::WorkflowSchema s;
    auto options = [](const char* text) { return attune::support::JsonSchema::Parse(text).value(); };
    s.step_kinds.emplace("benchmark", options(R"({"type": "object", "additionalProperties": false,
        "properties": {"repeats": {"type": "integer", "minimum": 1}}})"));
    s.step_kinds.emplace("tune", options(R"({"type": "object", "additionalProperties": false,
        "properties": {"max_candidates": {"type": "integer", "minimum": 1}}})"));
    s.step_kinds.emplace("verify", options(R"({"type": "object", "additionalProperties": false})"));
    s.step_kinds.emplace("report", options(R"({"type": "object", "additionalProperties": false})"));
    s.condition_names = {"leader", "leader_changed", "speedup"};
    s.stacks = {"megatron", "automodel"};
    s.launchers = {"sim", "local", "slurm"};
    s.agents = {"heuristic", "random", "grid"};
    return s;
  }();
  std::string text(reinterpret_cast<const char*>(data), size);
  auto workflow = attune::ParseWorkflowYaml(text, "/tmp/fuzz/workflow.yaml", kSchema);
  if (workflow.ok()) {
    auto again = attune::WorkflowFromJson(attune::WorkflowToJson(*workflow));
    (void)again;
  }
  return 0;
}
