// Copyright attune authors.
//
// slime's own rules, composed with the Megatron stack's: which keys slime owns (decided by
// stacks/slime/*.yaml; every other key is a Megatron flag decided by stacks/megatron/*.yaml), the
// split objective gate, and slime's combination rules (shared reference §6.1-§6.3).
#ifndef ATTUNE_PLUGINS_STACKS_SLIME_RULES_H_
#define ATTUNE_PLUGINS_STACKS_SLIME_RULES_H_

#include <string>
#include <vector>

#include "attune/recipe.h"
#include "attune/stack.h"
#include "knowledge.h"

namespace attune::slime {

// True for keys in slime's levers/objective/neutral/conditional lists and for slime's flag
// families (--sglang-*, --rollout-*, --update-weight*, --offload*), so an unknown slime flag fails
// closed in slime's gate rather than reaching Megatron's.
bool SlimeOwnsKey(const megatron::Knowledge& slime, const std::string& key);

// The gate: the changes to keys slime owns are checked against slime's rules, the others against
// the Megatron stack's (`megatron_gate`), each on the baseline with only its own changes applied.
// Refused when either refuses; the pass carries the larger loss tolerance.
GateVerdict CheckSlimeObjective(const megatron::Knowledge& slime, const Stack& megatron_gate,
                                const Recipe& baseline, const Recipe& candidate);

struct SlimeViolation {
  std::string rule;     // "slime.colocate_async"
  std::string message;  // values and the fix
};

// slime's combination rules (the Megatron ones are checked by the Megatron stack).
std::vector<SlimeViolation> SlimeViolations(const Recipe& recipe);

// The Megatron arguments as slime hands them to Megatron: its own default micro-batch size of 1
// (slime/utils/arguments.py resets Megatron's), the distributed optimizer always on
// (_set_default_megatron_args) and alltoall in place of the allgather dispatcher, absent or given
// (validate_args), before Megatron checks them.
Recipe WithSlimeForcedArgs(Recipe recipe);

// One rule per line, for `attune stack show slime`.
std::vector<std::pair<std::string, std::string>> SlimeConstraintCatalog();

}  // namespace attune::slime

#endif  // ATTUNE_PLUGINS_STACKS_SLIME_RULES_H_
