// Copyright attune authors.
//
// The values Megatron-LM's argument parser reads as numbers (arguments.py, `type=int` /
// `type=float`, Python's own syntax), checked before any GPU time is spent.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_VALUE_TYPES_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_VALUE_TYPES_H_

#include <optional>
#include <string>

#include "attune/recipe.h"

namespace attune::megatron {

// The first flag whose value Megatron would refuse as a number, said with its value and the fix;
// std::nullopt when every numeric flag reads as one.
std::optional<std::string> MalformedValue(const Recipe& recipe);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_VALUE_TYPES_H_
