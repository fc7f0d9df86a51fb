// Copyright attune authors.
//
// The gemini agent plugin's one exported symbol.
#include "attune/plugin.h"
#include "gemini_agent.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "gemini", "0.1.0",
                           attune::agents::CreateGeminiAgent,
                           attune::agents::gemini::kOptionsSchema)
