#include "devices.h"

#include <algorithm>
#include <cctype>

namespace attune::megatron {
namespace {

constexpr const char* kEnvPrefix = "env:";

bool IsEnvKey(const std::string& key) { return key.rfind(kEnvPrefix, 0) == 0; }

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string DeviceList(const std::vector<DeviceKind>& kinds) {
  std::string out;
  for (DeviceKind k : kinds) out += std::string(out.empty() ? "" : ", ") + DeviceKindName(k);
  return out;
}

}  // namespace

DeviceKind ClusterDeviceKind(const ClusterInfo& cluster) {
  if (cluster.device_type.empty()) return DeviceKind::kUnknown;
  return Lower(cluster.device_type) == "cpu" ? DeviceKind::kCpu : DeviceKind::kGpu;
}

bool LeverRunsOn(const LeverSpec& spec, DeviceKind kind) {
  if (kind == DeviceKind::kUnknown || spec.devices.empty()) return true;
  return std::find(spec.devices.begin(), spec.devices.end(), kind) != spec.devices.end();
}

std::vector<Violation> DeviceViolations(const std::vector<LeverSpec>& levers, const Recipe& recipe,
                                        const ClusterInfo& cluster) {
  std::vector<Violation> out;
  DeviceKind kind = ClusterDeviceKind(cluster);
  for (const auto& spec : levers) {
    if (LeverRunsOn(spec, kind)) continue;
    for (const auto& key : spec.lever.keys) {
      if (IsEnvKey(key) || !GetValue(recipe, key)) continue;
      out.push_back({"dev.gpu_only",
                     key + " (lever " + spec.lever.id + ") works only on " + DeviceList(spec.devices) +
                         " devices, but the cluster's device type is '" + cluster.device_type +
                         "'; remove " + key + " or run on a GPU cluster"});
    }
  }
  return out;
}

std::vector<Violation> ClusterViolations(const Knowledge& knowledge, const Recipe& recipe,
                                         const ClusterInfo& cluster) {
  std::vector<Violation> violations = Violations(recipe, cluster);
  for (auto& v : DeviceViolations(knowledge.levers, recipe, cluster)) violations.push_back(std::move(v));
  return violations;
}

Status ValidateForCluster(const Knowledge& knowledge, const Recipe& recipe,
                          const ClusterInfo& cluster) {
  std::vector<Violation> violations = ClusterViolations(knowledge, recipe, cluster);
  for (auto& u : UnknownArguments(knowledge.arguments, recipe)) {
    violations.push_back({"args.known", std::move(u.message)});
  }
  return ViolationsToStatus(violations);
}

ConstraintInfo ArgumentsConstraint() {
  return {
      "args.known",
      "every flag of a recipe run by one of Megatron-LM's training scripts is an argument of some "
      "Megatron-LM release (stacks/megatron/arguments.txt) or declared in the stack's "
      "extra_arguments option: argparse stops the script on any other"};
}

ConstraintInfo DeviceConstraint() {
  return {"dev.gpu_only",
          "a lever marked `devices: [gpu]` in levers.yaml is not proposed on a CPU cluster, and its "
          "command-line flags are refused there"};
}

}  // namespace attune::megatron
