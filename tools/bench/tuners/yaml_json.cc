// Copyright attune authors.
#include "yaml_json.h"

#include <cstdlib>

namespace attune::bench {
namespace {

nlohmann::json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted in the file: keep it a string
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  if (s == "null" || s == "~") return nullptr;
  if (!s.empty()) {
    char* end = nullptr;
    long long i = std::strtoll(s.c_str(), &end, 10);
    if (*end == '\0') return i;
    double d = std::strtod(s.c_str(), &end);
    if (*end == '\0') return d;
  }
  return s;
}

}  // namespace

nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) out[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return out;
    }
  }
  return nullptr;
}

YAML::Node JsonToYaml(const nlohmann::json& j) {
  if (j.is_object()) {
    YAML::Node n(YAML::NodeType::Map);
    for (const auto& [k, v] : j.items()) n[k] = JsonToYaml(v);
    return n;
  }
  if (j.is_array()) {
    YAML::Node n(YAML::NodeType::Sequence);
    for (const auto& v : j) n.push_back(JsonToYaml(v));
    return n;
  }
  if (j.is_null()) return YAML::Node(YAML::NodeType::Null);
  if (j.is_string()) return YAML::Node(j.get<std::string>());
  if (j.is_boolean()) return YAML::Node(j.get<bool>());
  if (j.is_number_integer()) return YAML::Node(j.get<long long>());
  return YAML::Node(j.get<double>());
}

Result<nlohmann::json> LoadYamlFileAsJson(const std::string& path) {
  try {
    return YamlToJson(YAML::LoadFile(path));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(path + ": cannot read YAML: " + e.what());
  }
}

}  // namespace attune::bench
