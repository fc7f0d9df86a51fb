// Copyright attune authors.
#include "heuristic_agent.h"

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "heuristic", "0.1.0",
              attune::agents::CreateHeuristicAgent)
