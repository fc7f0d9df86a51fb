// Copyright attune authors.
//
// The schema of this plugin's `with:` options (JSON Schema subset, docs/plugins.md "Options"):
// declared in the plugin's descriptor so that `attune validate` checks a workflow without creating
// The plugin, and validated again by the factory (attune::support::ValidateOptions)..
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_OPTIONS_SCHEMA_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_OPTIONS_SCHEMA_H_

namespace attune::megatron {

// The megatron stack's options: `extra_arguments`, flags beyond stacks/megatron/arguments.txt.
extern const char kOptionsSchema[];

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_OPTIONS_SCHEMA_H_
