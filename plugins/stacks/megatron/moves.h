// Copyright attune authors.
//
// Enumerates the legal single-lever moves from a recipe: every value the catalog allows for each
// lever, with the companion changes the lever needs (CUDA_DEVICE_MAX_CONNECTIONS with TP, SP with
// TP comm overlap, ...), kept only when the result validates and passes the objective gate.
// Levers that do not run on the cluster's devices (`devices: [gpu]` on a CPU cluster) are skipped.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_MOVES_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_MOVES_H_

#include <vector>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "attune/stack.h"
#include "knowledge.h"

namespace attune::megatron {

std::vector<Move> EnumerateMoves(const Knowledge& knowledge, const Recipe& recipe,
                                 const ClusterInfo& cluster);

// The candidate values of a lever for this recipe (generators resolved), in catalog order.
// For preset levers, the index of each preset as a string.
std::vector<std::optional<std::string>> CandidateValues(const LeverSpec& spec, const Recipe& recipe);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_MOVES_H_
