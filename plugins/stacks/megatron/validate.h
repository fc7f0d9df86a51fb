// Copyright attune authors.
//
// Megatron-LM's combination rules (reference §1 and §7.4), checked before any GPU time is spent.
// Each rule has a stable id ("par.heads_tp"); a violation names the rule, the values and the fix.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_VALIDATE_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_VALIDATE_H_

#include <string>
#include <vector>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "attune/status.h"

namespace attune::megatron {

struct Violation {
  std::string rule_id;
  std::string message;  // values found and the fix
};

struct ConstraintInfo {
  std::string id;
  std::string text;  // the rule in words
};

// Every violated rule, in catalog order.
std::vector<Violation> Violations(const Recipe& recipe, const ClusterInfo& cluster);

// OK, or InvalidArgument whose message lists "<rule id>: <message>" for every violation.
Status ValidateRecipe(const Recipe& recipe, const ClusterInfo& cluster);

// The InvalidArgument ValidateRecipe returns for these violations (OK when there are none).
Status ViolationsToStatus(const std::vector<Violation>& violations);

// The rules, for Describe().
const std::vector<ConstraintInfo>& ConstraintCatalog();

// True when the CUDA_DEVICE_MAX_CONNECTIONS=1 rule applies to this recipe and cluster (never on a
// CPU cluster: there is no CUDA there).
bool NeedsMaxConnectionsOne(const Recipe& recipe, const ClusterInfo& cluster);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_VALIDATE_H_
