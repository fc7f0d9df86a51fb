// Copyright attune authors.
#include "optuna_agent.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "optuna", "0.1.0",
                           attune::agents::optuna::CreateOptunaAgent,
                           attune::agents::optuna::kOptionsSchema)
