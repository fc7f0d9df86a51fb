// Copyright attune authors.
//
// The AutoModel stack's knowledge as data: stacks/automodel/{levers,objective,triage,models}.yaml,
// loaded once when the plugin is created. Errors name the file, line and column.
#ifndef ATTUNE_PLUGINS_STACKS_AUTOMODEL_KNOWLEDGE_H_
#define ATTUNE_PLUGINS_STACKS_AUTOMODEL_KNOWLEDGE_H_

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/metrics.h"
#include "attune/stack.h"
#include "attune/status.h"
#include "attune/support/log_triage.h"

namespace attune::automodel {

struct LeverSpec {
  Lever lever;                      // lever.keys = {key}
  std::string key;                  // "--distributed.tp_size"
  std::vector<std::string> values;  // what the catalog may propose
  std::string default_value;        // AutoModel's default ("" = unset)
  double loss_rel_tolerance = 0;    // 0: the gate's default
};

struct ObjectiveRule {
  std::string id;
  std::vector<std::string> patterns;  // dotted keys; "a.*" covers a section
  std::map<std::string, std::vector<std::string>> values;  // key -> values that are objective
  std::string reason;
};

struct ConditionalRule {
  std::string id;
  std::string key;                              // the dotted key it guards
  std::vector<std::string> when_any_present;    // applies when any of these is set...
  std::map<std::string, double> when_greater;   // ...or any of these exceeds the number
  std::string reason;
};

struct Knowledge {
  std::vector<LeverSpec> levers;
  std::vector<ObjectiveRule> rules;
  std::vector<ConditionalRule> conditionals;
  std::vector<std::string> neutral;
  support::TriageSpec triage;  // stacks/automodel/triage.yaml, the shared triage schema
  // stacks/automodel/models.yaml: checkpoint name -> its config.json fields (dry runs).
  std::map<std::string, nlohmann::json> models;
  // stacks/automodel/config_sections.txt (tools/automodel_sections.py): the top-level config
  // sections AutoModel's recipes read in any release from sections_first to sections_last.
  std::set<std::string> sections;
  std::string sections_first, sections_last;
  // The keys of the closed sections ("section.key" lines): step_scheduler's.
  std::map<std::string, std::set<std::string>> section_keys;
  // Sections (and "section.key"s) the user's recipe reads beyond the list (the stack's
  // extra_sections option).
  std::set<std::string> extra_sections;

  const LeverSpec* FindLever(const std::string& dotted_key) const;
};

// Loads the three files from `dir` (…/stacks/automodel).
Result<Knowledge> LoadKnowledge(const std::string& dir);

// True when dotted `key` matches `pattern` ("a.b" exactly, or "a.*" for anything under a).
bool KeyMatches(const std::string& pattern, const std::string& key);

}  // namespace attune::automodel

#endif  // ATTUNE_PLUGINS_STACKS_AUTOMODEL_KNOWLEDGE_H_
