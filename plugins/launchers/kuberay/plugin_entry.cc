// Copyright attune authors.
//
// The KubeRay launcher plugin's exported descriptor.
#include "attune/plugin.h"
#include "kuberay_launcher.h"

ATTUNE_PLUGIN(attune::PluginKind::kLauncher, "kuberay", "0.1.0",
              attune::kuberay::CreateKubeRayLauncher)
