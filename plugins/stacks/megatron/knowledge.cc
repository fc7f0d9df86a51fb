#include "knowledge.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "attune/support/yaml_schema.h"

namespace attune::megatron {
namespace {

using support::yaml::Bool;
using support::yaml::CheckKeys;
using support::yaml::Fail;
using support::yaml::Num;
using support::yaml::RequiredStr;
using support::yaml::SchemaError;
using support::yaml::Str;
using support::yaml::Where;

std::vector<std::string> StrList(const std::string& source, const YAML::Node& node,
                                 const std::string& path) {
  if (!node) return {};
  if (!node.IsSequence()) Fail(source, node, path, "expected a list");
  std::vector<std::string> out;
  for (size_t i = 0; i < node.size(); ++i) {
    out.push_back(Str(source, node[i], path + "[" + std::to_string(i) + "]"));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> StrMap(const std::string& source,
                                                        const YAML::Node& node,
                                                        const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!node) return out;
  if (!node.IsMap()) Fail(source, node, path, "expected a mapping");
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    out.emplace_back(key, Str(source, kv.second, path + "." + key));
  }
  return out;
}

const std::set<std::string> kKinds = {"memory_headroom", "memory_pressure", "communication",
                                      "pipeline_bubble", "launch_overhead", "compute_bound",
                                      "oom"};
const std::set<std::string> kCompanions = {"cuda_device_max_connections",
                                           "sequence_parallel_follows_tp",
                                           "uneven_split_follows_pp",
                                           "layout_follows_pp",
                                           "virtual_pipeline_follows_pp",
                                           "tp_comm_overlap_follows_sp",
                                           "param_gather_follows_prerequisites",
                                           "ep_overlap_follows_ep"};
const std::set<std::string> kGenerators = {"gpus_per_node",    "nvlink_gpus", "num_layers",
                                           "layers_per_stage", "num_experts", "world"};

void ParseLeverValues(const std::string& source, const YAML::Node& node, const std::string& path,
                      LeverSpec* spec) {
  if (!node) return;
  if (node.IsMap()) {
    // A number or a generator's name.
    auto bound = [&](const std::string& key) {
      std::string value = RequiredStr(source, node, key, path);
      bool numeric = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
      if (!numeric && !kGenerators.count(value)) {
        Fail(source, node[key], path + "." + key,
             "expected an integer or one of gpus_per_node, nvlink_gpus, num_layers, "
             "layers_per_stage, "
             "num_experts, world; found '" +
                 value + "'");
      }
      return value;
    };
    if (node["divisors_of"]) {
      CheckKeys(source, node, path, {"divisors_of", "up_to"});
      spec->divisors_of = bound("divisors_of");
      spec->divisors_up_to = bound("up_to");
      return;
    }
    CheckKeys(source, node, path, {"powers_of_two_up_to"});
    spec->powers_of_two_up_to = bound("powers_of_two_up_to");
    return;
  }
  if (!node.IsSequence()) {
    Fail(source, node, path,
         "expected a list, {powers_of_two_up_to: N} or {divisors_of: G, up_to: N}");
  }
  for (size_t i = 0; i < node.size(); ++i) {
    if (node[i].IsNull()) {
      spec->values.push_back(std::nullopt);
    } else {
      spec->values.push_back(Str(source, node[i], path + "[" + std::to_string(i) + "]"));
    }
  }
}

LeverType ParseLeverType(const std::string& source, const YAML::Node& node,
                         const std::string& path) {
  std::string t = Str(source, node, path);
  if (t == "int") return LeverType::kInt;
  if (t == "switch") return LeverType::kSwitch;
  if (t == "choice") return LeverType::kChoice;
  if (t == "preset") return LeverType::kPreset;
  Fail(source, node, path, "unknown lever type '" + t + "' (expected int, switch, choice, preset)");
}

void ParsePresets(const std::string& source, const YAML::Node& node, const std::string& path,
                  LeverSpec* spec) {
  if (!node.IsSequence()) Fail(source, node, path, "expected a list of {name, set}");
  for (size_t i = 0; i < node.size(); ++i) {
    std::string p = path + "[" + std::to_string(i) + "]";
    CheckKeys(source, node[i], p, {"name", "set"});
    Preset preset{RequiredStr(source, node[i], "name", p), StrMap(source, node[i]["set"], p + ".set")};
    for (const auto& [key, value] : preset.set) {
      const auto& keys = spec->lever.keys;
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        Fail(source, node[i]["set"], p + ".set", "key '" + key + "' is not one of the lever's keys");
      }
    }
    spec->presets.push_back(std::move(preset));
  }
}

void CheckLeverShape(const std::string& source, const YAML::Node& node, const std::string& path,
                     const LeverSpec& spec) {
  if (spec.lever.keys.empty()) Fail(source, node, path + ".keys", "a lever needs at least one key");
  if (spec.type == LeverType::kPreset && spec.presets.empty()) {
    Fail(source, node, path, "a preset lever needs 'presets'");
  }
  bool needs_values = spec.type == LeverType::kInt || spec.type == LeverType::kChoice;
  if (needs_values && spec.values.empty() && spec.powers_of_two_up_to.empty() &&
      spec.divisors_of.empty()) {
    Fail(source, node, path, "an int or choice lever needs 'values'");
  }
  if (spec.type != LeverType::kPreset && spec.lever.keys.size() != 1) {
    Fail(source, node, path + ".keys", "only a preset lever may have several keys");
  }
  for (const auto& a : spec.lever.addresses) {
    if (!kKinds.count(a)) Fail(source, node["addresses"], path + ".addresses", "unknown diagnosis kind '" + a + "'");
  }
  for (const auto& c : spec.companions) {
    if (!kCompanions.count(c)) Fail(source, node["companions"], path + ".companions", "unknown companion '" + c + "'");
  }
}

// `devices: [gpu]` or `[cpu, gpu]`; absent means every device. An empty list would make a lever
// that can never move, so it is refused.
std::vector<DeviceKind> ParseDevices(const std::string& source, const YAML::Node& node,
                                     const std::string& path) {
  std::vector<DeviceKind> out;
  if (!node) return out;
  std::vector<std::string> names = StrList(source, node, path);
  if (names.empty()) Fail(source, node, path, "expected at least one of cpu, gpu (omit the key for every device)");
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "cpu" && names[i] != "gpu") {
      Fail(source, node[i], path + "[" + std::to_string(i) + "]",
           "unknown device '" + names[i] + "' (expected cpu or gpu)");
    }
    DeviceKind kind = names[i] == "cpu" ? DeviceKind::kCpu : DeviceKind::kGpu;
    if (std::find(out.begin(), out.end(), kind) != out.end()) {
      Fail(source, node[i], path + "[" + std::to_string(i) + "]", "duplicate device '" + names[i] + "'");
    }
    out.push_back(kind);
  }
  return out;
}

LeverSpec ParseLever(const std::string& source, const YAML::Node& node, const std::string& path) {
  CheckKeys(source, node, path,
            {"id", "description", "keys", "type", "default", "default_from", "values", "presets", "companions",
             "requires", "requires_present", "excludes", "addresses", "expected_speed",
             "expected_memory", "changes_rng", "loss_tolerance", "devices",
             "needs_data_parallel", "needs_tensor_parallel", "needs_experts", "order"});
  LeverSpec spec;
  spec.lever.id = RequiredStr(source, node, "id", path);
  spec.lever.description = node["description"] ? Str(source, node["description"], path + ".description") : "";
  spec.lever.keys = StrList(source, node["keys"], path + ".keys");
  if (!node["type"]) Fail(source, node, path, "missing required key 'type'");
  spec.type = ParseLeverType(source, node["type"], path + ".type");
  if (node["default"]) spec.default_value = Str(source, node["default"], path + ".default");
  if (node["default_from"]) spec.default_from = Str(source, node["default_from"], path + ".default_from");
  ParseLeverValues(source, node["values"], path + ".values", &spec);
  if (node["presets"]) ParsePresets(source, node["presets"], path + ".presets", &spec);
  spec.companions = StrList(source, node["companions"], path + ".companions");
  spec.adds_when_on = StrMap(source, node["requires"], path + ".requires");
  spec.requires_present = StrList(source, node["requires_present"], path + ".requires_present");
  spec.excludes = StrList(source, node["excludes"], path + ".excludes");
  spec.lever.addresses = StrList(source, node["addresses"], path + ".addresses");
  if (node["expected_speed"]) spec.lever.expected_speed = Num(source, node["expected_speed"], path + ".expected_speed");
  if (node["expected_memory"]) spec.lever.expected_memory = Num(source, node["expected_memory"], path + ".expected_memory");
  if (node["changes_rng"]) spec.lever.changes_rng = Bool(source, node["changes_rng"], path + ".changes_rng");
  spec.lever.order = support::yaml::LeverOrder(source, node["order"], path + ".order", spec.lever.keys);
  if (node["loss_tolerance"]) {
    spec.loss_tolerance = Str(source, node["loss_tolerance"], path + ".loss_tolerance");
    if (spec.loss_tolerance != "numerics" && spec.loss_tolerance != "changes_rng" &&
        spec.loss_tolerance != "default") {
      Fail(source, node["loss_tolerance"], path + ".loss_tolerance",
           "expected default, numerics or changes_rng");
    }
  }
  spec.devices = ParseDevices(source, node["devices"], path + ".devices");
  if (node["needs_data_parallel"]) {
    spec.needs_data_parallel = Bool(source, node["needs_data_parallel"], path + ".needs_data_parallel");
  }
  if (node["needs_tensor_parallel"]) {
    spec.needs_tensor_parallel = Bool(source, node["needs_tensor_parallel"], path + ".needs_tensor_parallel");
  }
  if (node["needs_experts"]) spec.needs_experts = Bool(source, node["needs_experts"], path + ".needs_experts");
  CheckLeverShape(source, node, path, spec);
  return spec;
}

Condition ParseCondition(const std::string& source, const YAML::Node& node,
                         const std::string& path) {
  if (!node.IsMap() || node.size() != 1) {
    Fail(source, node, path, "expected one of {present|absent|value_in|number_gt|all|any|not|derived: ...}");
  }
  auto kv = *node.begin();
  std::string op = kv.first.as<std::string>();
  const YAML::Node& arg = kv.second;
  std::string p = path + "." + op;
  Condition c;
  if (op == "present" || op == "absent") {
    c.op = op == "present" ? Condition::Op::kPresent : Condition::Op::kAbsent;
    c.key = Str(source, arg, p);
  } else if (op == "value_in" || op == "number_gt") {
    CheckKeys(source, arg, p, {"key", "values", "value", "default"});
    c.key = RequiredStr(source, arg, "key", p);
    if (arg["default"]) c.default_value = Str(source, arg["default"], p + ".default");
    if (op == "value_in") {
      c.op = Condition::Op::kValueIn;
      c.values = StrList(source, arg["values"], p + ".values");
    } else {
      c.op = Condition::Op::kNumberGt;
      if (!arg["value"]) Fail(source, arg, p, "missing required key 'value'");
      c.number = Num(source, arg["value"], p + ".value");
    }
  } else if (op == "all" || op == "any") {
    c.op = op == "all" ? Condition::Op::kAll : Condition::Op::kAny;
    if (!arg.IsSequence()) Fail(source, arg, p, "expected a list of conditions");
    for (size_t i = 0; i < arg.size(); ++i) {
      c.children.push_back(ParseCondition(source, arg[i], p + "[" + std::to_string(i) + "]"));
    }
  } else if (op == "not") {
    c.op = Condition::Op::kNot;
    c.children.push_back(ParseCondition(source, arg, p));
  } else if (op == "derived") {
    c.op = Condition::Op::kDerived;
    c.derived = Str(source, arg, p);
    if (c.derived != "padded_vocab_changes") {
      Fail(source, arg, p, "unknown derived condition '" + c.derived + "' (known: padded_vocab_changes)");
    }
  } else {
    Fail(source, kv.first, path, "unknown condition '" + op + "'");
  }
  return c;
}

ObjectiveRule ParseRule(const std::string& source, const YAML::Node& node,
                        const std::string& path) {
  CheckKeys(source, node, path, {"id", "reason", "keys"});
  ObjectiveRule rule;
  rule.id = RequiredStr(source, node, "id", path);
  rule.reason = node["reason"] ? Str(source, node["reason"], path + ".reason") : "";
  rule.keys = StrList(source, node["keys"], path + ".keys");
  return rule;
}

std::vector<ObjectiveRule> ParseRules(const std::string& source, const YAML::Node& node,
                                      const std::string& path) {
  std::vector<ObjectiveRule> out;
  if (!node) return out;
  if (!node.IsSequence()) Fail(source, node, path, "expected a list of rules");
  for (size_t i = 0; i < node.size(); ++i) {
    out.push_back(ParseRule(source, node[i], path + "[" + std::to_string(i) + "]"));
  }
  return out;
}

ConditionalRule ParseConditional(const std::string& source, const YAML::Node& node,
                                 const std::string& path) {
  CheckKeys(source, node, path, {"id", "reason", "fix", "when_changed", "refuse_if"});
  ConditionalRule rule;
  rule.id = RequiredStr(source, node, "id", path);
  rule.reason = node["reason"] ? Str(source, node["reason"], path + ".reason") : "";
  rule.fix = node["fix"] ? Str(source, node["fix"], path + ".fix") : "";
  rule.when_changed = StrList(source, node["when_changed"], path + ".when_changed");
  if (!node["refuse_if"]) Fail(source, node, path, "missing required key 'refuse_if'");
  rule.refuse_if = ParseCondition(source, node["refuse_if"], path + ".refuse_if");
  return rule;
}

void CheckVersion(const std::string& source, const YAML::Node& root) {
  if (!root["version"]) Fail(source, root, "version", "missing 'version: 1'");
  if (Str(source, root["version"], "version") != "1") {
    Fail(source, root["version"], "version", "unsupported version (expected 1)");
  }
}

template <typename Fn>
auto Guarded(const std::string& text, const std::string& source, Fn fn)
    -> Result<decltype(fn(YAML::Node()))> {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return Status::InvalidArgument(source + ": expected a mapping at the top");
    CheckVersion(source, root);
    return fn(root);
  } catch (const SchemaError& e) {
    return Status::InvalidArgument(e.message);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(Where(source, e.mark) + ": " + e.msg);
  } catch (const std::regex_error& e) {
    return Status::InvalidArgument(source + ": bad regex: " + e.what());
  }
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(path + ": cannot read (is the data directory right? it should hold "
                            "stacks/megatron/ with levers.yaml, objective.yaml and triage.yaml)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Result<std::vector<LeverSpec>> ParseLevers(const std::string& text, const std::string& source) {
  return Guarded(text, source, [&](const YAML::Node& root) {
    CheckKeys(source, root, "(top)", {"version", "levers"});
    if (!root["levers"] || !root["levers"].IsSequence()) {
      Fail(source, root, "levers", "expected a list of levers");
    }
    std::vector<LeverSpec> out;
    std::set<std::string> ids;
    for (size_t i = 0; i < root["levers"].size(); ++i) {
      std::string path = "levers[" + std::to_string(i) + "]";
      out.push_back(ParseLever(source, root["levers"][i], path));
      if (!ids.insert(out.back().lever.id).second) {
        Fail(source, root["levers"][i], path + ".id", "duplicate lever id '" + out.back().lever.id + "'");
      }
    }
    return out;
  });
}

Result<ObjectiveSpec> ParseObjective(const std::string& text, const std::string& source) {
  return Guarded(text, source, [&](const YAML::Node& root) {
    CheckKeys(source, root, "(top)", {"version", "tolerance", "objective", "conditional", "neutral", "topology"});
    ObjectiveSpec spec;
    if (const YAML::Node& t = root["tolerance"]) {
      CheckKeys(source, t, "tolerance", {"default", "numerics", "changes_rng"});
      if (t["default"]) spec.tolerance_default = Num(source, t["default"], "tolerance.default");
      if (t["numerics"]) spec.tolerance_numerics = Num(source, t["numerics"], "tolerance.numerics");
      if (t["changes_rng"]) spec.tolerance_changes_rng = Num(source, t["changes_rng"], "tolerance.changes_rng");
    }
    spec.objective = ParseRules(source, root["objective"], "objective");
    spec.neutral = ParseRules(source, root["neutral"], "neutral");
    if (root["topology"]) spec.topology = ParseRule(source, root["topology"], "topology");
    if (const YAML::Node& c = root["conditional"]) {
      if (!c.IsSequence()) Fail(source, c, "conditional", "expected a list of rules");
      for (size_t i = 0; i < c.size(); ++i) {
        spec.conditional.push_back(ParseConditional(source, c[i], "conditional[" + std::to_string(i) + "]"));
      }
    }
    return spec;
  });
}

Result<TriageSpec> ParseTriage(const std::string& text, const std::string& source) {
  return support::ParseTriageSpec(text, source);
}

Result<Knowledge> LoadKnowledge(const std::string& dir) {
  Knowledge k;
  ATTUNE_ASSIGN_OR_RETURN(std::string levers_text, ReadFile(dir + "/levers.yaml"));
  ATTUNE_ASSIGN_OR_RETURN(k.levers, ParseLevers(levers_text, dir + "/levers.yaml"));
  ATTUNE_ASSIGN_OR_RETURN(std::string objective_text, ReadFile(dir + "/objective.yaml"));
  ATTUNE_ASSIGN_OR_RETURN(k.objective, ParseObjective(objective_text, dir + "/objective.yaml"));
  ATTUNE_ASSIGN_OR_RETURN(std::string triage_text, ReadFile(dir + "/triage.yaml"));
  ATTUNE_ASSIGN_OR_RETURN(k.triage, ParseTriage(triage_text, dir + "/triage.yaml"));
  return k;
}


const char* LeverTypeName(LeverType type) {
  switch (type) {
    case LeverType::kInt: return "int";
    case LeverType::kSwitch: return "switch";
    case LeverType::kChoice: return "choice";
    case LeverType::kPreset: return "preset";
  }
  return "?";
}

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kGpu: return "gpu";
    case DeviceKind::kUnknown: return "unknown";
  }
  return "?";
}

nlohmann::json ConditionToJson(const Condition& c) {
  using Op = Condition::Op;
  nlohmann::json children = nlohmann::json::array();
  for (const auto& child : c.children) children.push_back(ConditionToJson(child));
  switch (c.op) {
    case Op::kPresent: return {{"present", c.key}};
    case Op::kAbsent: return {{"absent", c.key}};
    case Op::kValueIn: return {{"value_in", {{"key", c.key}, {"values", c.values}}}};
    case Op::kNumberGt: return {{"number_gt", {{"key", c.key}, {"value", c.number}}}};
    case Op::kAll: return {{"all", children}};
    case Op::kAny: return {{"any", children}};
    case Op::kNot: return {{"not", children.empty() ? nlohmann::json() : children[0]}};
    case Op::kDerived: return {{"derived", c.derived}};
  }
  return nullptr;
}

}  // namespace attune::megatron
