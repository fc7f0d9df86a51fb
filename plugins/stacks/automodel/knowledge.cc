#include "knowledge.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "attune/recipe.h"
#include "attune/support/release_list.h"
#include "attune/support/yaml_schema.h"

namespace attune::automodel {
namespace {

std::vector<std::string> Strings(const YAML::Node& node) {
  std::vector<std::string> out;
  if (!node) return out;
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

LeverSpec ParseLever(const std::string& file, const YAML::Node& n, const std::string& path) {
  LeverSpec spec;
  spec.lever.id = n["id"].as<std::string>();
  spec.key = n["key"].as<std::string>();
  spec.lever.keys = {spec.key};
  spec.lever.description = n["description"].as<std::string>("");
  spec.lever.addresses = Strings(n["addresses"]);
  spec.lever.expected_speed = n["expected_speed"].as<double>(0);
  spec.lever.expected_memory = n["expected_memory"].as<double>(0);
  spec.lever.changes_rng = n["changes_rng"].as<bool>(false);
  spec.lever.order = support::yaml::LeverOrder(file, n["order"], path + ".order", spec.lever.keys);
  spec.values = Strings(n["values"]);
  spec.default_value = n["default"].as<std::string>("");
  spec.loss_rel_tolerance = n["loss_rel_tolerance"].as<double>(0);
  return spec;
}

ObjectiveRule ParseRule(const YAML::Node& n) {
  ObjectiveRule rule;
  rule.id = n["id"].as<std::string>();
  rule.patterns = Strings(n["keys"]);
  rule.reason = n["reason"].as<std::string>("");
  if (n["values"]) {
    for (const auto& kv : n["values"]) rule.values[kv.first.as<std::string>()] = Strings(kv.second);
  }
  return rule;
}

ConditionalRule ParseConditional(const YAML::Node& n) {
  ConditionalRule rule;
  rule.id = n["id"].as<std::string>();
  rule.key = n["key"].as<std::string>();
  rule.when_any_present = Strings(n["when_any_present"]);
  if (n["when_greater"]) {
    for (const auto& kv : n["when_greater"]) {
      rule.when_greater[kv.first.as<std::string>()] = kv.second.as<double>();
    }
  }
  rule.reason = n["reason"].as<std::string>("");
  return rule;
}

Result<YAML::Node> LoadYaml(const std::string& path) {
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::NotFound("cannot read '" + path + "': the automodel stack's knowledge files are "
                            "missing; set ATTUNE_DATA_DIR to the folder holding stacks/");
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                                   std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

Status LoadLevers(const std::string& dir, Knowledge* k) {
  std::string file = dir + "/levers.yaml";
  ATTUNE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(file));
  try {
    size_t i = 0;
    for (const auto& n : root["levers"]) {
      k->levers.push_back(ParseLever(file, n, "levers[" + std::to_string(i++) + "]"));
    }
  } catch (const support::yaml::SchemaError& e) {
    return Status::InvalidArgument(e.message);
  }
  return Status::Ok();
}

Status LoadObjective(const std::string& dir, Knowledge* k) {
  std::string file = dir + "/objective.yaml";
  ATTUNE_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(file));
  for (const auto& n : root["rules"]) k->rules.push_back(ParseRule(n));
  for (const auto& n : root["conditional"]) k->conditionals.push_back(ParseConditional(n));
  k->neutral = Strings(root["neutral"]);
  return Status::Ok();
}

Status LoadTriage(const std::string& dir, Knowledge* k) {
  std::string file = dir + "/triage.yaml";
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Status::NotFound("cannot read '" + file + "': the automodel stack's knowledge files are "
                            "missing; set ATTUNE_DATA_DIR to the folder holding stacks/");
  }
  std::ostringstream text;
  text << in.rdbuf();
  ATTUNE_ASSIGN_OR_RETURN(k->triage, support::ParseTriageSpec(text.str(), file));
  return Status::Ok();
}

// models.yaml: optional (dry runs of recipes whose checkpoint it lists need it).
Status LoadModels(const std::string& dir, Knowledge* k) {
  std::string file = dir + "/models.yaml";
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status::Ok();
  std::ostringstream text;
  text << in.rdbuf();
  ATTUNE_ASSIGN_OR_RETURN(nlohmann::json doc, YamlToJsonValue(text.str(), file));
  if (!doc.is_object() || !doc.contains("models") || !doc["models"].is_object()) {
    return Status::InvalidArgument(file + ": expected a mapping 'models:' of checkpoint names to "
                                   "config.json fields");
  }
  for (const auto& [name, fields] : doc["models"].items()) {
    if (!fields.is_object()) {
      return Status::InvalidArgument(file + ": models." + name + " must be a mapping of "
                                     "config.json fields (num_hidden_layers: ..., ...)");
    }
    k->models[name] = fields;
  }
  return Status::Ok();
}

// config_sections.txt (support/release_list.h): a section name a line, or a closed section's
// "section.key": word characters with at most one dot, inside.
Status LoadSections(const std::string& dir, Knowledge* k) {
  const support::ReleaseListEntry entry = {
      [](const std::string& line) {
        const size_t dot = line.find('.');
        const bool word_chars = std::all_of(line.begin(), line.end(), [](unsigned char c) {
          return std::isalnum(c) || c == '_' || c == '.';
        });
        return word_chars &&
               (dot == std::string::npos ||
                (dot > 0 && dot + 1 < line.size() && line.find('.', dot + 1) == std::string::npos));
      },
      "a section name such as step_scheduler or a section.key"};
  ATTUNE_ASSIGN_OR_RETURN(
      support::ReleaseList list,
      support::LoadReleaseList(dir + "/config_sections.txt", "tools/automodel_sections.py", entry));
  k->sections_first = list.first;
  k->sections_last = list.last;
  for (const std::string& line : list.entries) {
    const size_t dot = line.find('.');
    if (dot != std::string::npos) {
      k->section_keys[line.substr(0, dot)].insert(line.substr(dot + 1));
    } else {
      k->sections.insert(line);
    }
  }
  if (k->sections.empty()) {
    return Status::InvalidArgument(dir +
                                   "/config_sections.txt: no section names; regenerate the "
                                   "file with tools/automodel_sections.py");
  }
  return Status::Ok();
}

}  // namespace

const LeverSpec* Knowledge::FindLever(const std::string& dotted_key) const {
  for (const auto& spec : levers) {
    if (spec.key.substr(2) == dotted_key) return &spec;
  }
  return nullptr;
}

bool KeyMatches(const std::string& pattern, const std::string& key) {
  if (pattern.size() >= 2 && pattern.compare(pattern.size() - 2, 2, ".*") == 0) {
    std::string section = pattern.substr(0, pattern.size() - 1);  // keeps the dot
    return key.compare(0, section.size(), section) == 0 || key == pattern.substr(0, pattern.size() - 2);
  }
  return pattern == key;
}

Result<Knowledge> LoadKnowledge(const std::string& dir) {
  Knowledge k;
  try {
    ATTUNE_RETURN_IF_ERROR(LoadLevers(dir, &k));
    ATTUNE_RETURN_IF_ERROR(LoadObjective(dir, &k));
    ATTUNE_RETURN_IF_ERROR(LoadTriage(dir, &k));
    ATTUNE_RETURN_IF_ERROR(LoadModels(dir, &k));
    ATTUNE_RETURN_IF_ERROR(LoadSections(dir, &k));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(dir + ": malformed knowledge file at line " +
                                   std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return k;
}

}  // namespace attune::automodel
