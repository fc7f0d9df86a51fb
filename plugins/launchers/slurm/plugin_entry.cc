// Copyright attune authors.
//
// The Slurm launcher plugin's exported descriptor.
#include "attune/plugin.h"
#include "slurm_launcher.h"

ATTUNE_PLUGIN(attune::PluginKind::kLauncher, "slurm", "0.1.0", attune::slurm::CreateSlurmLauncher)
