// Copyright attune authors.
//
// Exports the local launcher plugin.

#include "attune/plugin.h"
#include "local_launcher.h"

ATTUNE_PLUGIN(attune::PluginKind::kLauncher, "local", "0.1.0", attune::local::CreateLocalLauncher)
