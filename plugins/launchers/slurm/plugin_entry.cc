// Copyright attune authors.
//
// The Slurm launcher plugin's exported descriptor.
#include "attune/plugin.h"
#include "options_schema.h"
#include "slurm_launcher.h"

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kLauncher, "slurm", "0.1.0",
                           attune::slurm::CreateSlurmLauncher, attune::slurm::kOptionsSchema)
