// Copyright attune authors.
//
// YAML <-> JSON for the bench's workflow handling (scalars that read as numbers or booleans
// become JSON numbers or booleans; everything else stays a string).
#ifndef ATTUNE_TOOLS_BENCH_TUNERS_YAML_JSON_H_
#define ATTUNE_TOOLS_BENCH_TUNERS_YAML_JSON_H_

#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "attune/status.h"

namespace attune::bench {

nlohmann::json YamlToJson(const YAML::Node& node);
YAML::Node JsonToYaml(const nlohmann::json& json);
Result<nlohmann::json> LoadYamlFileAsJson(const std::string& path);

}  // namespace attune::bench

#endif  // ATTUNE_TOOLS_BENCH_TUNERS_YAML_JSON_H_
