// Copyright attune authors.
#include "steps/step_kinds.h"

#include <cassert>
#include <map>

#include <nlohmann/json.hpp>

#include "attune/support/json_schema.h"
#include "steps/steps.h"

namespace attune {
namespace {

// The options of each step kind (docs/workflows.md "Steps"): what the steps read, with the types
// and ranges they can run with. `attune validate` and `attune run` check every step against these
// before anything is recorded.
constexpr char kBenchmarkOptions[] = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "repeats": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3,
                "description": "runs of the baseline, for its time and the noise estimate"}
  }
})json";
constexpr char kTuneOptions[] = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "max_candidates": {"type": "integer", "minimum": 1, "maximum": 100000,
                       "description": "candidates this step may try (default: budget.max_candidates)"},
    "agent_retries": {"type": "integer", "minimum": 0, "maximum": 100, "default": 3,
                      "description": "new proposals asked of the agent after an unusable one"},
    "infra_retries": {"type": "integer", "minimum": 0, "maximum": 10, "default": 2,
                      "description": "new runs of a candidate whose run failed for the infrastructure (NCCL timeout, hang, node lost), each charged"},
    "stop": {"type": "object", "additionalProperties": false,
             "description": "a stop rule besides the budget and max_candidates",
             "properties": {
               "no_gain_candidates": {"type": "integer", "minimum": 1, "maximum": 100000,
                                      "description": "end the step after this many candidates ran (refusals do not count) without making a new leader"}
             }}
  }
})json";
constexpr char kVerifyOptions[] = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "repeats": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3,
                "description": "paired runs of the leader and the baseline"},
    "infra_retries": {"type": "integer", "minimum": 0, "maximum": 10, "default": 2,
                      "description": "new runs of a pair's run that failed for the infrastructure, each charged"}
  }
})json";
constexpr char kProfileOptions[] = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "infra_retries": {"type": "integer", "minimum": 0, "maximum": 10, "default": 2,
                      "description": "new profiled runs after one that failed for the infrastructure, each charged"}
  }
})json";
constexpr char kReportOptions[] = R"json({"type": "object", "additionalProperties": false})json";


}  // namespace

const std::vector<StepKind>& StepKinds() {
  static const std::vector<StepKind> kKinds = {
      {"benchmark", kBenchmarkOptions, RunBenchmarkStep},
      {"tune", kTuneOptions, RunTuneStep},
      {"verify", kVerifyOptions, RunVerifyStep},
      {"profile", kProfileOptions, RunProfileStep},
      {"report", kReportOptions, RunReportStep},
  };
  return kKinds;
}

const StepKind* FindStepKind(const std::string& name) {
  for (const StepKind& kind : StepKinds()) {
    if (name == kind.name) return &kind;
  }
  return nullptr;
}

Result<int> StepIntOption(const StepDecl& step, const char* key) {
  if (auto it = step.with.find(key); it != step.with.end() && it->is_number_integer()) {
    return it->get<int>();
  }
  // Parsed once: the schemas are constants (steps_test parses each one).
  static const std::map<std::string, nlohmann::json> kParsed = [] {
    std::map<std::string, nlohmann::json> out;
    for (const StepKind& kind : StepKinds()) out[kind.name] = nlohmann::json::parse(kind.options_schema);
    return out;
  }();
  const auto kind = kParsed.find(step.uses);
  const nlohmann::json* fallback = nullptr;
  if (kind != kParsed.end() && kind->second.contains("properties")) {
    const nlohmann::json& props = kind->second.at("properties");  // a reference into kParsed
    if (auto p = props.find(key); p != props.end() && p->contains("default")) fallback = &p->at("default");
  }
  if (!fallback || !fallback->is_number_integer()) {
    return Status::Internal(std::string("step kind '") + step.uses + "' declares no integer default for '" +
                            key + "' (steps/step_kinds.cc)");
  }
  return fallback->get<int>();
}

WorkflowSchema BuiltinStepSchema() {
  WorkflowSchema schema;
  for (const StepKind& kind : StepKinds()) {
    auto parsed = support::JsonSchema::Parse(kind.options_schema);
    assert(parsed.ok());  // because the schemas are constants, checked by steps_test
    schema.step_kinds.emplace(kind.name, std::move(parsed).value());
  }
  schema.condition_names = ConditionNames();
  return schema;
}

}  // namespace attune
