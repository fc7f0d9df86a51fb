#include "attune/support/yaml_schema.h"

#include <cstdlib>

namespace attune::support::yaml {

std::string Where(const std::string& source, const YAML::Mark& mark) {
  if (mark.line < 0) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

void Fail(const std::string& source, const YAML::Node& node, const std::string& path,
          const std::string& what) {
  throw SchemaError{Where(source, node.Mark()) + ": " + path + ": " + what};
}

void CheckKeys(const std::string& source, const YAML::Node& map, const std::string& path,
               const std::set<std::string>& allowed) {
  if (!map.IsMap()) Fail(source, map, path, "expected a mapping");
  for (const auto& kv : map) {
    std::string key = kv.first.as<std::string>();
    if (allowed.count(key)) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    Fail(source, kv.first, path, "unknown key '" + key + "' (allowed: " + list + ")");
  }
}

std::string Str(const std::string& source, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) Fail(source, node, path, "expected a string");
  return node.Scalar();
}

std::string RequiredStr(const std::string& source, const YAML::Node& map, const std::string& key,
                        const std::string& path) {
  if (!map[key]) Fail(source, map, path, "missing required key '" + key + "'");
  return Str(source, map[key], path + "." + key);
}

double Num(const std::string& source, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) Fail(source, node, path, "expected a number");
  const std::string& s = node.Scalar();
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) Fail(source, node, path, "expected a number, found '" + s + "'");
  return d;
}

bool Bool(const std::string& source, const YAML::Node& node, const std::string& path) {
  if (node.IsScalar() && (node.Scalar() == "true" || node.Scalar() == "false")) return node.Scalar() == "true";
  Fail(source, node, path, "expected true or false");
}

}  // namespace attune::support::yaml
