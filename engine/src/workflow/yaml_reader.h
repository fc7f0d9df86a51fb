// Copyright attune authors.
//
// YamlReader: typed access to a yaml-cpp map with errors in the house format
//   "file:line:col: path: message (did you mean 'x'?)"
// Used by the workflow parser; keeps the parser free of error plumbing.
#ifndef ATTUNE_ENGINE_WORKFLOW_YAML_READER_H_
#define ATTUNE_ENGINE_WORKFLOW_YAML_READER_H_

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "attune/status.h"
#include "attune/support/json_schema.h"

namespace attune::workflow {

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  // "file:line:col: path: message"
  Status Error(const YAML::Node& node, const std::string& path, const std::string& message) const;
  // Refuses any key of `map` not in `allowed`, suggesting the nearest allowed key.
  Status CheckKeys(const YAML::Node& map, const std::string& path,
                   const std::set<std::string>& allowed) const;
  Status RequireMap(const YAML::Node& node, const std::string& path) const;
  // A schema violation found in the JSON form of `base` (which sits at `path`), reported at the
  // position of the offending YAML node (its key for an unknown key, its mapping for a missing one).
  Status Violation(const YAML::Node& base, const std::string& path,
                   const support::SchemaViolation& v) const;
  // `node` as JSON (attune::YamlToJson: non-finite numbers refused with their position).
  Result<nlohmann::json> ToJson(const YAML::Node& node) const;

  // Reads map[key] when present (leaves *out unchanged otherwise).
  Status ReadString(const YAML::Node& map, const std::string& key, const std::string& path,
                    std::string* out) const;
  Status ReadDouble(const YAML::Node& map, const std::string& key, const std::string& path,
                    double* out) const;
  Status ReadInt(const YAML::Node& map, const std::string& key, const std::string& path,
                 int* out) const;
  Status ReadUint64(const YAML::Node& map, const std::string& key, const std::string& path,
                    uint64_t* out) const;
  Status ReadBool(const YAML::Node& map, const std::string& key, const std::string& path,
                  bool* out) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

// "budget" + "gpu_hours" -> "budget.gpu_hours"; "" + "x" -> "x".
std::string JoinPath(const std::string& path, const std::string& key);

}  // namespace attune::workflow

#endif  // ATTUNE_ENGINE_WORKFLOW_YAML_READER_H_
