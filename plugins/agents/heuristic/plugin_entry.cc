// Copyright attune authors.
#include "heuristic_agent.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "heuristic", "0.1.0",
                           attune::agents::CreateHeuristicAgent,
                           attune::agents::heuristic::kOptionsSchema)
