// Copyright attune authors.
//
// The static objective gate for Megatron recipes, driven by objective.yaml and the lever catalog:
// objective keys refuse, conditional rules refuse in context, lever / neutral / topology keys
// pass, anything else fails closed. Every verdict names the deciding rule.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_OBJECTIVE_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_OBJECTIVE_H_

#include "attune/recipe.h"
#include "attune/stack.h"
#include "knowledge.h"

namespace attune::megatron {

GateVerdict CheckObjectiveRules(const Knowledge& knowledge, const Recipe& baseline,
                                const Recipe& candidate);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_OBJECTIVE_H_
