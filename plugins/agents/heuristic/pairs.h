// Copyright attune authors.
//
// Pairs: how the heuristic gets a memory-hungry win that does not fit. A "hungry" change is
//   (a) a change that ran out of memory (from history, re-based on the leader, and still one of
//       the stack's legal moves from it),
//   (b) a legal move whose predicted peak exceeds the memory limit (scoring.h), or
//   (c) a legal move to a value that ran out of memory from another recipe, whose ban the memory
//       model does not lift (MoveEstimate::oom_banned): also a follow-up's failure, after kept
//       moves took the key elsewhere (EP 8 -> 1 failed after its saver; the leader is at EP 2, and
//       EP 2 -> 1 needs a saver of its own). Sized as a proven overflow, like (a).
// A pair is one feasible memory-saving legal move (the "saver") together with a hungry change,
// when the saver's predicted saving covers the hungry change's overshoot:
//   (a) the OOM proves the peak reached at least the device memory, so the saver must bring it
//       from max(predicted, device memory) to kMemoryLimit of the device memory;
//   (b) from the predicted peak to kMemoryLimit.
// A saving modelled from the model's shape (param_memory.h) is computed on the recipe with the
// hungry change, from that peak: context parallelism divides the activations, which switching
// recomputation off multiplies. A catalog prior is the same share of either peak.
// The pair's expected gain is the saver's own speed plus kPairConfidence × what the hungry change
// gains beyond the best feasible move of its own lever (it was valued as if it fitted; the
// confidence discount is for the memory prior, kModelledPairConfidence when the saver's saving is
// modelled). A saver is a detour: when EP 64 -> 16 fits and EP 64 -> 8 does not, EP 16 is measured
// first, and EP 8 is paired later only if it still promises more from there.
// A pair is proposed as two candidates, one lever each (heuristic_agent.h): the saver alone, then
// the hungry change from the saver's measured candidate (a "follow-up"). This is the one way a
// change that failed comes back: never alone, only after its remedy. Keys of the two must not
// overlap; a saver must save at least kMinSaving. When a follow-up (or, in campaigns recorded
// before follow-ups, a pair proposed as one candidate) runs out of memory, the next saver for that
// change (the same key from the same value to the same value) must save ten points more than that
// one's saver did; after two such failures the hungry change is not paired again.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_PAIRS_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_PAIRS_H_

#include <optional>
#include <string>
#include <vector>

#include "scoring.h"

namespace attune::agents {

inline constexpr double kPairConfidence = 0.8;
// The same confidence when the saver's saving comes from the model's shape (param_memory.h)
// rather than a catalog prior: the saving is then a computation, not a guess.
inline constexpr double kModelledPairConfidence = 0.9;
inline constexpr double kMinSaving = 0.05;  // a saver that saves less is not credible
// PairChoice::source of a hungry change that ran out of memory from another recipe (its value,
// not this change from the leader) and that the model does not predict to need clearly less now.
inline constexpr const char* kOomBeforeSource = "out of memory before";

struct PairChoice {
  const MoveEstimate* saver = nullptr;  // points into the `estimates` passed to BestPair
  Move hungry;                          // changes re-based on the leader
  double hungry_gain = 0;               // valued as if it fitted
  double beyond_gain = 0;               // hungry_gain less the best feasible move of its lever
  double confidence = kPairConfidence;  // kModelledPairConfidence for a modelled saving
  double needed_saving = 0;             // relative memory change the saver must reach (< 0)
  std::string source;                   // the candidate id that ran out of memory, or "predicted"
  double gain = 0;
};

// Follow-ups (the hungry change proposed from a measured saver's candidate) of `hungry` that ran
// out of memory.
int FailedFollowUps(const CampaignView& view, const std::vector<Change>& hungry);

// The best pair, or std::nullopt. `estimates` are the untried legal moves from the leader.
std::optional<PairChoice> BestPair(const ScoringContext& ctx,
                                   const std::vector<MoveEstimate>& estimates);

// kPairConfidence × the best gain among changes that ran out of memory: what a memory-saving
// move alone may let fit (the saver is the only route to that gain).
double UnlockValue(const ScoringContext& ctx);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_PAIRS_H_
