// Copyright attune authors.
#include "grid_agent.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "grid", "0.1.0",
                           attune::agents::CreateGridAgent, attune::agents::grid::kOptionsSchema)
