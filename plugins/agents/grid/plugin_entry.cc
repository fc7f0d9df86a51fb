// Copyright attune authors.
#include "grid_agent.h"

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "grid", "0.1.0", attune::agents::CreateGridAgent)
