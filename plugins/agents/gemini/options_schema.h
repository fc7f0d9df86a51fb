// Copyright attune authors.
//
// The schema of this plugin's `with:` options (JSON Schema subset, docs/plugins.md "Options"):
// declared in the plugin's descriptor so that `attune validate` checks a workflow without creating
// the plugin, and validated again by the factory (attune::support::ValidateOptions).
#ifndef ATTUNE_PLUGINS_AGENTS_GEMINI_OPTIONS_SCHEMA_H_
#define ATTUNE_PLUGINS_AGENTS_GEMINI_OPTIONS_SCHEMA_H_

namespace attune::agents::gemini {

// The gemini agent's options.
extern const char kOptionsSchema[];

}  // namespace attune::agents::gemini

#endif  // ATTUNE_PLUGINS_AGENTS_GEMINI_OPTIONS_SCHEMA_H_
