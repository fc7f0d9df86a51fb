// Copyright attune authors.
#include "options_schema.h"
#include "random_agent.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "random", "0.1.0",
                           attune::agents::CreateRandomAgent, attune::agents::random::kOptionsSchema)
