// Copyright attune authors.
//
// The codex agent plugin's one exported symbol.
#include "attune/plugin.h"
#include "codex_agent.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "codex", "0.1.0",
                           attune::agents::CreateCodexAgent, attune::agents::codex::kOptionsSchema)
