// Copyright attune authors.
#include "options_schema.h"
#include "optuna_agent.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "optuna", "0.1.0",
                           attune::agents::optuna::CreateOptunaAgent,
                           attune::agents::optuna::kOptionsSchema)
