// Copyright attune authors.
//
// The companion fixes named in levers.yaml (`companions:`): the extra changes a move makes in the
// same candidate so that it stays valid, and keeps what the recipe meant. The pipeline ones refit
// a virtual pipeline, an uneven split or a layout to a new PP.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_COMPANIONS_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_COMPANIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "attune/cluster.h"
#include "attune/recipe.h"

namespace attune::megatron {

// A change of `key` to `to` on `recipe`, recorded in `changes`; nothing when it already has `to`.
void AddChange(Recipe* recipe, std::vector<Change>* changes, const std::string& key,
               const std::optional<std::string>& to);

// Removes `key` when the recipe sets it, recording the change.
void RemoveIfSet(Recipe* recipe, std::vector<Change>* changes, const std::string& key);

// Applies the companion `name` to `after`, the recipe `before` with the move's own changes, adding
// its changes to `changes`.
void ApplyCompanion(const std::string& name, const ClusterInfo& cluster, const Recipe& before, Recipe* after,
                    std::vector<Change>* changes);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_COMPANIONS_H_
