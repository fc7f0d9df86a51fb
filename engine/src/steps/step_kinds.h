// Copyright attune authors.
//
// The step kinds a workflow's `uses:` may name: one table of {name, option schema, run function},
// read by the runner (which step to run), by `attune validate` and `attune run` (what `with:` may
// hold, before anything is recorded) and by the docs. Adding a kind is one row here and its run
// function in steps.h.
#ifndef ATTUNE_ENGINE_STEPS_STEP_KINDS_H_
#define ATTUNE_ENGINE_STEPS_STEP_KINDS_H_

#include <string>
#include <vector>

#include "attune/status.h"
#include "steps/run_context.h"
#include "workflow/workflow.h"

namespace attune {

struct StepKind {
  const char* name;            // the workflow's `uses:`
  const char* options_schema;  // JSON Schema of its `with:` (docs/workflows.md "Steps")
  Status (*run)(RunContext& ctx, const StepDecl& step);
};

// The built-in kinds, in the order docs/workflows.md lists them.
const std::vector<StepKind>& StepKinds();

// The kind named `name`, or nullptr.
const StepKind* FindStepKind(const std::string& name);

// The integer option `key` of `step`: its `with:` value, else the default its kind's schema
// declares, so that each default is written once, where `attune validate` and the docs read it.
// Workflows are validated against the schemas before a step runs; a key without a default (or a
// kind without the key) is a bug in this table, reported as Internal.
Result<int> StepIntOption(const StepDecl& step, const char* key);

// Every kind's option schema, compiled, and the condition names, for the workflow validator.
WorkflowSchema BuiltinStepSchema();

}  // namespace attune

#endif  // ATTUNE_ENGINE_STEPS_STEP_KINDS_H_
