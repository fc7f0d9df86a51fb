// Copyright attune authors.
//
// The static half of the correctness gate, outside every agent: may a candidate recipe be
// compared with the baseline as the same training objective? Runs before any budget is reserved.
#ifndef ATTUNE_ENGINE_GATE_STATIC_GATE_H_
#define ATTUNE_ENGINE_GATE_STATIC_GATE_H_

#include <string>
#include <vector>

#include "attune/recipe.h"
#include "attune/stack.h"
#include "attune/status.h"

namespace attune {

// The stack's objective rules plus the engine's own (entry point and stack must not change; the
// candidate must validate for the cluster). Fails closed. The verdict names the deciding rule.
GateVerdict StaticGateCheck(const Stack& stack, const Recipe& baseline, const Recipe& candidate,
                            const ClusterInfo& cluster);

// What the gate needs to know about a proposed candidate beyond its recipe: where it came from and
// what was proposed before. Plain data, so that the gate depends on no campaign state.
struct CandidateGateInput {
  std::string base_id;                // the recipe the changes were applied to ("baseline" or cNNN)
  const Recipe* base = nullptr;       // that recipe (nullptr when unknown)
  const Recipe* candidate = nullptr;  // the result; nullptr when the changes did not apply
  std::string apply_error;            // why they did not apply
  struct Earlier {
    std::string id;         // candidate id
    std::string recipe_id;  // RecipeId of its recipe
    std::string outcome;    // its outcome's name, for the reason
  };
  std::vector<Earlier> earlier;  // the campaign's other candidates that have a recipe
};

// The whole static verdict on a proposed candidate, the only place one is decided: the engine's
// campaign rules (engine.changes_do_not_apply, engine.no_change, engine.duplicate — of the baseline
// or of an earlier candidate), then StaticGateCheck. Fails closed.
GateVerdict CandidateGateCheck(const Stack& stack, const Recipe& baseline, const ClusterInfo& cluster,
                               const CandidateGateInput& in);

// A stack's benchmark form of `recipe` (Stack::BenchmarkForm) may change neither the stack, the
// entry point, the topology (the job's reservation) nor the objective (the stack's own rules judge
// `run` against `recipe`). FailedPrecondition naming the plugin's change otherwise.
Status CheckBenchmarkForm(const Stack& stack, const Recipe& recipe, const Recipe& run);

}  // namespace attune

#endif  // ATTUNE_ENGINE_GATE_STATIC_GATE_H_
