// Fuzzes the workflow YAML loader and validator: every input gives a workflow or a Status.
#include <cstdint>
#include <string>

#include "workflow/workflow.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const attune::WorkflowSchema kSchema = [] {
    attune::WorkflowSchema s;
    s.step_kinds = {{"benchmark", {"repeats"}}, {"tune", {"max_candidates"}}, {"verify", {}}, {"report", {}}};
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
