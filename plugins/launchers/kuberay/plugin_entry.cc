// Copyright attune authors.
//
// The KubeRay launcher plugin's exported descriptor.
#include "attune/plugin.h"
#include "kuberay_launcher.h"
#include "options_schema.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kLauncher, "kuberay", "0.1.0",
                           attune::kuberay::CreateKubeRayLauncher, attune::kuberay::kOptionsSchema)
