// Copyright attune authors.
//
// Importing AutoModel launches as users write them, and rendering them back.
//
// Accepted forms (one command per script; exported variables and `VAR=x cmd` become env):
//   automodel cfg.yaml --nproc-per-node 8 [--nnodes 2] [--a.b v | --a.b=v | --flag]...
//   am finetune llm -c cfg.yaml ...                    (subcommand words kept in the entry)
//   torchrun --nproc-per-node 8 [--nnodes 2] script.py --config cfg.yaml [--a.b v]...
//   python -m torch.distributed.run ... / python script.py --config cfg.yaml ...
// The config file is read (relative to `base_dir`) into Recipe::config; dotted overrides become
// Recipe::args. Tokens that fit nowhere are returned in `unknown`, never dropped silently.
#ifndef ATTUNE_PLUGINS_STACKS_AUTOMODEL_RECIPE_IMPORT_H_
#define ATTUNE_PLUGINS_STACKS_AUTOMODEL_RECIPE_IMPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe.h"
#include "attune/stack.h"
#include "attune/status.h"

namespace attune::automodel {

Result<Recipe> ImportLaunchScript(std::string_view script, const std::string& base_dir,
                                  std::vector<std::string>* unknown);

LaunchSpec RenderRecipe(const Recipe& recipe);

}  // namespace attune::automodel

#endif  // ATTUNE_PLUGINS_STACKS_AUTOMODEL_RECIPE_IMPORT_H_
