// Copyright attune authors.
//
// How the heuristic values one legal move. Every number is a relative change (+0.08 = 8%).
//
// Direction. A lever's catalog priors (expected_speed, expected_memory) describe its FORWARD use:
// setting a key that was absent (or none/auto/false/0), increasing a numeric value, or moving up a
// known order (recompute: none < selective < full; CUDA graphs: none < local < transformer_engine).
// The opposite is REVERSE: its speed prior is negated and its memory factor inverted (a forward
// factor 1+m per step becomes 1/(1+m)). A categorical move between
// two other values counts as forward at 0.7 strength.
// Addresses. A forward move addresses the lever's non-memory diagnosis kinds; a reverse move none
// of them. The memory kinds follow the move's own memory sign (catalogs list both directions):
// using memory (with a speed gain) addresses memory_headroom; saving it addresses memory_pressure
// and oom.
//
// Reliefs. Some costs of a LARGER value of a key are readings of their own (reading.h): a smaller
// --expert-model-parallel-size addresses moe_imbalance and moe_dispatch, a smaller
// --expert-tensor-parallel-size moe_dispatch, and any --moe-token-dispatcher-type change
// moe_dispatch, whatever the lever's direction. A smaller EP is also worth, at least, the
// imbalance it relieves: kMoeTimeShare x (busiest load before / busiest load after - 1), the
// expert layers waiting on the busiest rank (MoeBusiestExcess).
//
// Size. A numeric move of `steps` = |log2(to/from)| doublings gains with diminishing returns,
// speed × (1 + 0.35·(steps−1)); memory it uses grows with the value, memory × (2^steps − 1), and
// memory it saves compounds, (1+memory)^steps − 1.
//
// Expected gain = speed × relevance × history × risk, where
//   relevance  0.5 + the highest severity among the diagnoses the move addresses (max 1.5);
//   history    ×0.35 per slower / ×0.5 per within-noise result of the same lever and direction
//              from the current leader (×0.7 / ×0.85 from an older leader), ×1.1 after a new
//              leader made by the same lever and direction (momentum);
//   risk       ×0.85 for a memory-hungry move when peak memory is unknown, ×0.8 when its
//              predicted peak is above 75% of device memory.
// Lessons of past campaigns replace the speed prior of a forward move by the mean of the prior and
// the observed effects (the prior counts as one observation, at most three lessons count). Then
// what this campaign measured for the same lever and direction (speedup over its base, per step)
// is averaged in the same way. The memory prior too is averaged with each measured memory change
// of the lever (peak over its base's peak, per step), a reverse measurement read as the inverse of
// a forward one. A move of pipeline, expert or expert-tensor parallelism on a recipe whose model
// shape is known takes its memory change from param_memory.h instead (memory_modelled): the
// parameter state it re-shards, relative to the leader's measured peak.
// Amortizing sizes. A numeric lever that spends memory (a positive memory prior) against both
// memory_headroom and launch_overhead spreads a fixed per-step cost over more work per step (the
// micro-batch sizes). Once this campaign measured a forward move of it, from u to u' with ratio
// R, a step is read as costing a + c·b for size b, so k = a/c = u'(R − 1)/(u'/u − R), and a
// forward move from v to w is worth (w/v)·(k + v)/(k + w) − 1: the returns of the next doubling
// diminish as the fixed share shrinks, by as much as the measurement says, instead of the catalog's
// prior averaged in (a +59% doubling predicts +42% for the next one, not the prior's +10%). Such a
// speed is modelled, blended with measurements of the same change, and its relevance is 1.
// A move is infeasible (never proposed) when it uses memory and its predicted peak exceeds
// kMemoryLimit of device memory (a move that uses none is not: the leader ran at that peak), or it
// moves a numeric key forward to a value at or above one that already ran out of memory (a move
// from an absent key read from what the stack says absence means, Move::defaults), or with
// PP>1 when a larger micro-batch would grow the pipeline bubble more than it gains.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_SCORING_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_SCORING_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attune/agent.h"
#include "history.h"
#include "lessons.h"

namespace attune::agents {

inline constexpr double kMemoryLimit = 0.92;  // of device memory, for a predicted peak

struct ScoringContext {
  const CampaignView* view = nullptr;
  std::map<std::string, const Lever*> levers;        // by id
  std::vector<Diagnosis> diagnoses;                  // ReadDiagnoses(view)
  std::map<std::string, LessonPrior> lessons;        // ParseLessons(view.lessons)
  TriedSet tried;                                    // CollectTried(view)
  std::map<std::string, double> oom_at;              // numeric key -> lowest value that OOMed
  // What absent keys mean (Move::defaults of the leader's and the parents' moves), for reading the
  // direction of past changes from "absent".
  std::map<std::string, std::string> defaults;
};

ScoringContext MakeScoringContext(const CampaignView& view);

struct MoveEstimate {
  const Move* move = nullptr;
  int order = 0;           // index in legal_moves (ties go to the earlier move)
  int direction = 1;       // +1 forward, -1 reverse
  double steps = 1;
  double speed = 0;        // expected relative speed change
  double memory = 0;       // expected relative memory change
  std::vector<std::string> addresses;
  std::string matched;     // the diagnosis kind that gave the relevance ("" when none)
  double relevance = 0.5;
  double history = 1;
  double risk = 1;
  double gain = 0;
  double unlock_bonus = 0; // part of gain: what an out-of-memory change could gain (pairs.h)
  bool memory_modelled = false;  // `memory` from the model's shape (param_memory.h), not a prior
  // `speed` from the recipe's shape (pipeline, overlaps, expert TP, imbalance relief), not only
  // the catalog's prior.
  bool speed_modelled = false;
  // `speed` extrapolated from this campaign's measurement of the same lever (an amortizing size);
  // its relevance is then 1.
  bool speed_measured = false;
  std::optional<double> predicted_peak_gib;
  // A measured move of the same lever, in the same direction and at least as far, from the same
  // recipe: its effect bounds this move's gain.
  std::string capped_by;
  bool feasible = true;
  // Its change ran out of memory before, that is the only ban it touches, and the model does not
  // predict clearly less now (history.h): never proposed alone, only after a saver (pairs.h).
  // Not feasible.
  bool oom_banned = false;
  std::string note;        // why infeasible, or what the history did
};

MoveEstimate EstimateMove(const ScoringContext& ctx, const Move& move, int order);

// The measured effect of a past candidate relative to its base (+0.1 = 10% faster), when both
// speedups are known.
std::optional<double> MeasuredEffect(const CampaignView& view, const CandidateRecord& r);

// The direction and size of a move's main change (the first change on one of the lever's keys).
struct MoveShape {
  int direction = 1;
  double steps = 1;
  double strength = 1;     // 0.7 for categorical moves
};
// `defaults`: what an absent key means (Move::defaults), when known.
MoveShape ShapeOf(const std::vector<Change>& changes, const Lever* lever,
                  const std::map<std::string, std::string>* defaults = nullptr);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_SCORING_H_
