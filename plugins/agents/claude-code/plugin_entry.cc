// Copyright attune authors.
//
// The claude-code agent plugin's one exported symbol.
#include "attune/plugin.h"
#include "claude_code_agent.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "claude-code", "0.1.0",
                           attune::agents::CreateClaudeCodeAgent,
                           attune::agents::claude_code::kOptionsSchema)
