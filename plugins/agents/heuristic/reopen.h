// Copyright attune authors.
//
// Re-opening a lost lever. A "slower" verdict on a lever was taken in its base recipe, under the
// values the base had for every other setting. When a kept move (a new leader) had changed a
// setting the lever interacts with, the verdict says nothing about the lever under that setting's
// earlier value, and no measurement covers that combination: a lever judged lost once would
// otherwise stay lost for the rest of the campaign, whatever the context it lost in (the MoE
// alltoall dispatcher loses when EP 8 makes it cross nodes, and wins at EP 4).
//
// Two levers interact when they address a common diagnosis kind other than the memory kinds (EP
// and the token dispatcher both address communication). A re-opening is
//   lost     a measured "slower" candidate of lever R whose change the leader does not have;
//   enabler  a feasible legal move from the leader, on a lever S that interacts with R, that takes
//            one of S's keys from the value it had where R lost (the leader's value) back to the
//            value one of the leader's ancestors had (the baseline included): the context before
//            the kept move that introduced the one R lost in, measured, not an invented one;
// when R's change was never measured from a base holding that value, and the recipe of the
// enabler followed by R's change is untried. Not re-opened: a lost change that takes R back to a
// value one of the leader's ancestors had (it undid a kept move: the loss says the move still
// wins), and a lost candidate that a proposal already re-opened (each loss costs at most one
// enabler and one retry, however many settings interact with it).
// It is proposed like a pair (pairs.h), one lever per candidate: the enabler alone, with meta.then
// naming R's change, then R's change from the enabler's candidate (a follow-up). Its value is the
// enabler's own expected gain plus kPairConfidence × the re-opened gain, where the re-opened gain
// is kReopenShare × the larger of R's catalog speed prior and the size of its measured loss: a
// lever that lost by far more than its prior is one this workload is very sensitive to, and in
// the other context the catalog's sign of that effect is the best guess. A small loss re-opens
// little, so cheap verdicts are not re-tried at the cost of reverting a winner.
//
// Pure functions of the scoring context; deterministic. Thread-compatible.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_REOPEN_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_REOPEN_H_

#include <optional>
#include <string>
#include <vector>

#include "scoring.h"

namespace attune::agents {

inline constexpr double kReopenShare = 0.5;

struct ReopenChoice {
  const MoveEstimate* enabler = nullptr;  // points into the `estimates` passed to BestReopen
  Move lost;                              // R's change, re-based on the leader
  std::string lost_id;                    // the candidate that lost
  double lost_effect = 0;                 // its measured effect over its base (< 0)
  double reopened_gain = 0;               // kReopenShare × max(prior, |lost_effect|)
  double gain = 0;                        // enabler gain + kPairConfidence × reopened_gain
};

// True when levers `a` and `b` address a common diagnosis kind other than the memory kinds.
bool Interact(const Lever& a, const Lever& b);

// The most valuable re-opening, or std::nullopt. `estimates` are the untried legal moves from
// the leader.
std::optional<ReopenChoice> BestReopen(const ScoringContext& ctx,
                                       const std::vector<MoveEstimate>& estimates);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_REOPEN_H_
