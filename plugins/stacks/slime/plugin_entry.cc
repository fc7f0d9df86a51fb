// The exported descriptor of the slime stack plugin.
#include "attune/plugin.h"
#include "options_schema.h"
#include "slime_stack.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kStack, "slime", "0.1.0",
                           attune::slime::Create, attune::slime::kOptionsSchema)
