// Copyright attune authors.
//
// Exports the local launcher plugin.

#include "attune/plugin.h"
#include "local_launcher.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kLauncher, "local", "0.1.0",
                           attune::local::CreateLocalLauncher, attune::local::kOptionsSchema)
