// Copyright attune authors.
//
// The schema of this plugin's `with:` options (JSON Schema subset, docs/plugins.md "Options"):
// declared in the plugin's descriptor so that `attune validate` checks a workflow without creating
// The plugin, and validated again by the factory (attune::support::ValidateOptions)..
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_OPTIONS_SCHEMA_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_OPTIONS_SCHEMA_H_

namespace attune::slurm {

// The Slurm launcher's options (docs/slurm.md lists them).
extern const char kOptionsSchema[];

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_OPTIONS_SCHEMA_H_
