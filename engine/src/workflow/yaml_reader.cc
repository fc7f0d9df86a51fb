#include "workflow/yaml_reader.h"

#include <vector>

#include "plugin/plugin_host.h"

namespace attune::workflow {

std::string JoinPath(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

Status YamlReader::Error(const YAML::Node& node, const std::string& path,
                         const std::string& message) const {
  auto mark = node.Mark();
  std::string where = source_;
  if (mark.line >= 0) {
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return Status::InvalidArgument(where + ": " + (path.empty() ? "" : path + ": ") + message);
}

Status YamlReader::RequireMap(const YAML::Node& node, const std::string& path) const {
  if (!node.IsMap()) return Error(node, path, "expected a mapping (key: value lines)");
  return Status::Ok();
}

Status YamlReader::CheckKeys(const YAML::Node& map, const std::string& path,
                             const std::set<std::string>& allowed) const {
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& kv : map) {
    std::string key = kv.first.Scalar();
    if (allowed.count(key)) continue;
    std::string nearest = NearestName(key, names);
    std::string expected;
    for (const auto& n : names) expected += (expected.empty() ? "" : ", ") + n;
    return Error(kv.first, JoinPath(path, key),
                 "unknown key '" + key + "'" +
                     (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                     "; expected one of: " + (expected.empty() ? "(none)" : expected));
  }
  return Status::Ok();
}

Status YamlReader::ReadString(const YAML::Node& map, const std::string& key,
                              const std::string& path, std::string* out) const {
  YAML::Node node = map[key];
  if (!node) return Status::Ok();
  if (!node.IsScalar()) return Error(node, JoinPath(path, key), "expected a string");
  *out = node.Scalar();
  return Status::Ok();
}

namespace {
template <typename T>
Status ReadNumber(const YamlReader& r, const YAML::Node& map, const std::string& key,
                  const std::string& path, const char* what, T* out) {
  YAML::Node node = map[key];
  if (!node) return Status::Ok();
  if (node.IsScalar()) {
    try {
      *out = node.as<T>();
      return Status::Ok();
    } catch (const YAML::Exception&) {
      // yaml-cpp reports a failed conversion by throwing; the message below says what was found.
    }
  }
  std::string found = node.IsScalar() ? "'" + node.Scalar() + "'" : std::string("a collection");
  return r.Error(node, JoinPath(path, key), std::string("expected ") + what + ", found " + found);
}
}  // namespace

Status YamlReader::ReadDouble(const YAML::Node& map, const std::string& key,
                              const std::string& path, double* out) const {
  return ReadNumber(*this, map, key, path, "a number", out);
}
Status YamlReader::ReadInt(const YAML::Node& map, const std::string& key, const std::string& path,
                           int* out) const {
  return ReadNumber(*this, map, key, path, "an integer", out);
}
Status YamlReader::ReadUint64(const YAML::Node& map, const std::string& key,
                              const std::string& path, uint64_t* out) const {
  return ReadNumber(*this, map, key, path, "a non-negative integer", out);
}

nlohmann::json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& kv : node) j[kv.first.Scalar()] = YamlToJson(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& item : node) j.push_back(YamlToJson(item));
      return j;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;  // quoted in the source: keep it a string
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      long long i = 0;
      double d = 0;
      if (YAML::convert<long long>::decode(node, i)) return i;
      if (YAML::convert<double>::decode(node, d)) return d;
      return s;
    }
    default:
      return nullptr;
  }
}

}  // namespace attune::workflow
