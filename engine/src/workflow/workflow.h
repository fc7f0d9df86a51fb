// Copyright attune authors.
//
// Workflow: a campaign declared in YAML (docs/workflows.md is the reference).
//
//   attune: 1
//   name: quickstart
//   stack: megatron                       # or {name: megatron, with: {...}}
//   recipe: ../recipes/minigpt.yaml       # relative to this file
//   launcher: {name: local, with: {devices: 2}}
//   agent: heuristic                      # or {name: heuristic, with: {...}}
//   seed: 7
//   budget: {gpu_hours: 0.5, max_candidates: 12, job_time_limit_s: 300}
//   measure: {noise_band: 0.03, repeats: 2, early_stop: {min_iterations: 20}}
//   gate: {loss_rel_tolerance: 0.02, paired_losses: 5}
//   steps:
//     - {id: baseline, uses: benchmark, with: {repeats: 3}}
//     - {id: tune, uses: tune}
//     - {id: verify, uses: verify, if: "leader != 'baseline'"}
//     - {id: report, uses: report}
//
// Validation happens before anything runs. Unknown keys, unknown step kinds and unknown plugins
// are errors "file:line:col: path: message (did you mean ...?)".
#ifndef ATTUNE_ENGINE_WORKFLOW_WORKFLOW_H_
#define ATTUNE_ENGINE_WORKFLOW_WORKFLOW_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe.h"
#include "attune/status.h"
#include "attune/support/json_schema.h"

namespace attune {

struct PluginRef {
  std::string name;
  nlohmann::json with = nlohmann::json::object();
};

struct StepDecl {
  std::string id;      // unique in the workflow: [a-z0-9_-]+
  std::string uses;    // a registered step kind: benchmark, tune, verify, report, ...
  nlohmann::json with = nlohmann::json::object();
  std::string if_expr; // "" = always
};

struct BudgetSpec {
  double gpu_hours = 0;        // required, > 0
  int max_candidates = 50;
  double job_time_limit_s = 3600;  // a job's time limit; worst case reserved = devices × limit
  // Once the baseline has measured, later jobs get min(job_time_limit_s, this × the baseline's
  // longest run): a job three times slower than the baseline is not worth its GPU-hours, and a
  // hang costs that much instead of the whole limit. 0: every job gets job_time_limit_s.
  double time_limit_factor = 3;
};

// The adaptive stop of a running job: once its log shows enough steady iterations that the
// median step time is known to `relative_error`, the engine stops the job and measures what it
// logged (docs/workflows.md, "measure.early_stop"). Saves the GPU-hours of recipes whose
// benchmark form still runs long (a schedule the stack cannot shorten).
struct EarlyStopSpec {
  bool enabled = true;
  int min_iterations = 20;       // steady (non-warm-up) iterations before a stop is considered
  double relative_error = 0;     // standard error of the median step time; 0: noise_band ÷ 6
  double check_every_s = 30;     // how often a running job's log is read (wall-clock seconds)
};

// The most extra runs `measure.confirm` may ask for.
inline constexpr int kMaxConfirmRuns = 10;

struct MeasureSpec {
  double noise_band = 0.03;    // relative; the leader must be beaten by more than this
  int repeats = 1;             // runs per candidate
  // Extra runs a candidate gets when its runs say it would become the leader: it runs again (up
  // to this many times, while it still would lead) and is ranked on the median of all its runs,
  // so that one lucky run on a noisy machine does not make the leader. 0: off.
  int confirm = 0;
  // Extra runs for the leader's closest rivals when tuning would otherwise end with budget left
  // (the agent is done, or the candidate limit is reached): a candidate whose median is within
  // the noise band of the leader's runs again, up to this many times, closest first, and is
  // ranked again on the median of its runs. 0: off. Limited like `confirm`.
  int rivals = 0;
  EarlyStopSpec early_stop;
};

struct GateSpec {
  double loss_rel_tolerance = 0.02;  // paired-loss check default (stack levers may widen it)
  int paired_losses = 5;             // how many first losses are compared
};

struct Workflow {
  int version = 1;
  std::string name;
  std::string source_path;   // absolute path of the YAML file ("" when rebuilt from the log)
  PluginRef stack;
  PluginRef launcher;
  PluginRef agent;
  std::string recipe_path;   // absolute
  Recipe recipe;             // loaded and embedded at validation time
  uint64_t seed = 0;
  BudgetSpec budget;
  MeasureSpec measure;
  GateSpec gate;
  std::vector<StepDecl> steps;
};

// What the validator checks a workflow against. Step kinds, their options and the names `if:` may
// use come from the step registry (BuiltinStepSchema); plugin names and the schemas of their
// `with:` blocks from the plugin host. An empty set or map means "do not check".
struct WorkflowSchema {
  // step kind -> the schema of its `with:` options (keys, types, ranges).
  std::map<std::string, support::JsonSchema> step_kinds;
  std::set<std::string> stacks, launchers, agents;
  // plugin name -> the schema its `with:` must satisfy (a plugin that declares none is absent).
  std::map<std::string, support::JsonSchema> stack_options, launcher_options, agent_options;
  // The names an `if:` condition may use.
  std::set<std::string> condition_names;
};

class PluginHost;
// Adds the names of the plugins `host` found, and the option schemas they declare, to `schema`.
void AddPluginsToSchema(const PluginHost& host, WorkflowSchema* schema);

Result<Workflow> LoadWorkflowFile(const std::string& path, const WorkflowSchema& schema);
Result<Workflow> ParseWorkflowYaml(const std::string& text, const std::string& source_path,
                                   const WorkflowSchema& schema);

// The normalized form recorded as the first event of a campaign, and its inverse. A resumed
// campaign runs the workflow it started with, rebuilt from this JSON.
nlohmann::json WorkflowToJson(const Workflow& w);
Result<Workflow> WorkflowFromJson(const nlohmann::json& j);
std::string WorkflowHash(const Workflow& w);  // SHA-256 of the normalized JSON

// `if:` conditions: a small expression language over named values:
//   literals (numbers, 'strings', true/false), names, == != < <= > >=, && || !, parentheses.
// Unknown names are errors (naming the known ones).
Result<bool> EvaluateCondition(const std::string& expr,
                               const std::map<std::string, nlohmann::json>& values);
// Checks syntax and, when `names` is not empty, that every name used is one of them (with a
// did-you-mean). Used at validation time, before anything runs.
Status CheckCondition(const std::string& expr, const std::set<std::string>& names);

}  // namespace attune

#endif  // ATTUNE_ENGINE_WORKFLOW_WORKFLOW_H_
