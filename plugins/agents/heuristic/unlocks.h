// Copyright attune authors.
//
// Enablers. Some levers are offered only once another setting meets their prerequisite: Megatron
// runs the expert-parallel overlap only under the alltoall or flex dispatcher and, with PP > 1, a
// virtual pipeline. Valued alone, the move that meets the prerequisite (a dispatcher switch that
// is slower on its own, a virtual pipeline within noise) is rarely worth a job, so the lever it
// opens would never be reached. The engine lists, for each of the leader's legal moves, the moves
// of other levers it makes legal (Move::unlocks). An enabling is
//   enabler   a feasible untried legal move from the leader with unlocks;
//   unlocked  its most valuable unlocked move, valued from the recipe after the enabler with the
//             leader's measurements (EstimateMove on that recipe), feasible, untried, worth more
//             than nothing, and valued from the recipe's shape (MoveEstimate::speed_modelled: the
//             EP overlap by the all-to-all it hides), not by the catalog's prior alone. Both
//             halves being guesses, a prior-only lever would buy two jobs on a hunch: on the
//             slime stand-in the first --max-tokens-per-gpu value "enabled" dynamic batching at
//             2,048 tokens, which was 15% slower, and the two candidates crowded out a larger
//             micro-batch worth 19%;
// and is proposed like a pair (pairs.h), one lever per candidate: the enabler alone, with
// meta.then naming the unlocked change, then that change from the enabler's candidate (a
// follow-up). Its value is the enabler's own expected gain plus kPairConfidence × the unlocked
// move's. One level deep: a lever behind two prerequisites is reached when the first is kept.
//
// Pure functions of the scoring context; deterministic. Thread-compatible.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_UNLOCKS_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_UNLOCKS_H_

#include <optional>
#include <vector>

#include "scoring.h"

namespace attune::agents {

struct UnlockChoice {
  const MoveEstimate* enabler = nullptr;  // points into the `estimates` passed to BestUnlock
  Move unlocked;                          // relative to the recipe after the enabler
  double unlocked_gain = 0;               // its expected gain from there
  double gain = 0;                        // enabler gain + kPairConfidence × unlocked_gain
};

// The most valuable enabling, or std::nullopt. `estimates` are the untried legal moves from the
// leader.
std::optional<UnlockChoice> BestUnlock(const ScoringContext& ctx,
                                       const std::vector<MoveEstimate>& estimates);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_UNLOCKS_H_
