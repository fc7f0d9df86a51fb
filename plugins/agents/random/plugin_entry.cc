// Copyright attune authors.
#include "random_agent.h"

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "random", "0.1.0", attune::agents::CreateRandomAgent)
