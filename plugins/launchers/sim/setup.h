// Copyright attune authors.
//
// TrainingSetup: what the simulator models, the parallel plan a stack maps its recipe to
// (attune/sim_plan.h; Stack::SimulationPlan). The simulator reads no recipe itself.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_SETUP_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_SETUP_H_

#include "attune/sim_plan.h"

namespace attune::sim {

using TrainingSetup = ParallelPlan;

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_SETUP_H_
