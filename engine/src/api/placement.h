// Copyright attune authors.
//
// Where a job's devices go: the one rule the engine's requests (steps/job_driver.h, JobNodes) and
// `attune recipe launch --json` (which `attune kuberay render` reads) share.
#ifndef ATTUNE_ENGINE_API_PLACEMENT_H_
#define ATTUNE_ENGINE_API_PLACEMENT_H_

#include <algorithm>

#include "attune/recipe.h"

namespace attune {

// The nodes `devices` (Stack::Devices of `recipe`) occupy: the topology's, or, when the stack adds
// devices beyond the topology's (slime's rollout engines), as many of the cluster's nodes as they
// fill (`devices_per_node` 0: unknown, the topology's GPUs per node stand in).
inline int NodesFor(const Recipe& recipe, int devices, int devices_per_node) {
  const int topology_nodes = std::max(1, recipe.topology.nodes);
  if (devices <= recipe.topology.WorldSize()) return topology_nodes;
  const int per_node = std::max(1, devices_per_node > 0 ? devices_per_node : recipe.topology.gpus_per_node);
  return std::max(topology_nodes, (devices + per_node - 1) / per_node);
}

}  // namespace attune

#endif  // ATTUNE_ENGINE_API_PLACEMENT_H_
