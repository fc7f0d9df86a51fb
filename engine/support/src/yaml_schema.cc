#include "attune/support/yaml_schema.h"

#include <algorithm>
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

std::map<std::string, std::vector<std::string>> LeverOrder(const std::string& source,
                                                            const YAML::Node& node,
                                                            const std::string& path,
                                                            const std::vector<std::string>& keys) {
  std::map<std::string, std::vector<std::string>> out;
  if (!node || node.IsNull()) return out;
  auto values = [&](const YAML::Node& list, const std::string& p) {
    if (!list.IsSequence() || list.size() < 2) {
      Fail(source, list, p, "expected a list of two or more values, least to most of the feature "
                            "(\"\" for the key absent)");
    }
    std::vector<std::string> v;
    for (size_t i = 0; i < list.size(); ++i) {
      std::string item = Str(source, list[i], p + "[" + std::to_string(i) + "]");
      if (std::find(v.begin(), v.end(), item) != v.end()) {
        Fail(source, list[i], p + "[" + std::to_string(i) + "]", "'" + item + "' is listed twice");
      }
      v.push_back(item);
    }
    return v;
  };
  if (node.IsSequence()) {
    if (keys.size() != 1) {
      Fail(source, node, path, "this lever has " + std::to_string(keys.size()) +
                                   " keys: give the order as a mapping from a key to its values");
    }
    out[keys.front()] = values(node, path);
    return out;
  }
  if (!node.IsMap()) Fail(source, node, path, "expected a list of values or a mapping of keys to lists");
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      Fail(source, kv.first, path + "." + key, "'" + key + "' is not one of the lever's keys");
    }
    out[key] = values(kv.second, path + "." + key);
  }
  return out;
}

}  // namespace attune::support::yaml
