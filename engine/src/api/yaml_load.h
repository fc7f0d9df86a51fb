// Copyright attune authors.
//
// LoadYamlDocument: the one way attune parses a user's YAML file (workflows, recipes). Before
// anything walks the document it is bounded and checked, because yaml-cpp accepts what a campaign
// must not:
//   - size: a file over YamlLimits::max_bytes is refused before parsing;
//   - text: UTF-8 without control characters (CheckYamlText), tabs used for indentation are named;
//   - duplicate keys: yaml-cpp keeps both and `map[key]` returns the first, so `gpu_hours: 60`
//     followed by `gpu_hours: 10` silently meant 60; refused, naming both lines;
//   - aliases: yaml-cpp shares an anchored node between its aliases, so a 756-byte "billion laughs"
//     document parses in microseconds and then expands to billions of nodes in whatever converts
//     it. The check counts nodes as every later walk would see them (aliases expanded) and stops
//     at YamlLimits::max_nodes, without ever expanding more;
//   - nesting deeper than YamlLimits::max_depth.
// Errors are kInvalidArgument "<source>:<line>:<col>: <message>", saying what to do.
#ifndef ATTUNE_ENGINE_SRC_API_YAML_LOAD_H_
#define ATTUNE_ENGINE_SRC_API_YAML_LOAD_H_

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune {

struct YamlLimits {
  size_t max_bytes = 4u << 20;   // 4 MiB: a workflow or recipe is a few KiB
  size_t max_nodes = 100000;     // values, counted as parsed and again with aliases expanded
  int max_depth = 64;            // nested mappings and lists
};

// `what` names the kind of file in messages: "a workflow file", "a recipe file".
Result<YAML::Node> LoadYamlDocument(std::string_view text, const std::string& source,
                                    const std::string& what, const YamlLimits& limits = {});

// The checks of LoadYamlDocument on an already parsed document (duplicate keys, nodes, depth).
Status CheckYamlTree(const YAML::Node& root, const std::string& source,
                     const YamlLimits& limits = {});

// The one conversion of a user's YAML values to JSON (workflows, recipes, plugin and step options):
//   - quoted scalars are strings, always;
//   - unquoted true/True/TRUE and false/False/FALSE are booleans; null/Null/NULL/~ and an empty
//     value are null;
//   - integers as YAML writes them (12, -3, 0x10 = 16, 0o17 = 15) are integers, other numbers
//     (1.5, 1e-3) doubles;
//   - .inf, -.inf and .nan are refused with the position: nothing attune reads may be non-finite
//     (a NaN noise band would call every candidate "within noise");
//   - everything else is a string.
Result<nlohmann::json> YamlToJson(const YAML::Node& node, const std::string& source);

// "<source>:<line>:<col>" of a node (just "<source>" when the node has no position).
std::string YamlWhere(const YAML::Node& node, const std::string& source);
std::string YamlWhere(const YAML::Mark& mark, const std::string& source);

}  // namespace attune

#endif  // ATTUNE_ENGINE_SRC_API_YAML_LOAD_H_
