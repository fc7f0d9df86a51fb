// Copyright attune authors.
//
// Launch scripts <-> recipes. ImportLaunch reads what users have (torchrun, python -m
// torch.distributed.run, plain python, slime's `ray job submit -- python3 train.py`, with shell
// variables, arrays, exports and continuations); RenderLaunch builds the argv and environment back
// for the recipe's topology. import(render(r)) == r for every recipe ImportLaunch produces.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_LAUNCH_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_LAUNCH_H_

#include <string>
#include <string_view>
#include <vector>

#include "attune/recipe.h"
#include "attune/stack.h"
#include "attune/status.h"

namespace attune::megatron {

// `unknown` (may be null) receives tokens and constructs that could not be placed in the recipe.
Result<Recipe> ImportLaunchScript(std::string_view script, std::vector<std::string>* unknown);

Result<LaunchSpec> RenderLaunchSpec(const Recipe& recipe);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_LAUNCH_H_
