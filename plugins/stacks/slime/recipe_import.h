// Copyright attune authors.
//
// Import of slime launches. slime's scripts (scripts/run-*.sh) `source scripts/models/*.sh`,
// build arrays (MODEL_ARGS=(...), ROLLOUT_ARGS, PERF_ARGS, ...) and end in
// `ray job submit ... -- python3 train.py "${ARGS[@]}"`. Two ways in:
//  - ImportRecordedCall: the argv and environment of that `ray job submit` (or `python3 train.py`)
//    call as a sandboxed evaluator records it after running the script under bash; this is the
//    interface for the shared evaluator and the one tests drive with argv lists.
//  - ImportSlimeScript: the script text, read statically by the Megatron stack's shell reader
//    (assignments, arrays, ${A[@]}, exports, `ray job submit`); a script that `source`s other
//    files needs the evaluator.
// Both give a Recipe with stack "slime", entry {python3, train.py | train_async.py}, topology from
// --actor-num-nodes x --actor-num-gpus-per-node, and flags split by ownership (SlimeOwnsKey).
#ifndef ATTUNE_PLUGINS_STACKS_SLIME_RECIPE_IMPORT_H_
#define ATTUNE_PLUGINS_STACKS_SLIME_RECIPE_IMPORT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attune/recipe.h"
#include "attune/status.h"

namespace attune::slime {

struct RecordedCall {
  std::vector<std::string> argv;                            // {"ray","job","submit",...,"--","python3","train.py",...}
  std::vector<std::pair<std::string, std::string>> env;     // exported variables at the call
};

Result<Recipe> ImportRecordedCall(const RecordedCall& call, std::vector<std::string>* unknown);
Result<Recipe> ImportSlimeScript(std::string_view script, std::vector<std::string>* unknown);

}  // namespace attune::slime

#endif  // ATTUNE_PLUGINS_STACKS_SLIME_RECIPE_IMPORT_H_
