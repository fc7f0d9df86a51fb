// Copyright attune authors.
//
// The argument checks Megatron-LM makes before (or at the first step of) training, with the
// exception type and message Megatron raises (reference §1 tables, §4.4). The simulator refuses a
// recipe exactly where Megatron would, so the stack's triage sees a real config error.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_RULES_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_RULES_H_

#include <optional>

#include "attune/cluster.h"
#include "attune/sim_plan.h"
#include "sim_mapping.h"

namespace attune::megatron {

// The first check the recipe fails, in Megatron's order, with the exception type, message, file
// and function Megatron raises it from; std::nullopt when Megatron accepts it.
std::optional<sim::PlanRefusal> CheckMegatronArguments(const SimSetup& setup,
                                                       const ClusterInfo& cluster);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_RULES_H_
