// The exported descriptor of the megatron stack plugin.
#include "attune/plugin.h"
#include "megatron_stack.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kStack, "megatron", "0.1.0",
                           attune::megatron::Create, attune::megatron::kOptionsSchema)
