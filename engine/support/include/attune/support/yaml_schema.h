// Copyright attune authors.
//
// Reading hand-written YAML (knowledge files, triage signatures) strictly: every mistake names
// file:line:column, the key path and what was expected. The helpers throw SchemaError; a loader
// catches it (and YAML::Exception) once, at its boundary, and returns a Status, so nothing escapes
// a plugin. Used by the stacks' knowledge loaders and support::ParseTriageSpec.
#ifndef ATTUNE_SUPPORT_YAML_SCHEMA_H_
#define ATTUNE_SUPPORT_YAML_SCHEMA_H_

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace attune::support::yaml {

struct SchemaError {
  std::string message;  // "file:line:col: path: what"
};

// "file:line:col" of a node (just "file" when yaml-cpp knows no position).
std::string Where(const std::string& source, const YAML::Mark& mark);

[[noreturn]] void Fail(const std::string& source, const YAML::Node& node, const std::string& path,
                       const std::string& what);

// Refuses keys outside `allowed`, naming the bad key and the allowed ones.
void CheckKeys(const std::string& source, const YAML::Node& map, const std::string& path,
               const std::set<std::string>& allowed);

std::string Str(const std::string& source, const YAML::Node& node, const std::string& path);
std::string RequiredStr(const std::string& source, const YAML::Node& map, const std::string& key,
                        const std::string& path);
double Num(const std::string& source, const YAML::Node& node, const std::string& path);
bool Bool(const std::string& source, const YAML::Node& node, const std::string& path);

// A lever's `order` (attune::Lever::order): a list when the lever has one key, or a mapping from
// some of its `keys` to lists; each list names two or more distinct values, least to most of the
// feature, with "" for the key absent. An absent or null node gives an empty map.
std::map<std::string, std::vector<std::string>> LeverOrder(const std::string& source,
                                                            const YAML::Node& node,
                                                            const std::string& path,
                                                            const std::vector<std::string>& keys);

}  // namespace attune::support::yaml

#endif  // ATTUNE_SUPPORT_YAML_SCHEMA_H_
