#include "workflow/yaml_reader.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "api/yaml_load.h"

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
      if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(*out)) {
          return r.Error(node, JoinPath(path, key),
                         std::string("expected a finite number, found '") + node.Scalar() + "'");
        }
      }
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

Status YamlReader::ReadBool(const YAML::Node& map, const std::string& key, const std::string& path,
                            bool* out) const {
  return ReadNumber(*this, map, key, path, "true or false", out);
}

Result<nlohmann::json> YamlReader::ToJson(const YAML::Node& node) const {
  return attune::YamlToJson(node, source_);
}

Status YamlReader::Violation(const YAML::Node& base, const std::string& path,
                             const support::SchemaViolation& v) const {
  YAML::Node node = base;
  const size_t steps = v.missing && !v.path.empty() ? v.path.size() - 1 : v.path.size();
  for (size_t i = 0; i < steps; ++i) {
    const support::JsonPathStep& step = v.path[i];
    const bool last = i + 1 == steps;
    YAML::Node next;
    if (step.is_index && node.IsSequence() && step.index < node.size()) {
      next = node[step.index];
    } else if (!step.is_index && node.IsMap()) {
      for (const auto& kv : node) {
        if (kv.first.IsScalar() && kv.first.Scalar() == step.key) {
          next = last && v.at_key ? kv.first : kv.second;
          break;
        }
      }
    }
    if (!next.IsDefined()) break;  // keep the closest position found
    node = next;
  }
  return Error(node, support::JoinJsonPath(path, v.path), v.message);
}

}  // namespace attune::workflow
