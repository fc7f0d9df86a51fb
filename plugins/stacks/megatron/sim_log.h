// Copyright attune authors.
//
// Megatron-LM's stdout for a simulated run (attune/sim_plan.h): the start-up lines (reference
// §4.5), the per-iteration line (§3.2), memory reports (§3.3), and the failure texts of PyTorch,
// NCCL and torchrun (§4). Formats follow the reference exactly; this stack's log parser reads them.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_LOG_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_LOG_H_

#include <string>

#include "attune/recipe.h"
#include "attune/sim_plan.h"

namespace attune::megatron {

// "2026-01-01 00:01:30.000000" for virtual seconds (virtual 0 is 2026-01-01 00:00:00 UTC).
std::string FormatTimestamp(double virtual_s);

// The whole log of `run`, a simulated job of `recipe`.
std::string RenderMegatronLog(const Recipe& recipe, const sim::SimulatedRun& run);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_LOG_H_
