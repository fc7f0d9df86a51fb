// Copyright attune authors.
//
// The schema of the slime stack's `with:` options (none; docs/plugins.md "Options").
#ifndef ATTUNE_PLUGINS_STACKS_SLIME_OPTIONS_SCHEMA_H_
#define ATTUNE_PLUGINS_STACKS_SLIME_OPTIONS_SCHEMA_H_

namespace attune::slime {
extern const char kOptionsSchema[];
}  // namespace attune::slime

#endif  // ATTUNE_PLUGINS_STACKS_SLIME_OPTIONS_SCHEMA_H_
