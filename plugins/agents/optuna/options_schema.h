// Copyright attune authors.
//
// The JSON Schema of the optuna agent's `with:` block (docs/plugins.md#options).
#ifndef ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTIONS_SCHEMA_H_
#define ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTIONS_SCHEMA_H_

namespace attune::agents::optuna {

extern const char kOptionsSchema[];

}  // namespace attune::agents::optuna

#endif  // ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTIONS_SCHEMA_H_
