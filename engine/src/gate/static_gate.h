// Copyright attune authors.
//
// The static half of the correctness gate, outside every agent: may a candidate recipe be
// compared with the baseline as the same training objective? Runs before any budget is reserved.
#ifndef ATTUNE_ENGINE_GATE_STATIC_GATE_H_
#define ATTUNE_ENGINE_GATE_STATIC_GATE_H_

#include "attune/recipe.h"
#include "attune/stack.h"
#include "attune/status.h"

namespace attune {

// The stack's objective rules plus the engine's own (entry point and stack must not change; the
// candidate must validate for the cluster). Fails closed. The verdict names the deciding rule.
GateVerdict StaticGateCheck(const Stack& stack, const Recipe& baseline, const Recipe& candidate,
                            const ClusterInfo& cluster);

// A stack's benchmark form of `recipe` (Stack::BenchmarkForm) may change neither the stack, the
// entry point, the topology (the job's reservation) nor the objective (the stack's own rules judge
// `run` against `recipe`). FailedPrecondition naming the plugin's change otherwise.
Status CheckBenchmarkForm(const Stack& stack, const Recipe& recipe, const Recipe& run);

}  // namespace attune

#endif  // ATTUNE_ENGINE_GATE_STATIC_GATE_H_
