// Copyright attune authors.
//
// The Megatron stack's knowledge as data: the lever catalog (levers.yaml), the objective rules
// (objective.yaml) and the failure signatures (triage.yaml), loaded from
// <data_dir>/stacks/megatron/. Loading validates the schema and reports errors as
// "<file>:<line>:<col>: <path>: <what>".
//
// Values are plain and immutable after loading; a Knowledge may be shared across threads.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_KNOWLEDGE_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_KNOWLEDGE_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "arguments.h"
#include "attune/metrics.h"
#include "attune/stack.h"
#include "attune/status.h"
#include "attune/support/log_triage.h"

namespace attune::megatron {

// How a lever's values are produced.
enum class LeverType { kInt, kSwitch, kChoice, kPreset };

// The kinds of device a lever can run on (levers.yaml `devices`); kUnknown is a cluster's kind
// when its device type is not given.
enum class DeviceKind { kUnknown, kCpu, kGpu };

// One named set of key values of a preset lever; keys of the lever not in `set` are absent.
struct Preset {
  std::string name;
  std::vector<std::pair<std::string, std::string>> set;
};

struct LeverSpec {
  Lever lever;                       // what the engine sees
  LeverType type = LeverType::kInt;
  std::optional<std::string> default_value;  // the value an absent key means ("1" for TP)
  // An absent key means the value of this other key instead (ETP: --tensor-model-parallel-size).
  std::string default_from;
  // Explicit values (std::nullopt = remove the key) or a generator.
  std::vector<std::optional<std::string>> values;
  std::string powers_of_two_up_to;   // "8", "gpus_per_node", "num_layers", "num_experts", "world"
  // Or every divisor of a generator's value up to a limit (both a number or a generator name):
  // the virtual-pipeline sizes a stage of 63 layers allows are 3, 7 and 9, no power of two.
  std::string divisors_of, divisors_up_to;
  std::vector<Preset> presets;
  std::vector<std::string> companions;                        // named companion fixes
  std::vector<std::pair<std::string, std::string>> adds_when_on;// added when the lever turns on
  std::vector<std::string> requires_present;                  // must already be set
  std::vector<std::string> excludes;                          // must be absent to turn it on
  std::string loss_tolerance;        // tolerance class; "" = by changes_rng
  std::vector<DeviceKind> devices;   // where the lever works (kCpu, kGpu); empty = everywhere
  bool needs_data_parallel = false;    // a no-op at data-parallel size 1: not offered there
  bool needs_tensor_parallel = false;  // a no-op at tensor-parallel size 1: not offered there
  bool needs_experts = false;          // a no-op on a dense model (no --num-experts): not offered there
};

// A condition of a conditional objective rule (objective.yaml `refuse_if`).
struct Condition {
  enum class Op { kPresent, kAbsent, kValueIn, kNumberGt, kAll, kAny, kNot, kDerived };
  Op op = Op::kPresent;
  std::string key;                  // kPresent, kAbsent, kValueIn, kNumberGt
  std::vector<std::string> values;  // kValueIn
  std::optional<std::string> default_value;
  double number = 0;                // kNumberGt
  std::string derived;              // kDerived: "padded_vocab_changes"
  std::vector<Condition> children;  // kAll, kAny, kNot (one child)
};

struct ObjectiveRule {
  std::string id;
  std::string reason;
  std::vector<std::string> keys;
};

struct ConditionalRule {
  std::string id;
  std::string reason;
  std::string fix;
  std::vector<std::string> when_changed;  // keys, or "derived:data_parallel_size"
  Condition refuse_if;
};

struct ObjectiveSpec {
  double tolerance_default = 0.01;
  double tolerance_numerics = 0.02;
  double tolerance_changes_rng = 0.05;
  std::vector<ObjectiveRule> objective;
  std::vector<ConditionalRule> conditional;
  std::vector<ObjectiveRule> neutral;
  ObjectiveRule topology;
};

// The triage file's types are the support library's (shared by every stack).
using Signature = support::TriageSignature;
using TriageSpec = support::TriageSpec;

struct Knowledge {
  std::vector<LeverSpec> levers;
  ObjectiveSpec objective;
  TriageSpec triage;
  // Megatron-LM's command-line arguments (arguments.txt; MegatronStack::Open loads it). Empty for
  // knowledge loaded without it (the slime stack's): no flag is then checked against it.
  KnownArguments arguments;
};

// Loads the three files from `dir` (".../stacks/megatron"). Errors carry file:line:col.
Result<Knowledge> LoadKnowledge(const std::string& dir);

// Each file on its own, from text; `source` names it in error messages.
Result<std::vector<LeverSpec>> ParseLevers(const std::string& text, const std::string& source);
Result<ObjectiveSpec> ParseObjective(const std::string& text, const std::string& source);
Result<TriageSpec> ParseTriage(const std::string& text, const std::string& source);

const char* LeverTypeName(LeverType type);
const char* DeviceKindName(DeviceKind kind);  // "cpu", "gpu", "unknown"

using support::RequiredLiterals;
nlohmann::json ConditionToJson(const Condition& c);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_KNOWLEDGE_H_
