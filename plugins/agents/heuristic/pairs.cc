// Copyright attune authors.
#include "pairs.h"

#include <algorithm>
#include <set>

#include "history.h"
#include "param_memory.h"

namespace attune::agents {
namespace {

struct Hungry {
  Move move;
  double gain = 0;
  double needed = 0;
  std::string source;
  double peak_gib = 0;  // the peak the saver must bring down (NeededSaving's), 0 when unknown
};

bool IsOom(const CandidateRecord& r) {
  return r.failure && r.failure->kind == FailureKind::kOom;
}

// A pair's second half: proposed together with its saver (older campaigns), or after it from the
// saver's candidate (meta.follow_up_of).
bool IsPair(const CandidateRecord& r) {
  if (!r.agent_meta.is_object()) return false;
  if (r.agent_meta.contains("follow_up_of")) return true;
  return r.agent_meta.contains("levers") && r.agent_meta["levers"].is_array() &&
         r.agent_meta["levers"].size() > 1;
}

// True when every change of `part` is in `all` (the same key to the same value), and from the same
// value too when `same_from`: the same change in the same context of its own key (EP 8 -> 1 is
// not EP 2 -> 1: the experts a rank gains differ fourfold).
bool Contains(const std::vector<Change>& all, const std::vector<Change>& part,
              bool same_from = false) {
  for (const Change& p : part) {
    bool found = false;
    for (const Change& c : all) {
      found = found || (c.key == p.key && c.to == p.to && (!same_from || c.from == p.from));
    }
    if (!found) return false;
  }
  return true;
}

// Pairs with this hungry change that already ran out of memory: how many, and the largest saving
// (most negative relative change) their savers brought.
struct FailedPairs {
  int count = 0;
  double best_saving = 0;
};

FailedPairs FailedPairsFor(const CampaignView& v, const std::vector<Change>& hungry) {
  FailedPairs f;
  for (const CandidateRecord& r : v.history) {
    if (!IsOom(r) || !IsPair(r) || !Contains(r.changes, hungry, /*same_from=*/true)) continue;
    ++f.count;
    double saved = r.agent_meta.value("saver_memory", 0.0);
    f.best_saving = std::min(f.best_saving, saved);
  }
  return f;
}

// Tightens what a saver must bring once pairs with the same hungry change ran out of memory:
// ten points more than the best saver that failed; none after two failures.
std::optional<double> AfterFailedPairs(const CampaignView& v, const Hungry& h) {
  FailedPairs f = FailedPairsFor(v, h.move.changes);
  if (f.count == 0) return h.needed;
  if (f.count >= 2) return std::nullopt;
  return std::min(h.needed, f.best_saving - 0.1);
}

bool KeysDisjoint(const std::vector<Change>& a, const std::vector<Change>& b) {
  for (const Change& x : a) {
    for (const Change& y : b) {
      if (x.key == y.key) return false;
    }
  }
  return true;
}

// The OOMed changes re-based on the leader; empty when the leader already moved one of those
// keys elsewhere (that value's return is PredictedHungry's, as a move the ban holds back).
std::vector<Change> Rebase(const Recipe& leader, const std::vector<Change>& changes) {
  std::vector<Change> out;
  for (const Change& c : changes) {
    std::optional<std::string> now = GetValue(leader, c.key);
    if (now != c.from) return {};
    out.push_back({c.key, now, c.to});
  }
  return out;
}

// The peak a saver must bring down for `e` to fit: its predicted peak, or at least the device
// memory once it ran out of it; 0 when unknown.
double HungryPeak(const CampaignView& v, const MoveEstimate& e, bool proven_oom) {
  double capacity = v.cluster.device_memory_gib;
  if (capacity <= 0 || !e.predicted_peak_gib) return 0;
  return proven_oom ? std::max(*e.predicted_peak_gib, capacity) : *e.predicted_peak_gib;
}

double NeededSaving(const CampaignView& v, const MoveEstimate& e, bool proven_oom) {
  double peak = HungryPeak(v, e, proven_oom);
  if (peak <= 0) return -0.1;
  return kMemoryLimit * v.cluster.device_memory_gib / peak - 1;
}

// The stack's legal move from the leader of `lever_id` that makes `changes` (with any companion
// changes of its own), or nullptr: a change that ran out of memory elsewhere may not be allowed
// from the leader (it has since set a key that excludes it, as one virtual-pipeline flag excludes
// the other), and a saver is worth nothing for a change that cannot follow it.
const Move* LegalMoveFor(const CampaignView& v, const std::string& lever_id, const std::vector<Change>& changes) {
  const Move* best = nullptr;
  for (const Move& m : v.legal_moves) {
    if (m.lever_id != lever_id || !Contains(m.changes, changes)) continue;
    if (!best || m.changes.size() < best->changes.size()) best = &m;
  }
  return best;
}

std::vector<Hungry> OomHungry(const ScoringContext& relaxed) {
  std::vector<Hungry> out;
  std::set<std::string> seen;
  const CampaignView& v = *relaxed.view;
  for (auto r = v.history.rbegin(); r != v.history.rend(); ++r) {
    if (!IsOom(*r) || IsPair(*r) || relaxed.levers.count(r->lever_id) == 0) continue;
    if (!seen.insert(DescribeChanges(r->changes)).second) continue;
    const std::vector<Change> rebased = Rebase(v.leader, r->changes);
    if (rebased.empty()) continue;
    const Move* legal = LegalMoveFor(v, r->lever_id, rebased);
    if (!legal) continue;
    Hungry h{*legal, 0, 0, r->candidate_id};
    MoveEstimate e = EstimateMove(relaxed, h.move, 0);
    h.gain = e.gain;
    h.needed = NeededSaving(v, e, true);
    h.peak_gib = HungryPeak(v, e, true);
    out.push_back(std::move(h));
  }
  return out;
}

// `relaxed`: ctx without the out-of-memory floors of numeric keys.
std::vector<Hungry> PredictedHungry(const ScoringContext& ctx, const ScoringContext& relaxed,
                                    const std::vector<MoveEstimate>& estimates) {
  std::vector<Hungry> out;
  for (const MoveEstimate& e : estimates) {
    // A change whose value ran out of memory from another recipe comes back after a saver, from a
    // proven overflow, valued and sized without the floor its own failure set (oom_banned is only
    // set where the out-of-memory ban is the one ban it touches).
    if (e.oom_banned) {
      MoveEstimate r = EstimateMove(relaxed, *e.move, e.order);
      if (r.memory <= 0 || !r.predicted_peak_gib || r.gain <= 0) continue;
      out.push_back({*e.move, r.gain, NeededSaving(*ctx.view, r, true), kOomBeforeSource,
                     HungryPeak(*ctx.view, r, true)});
      continue;
    }
    if (e.feasible || e.memory <= 0 || !e.predicted_peak_gib || e.gain <= 0) continue;
    if (TouchesBanned(ctx.tried, e.move->changes)) continue;
    // Only moves the memory prediction ruled out; a value at or above an OOM stays out.
    if (e.note.find("ran out of memory") != std::string::npos) continue;
    out.push_back({*e.move, e.gain, NeededSaving(*ctx.view, e, false), "predicted",
                   HungryPeak(*ctx.view, e, false)});
  }
  return out;
}

}  // namespace

int FailedFollowUps(const CampaignView& view, const std::vector<Change>& hungry) {
  return FailedPairsFor(view, hungry).count;
}

namespace {

// The best gain among the feasible moves of `lever_id` in `estimates` (0 when none).
double BestFeasibleGain(const std::vector<MoveEstimate>& estimates, const std::string& lever_id) {
  double best = 0;
  for (const MoveEstimate& e : estimates) {
    if (e.feasible && e.move->lever_id == lever_id) best = std::max(best, e.gain);
  }
  return best;
}

}  // namespace

// What the saver saves of the hungry change's peak, relative to it. A saving modelled from the
// model's shape (param_memory.h) is computed again on the recipe with the hungry change: context
// parallelism divides the activations, and with recomputation switched off those are several
// times what they were, so CP 2 that saves 6% of a parameter-bound peak can save a third of the
// peak it has to bring down. A catalog prior is the same share of either.
double SavingAfter(const MoveEstimate& saver, const std::optional<Recipe>& hungry_recipe, double hungry_peak_gib) {
  if (!saver.memory_modelled || !hungry_recipe || hungry_peak_gib <= 0) return saver.memory;
  std::optional<double> on_hungry =
      ParallelMemoryChange(*hungry_recipe, saver.move->changes, saver.move->defaults, hungry_peak_gib);
  return on_hungry ? *on_hungry : saver.memory;
}

std::optional<PairChoice> BestPair(const ScoringContext& ctx,
                                   const std::vector<MoveEstimate>& estimates) {
  ScoringContext relaxed = ctx;
  relaxed.oom_at.clear();  // because a pair exists to lift exactly that limit
  std::vector<Hungry> hungry = OomHungry(relaxed);
  std::vector<Hungry> predicted = PredictedHungry(ctx, relaxed, estimates);
  hungry.insert(hungry.end(), predicted.begin(), predicted.end());
  std::optional<PairChoice> best;
  for (const Hungry& h : hungry) {
    std::optional<double> needed = AfterFailedPairs(*ctx.view, h);
    if (!needed) continue;
    std::optional<Recipe> hungry_recipe = Apply(ctx.view->leader, h.move.changes);
    for (const MoveEstimate& s : estimates) {
      if (!s.feasible || s.memory > -kMinSaving) continue;
      if (!KeysDisjoint(s.move->changes, h.move.changes)) continue;
      if (SavingAfter(s, hungry_recipe, h.peak_gib) > *needed) continue;
      std::vector<Change> both = s.move->changes;
      both.insert(both.end(), h.move.changes.begin(), h.move.changes.end());
      std::optional<Recipe> recipe = Apply(ctx.view->leader, both);
      if (!recipe || ctx.tried.recipe_ids.count(RecipeId(*recipe)) > 0) continue;
      // A saver is a detour: it is worth only what the hungry change gains beyond the best move
      // its own lever can make without one (EP 64 -> 16 that fits before EP 64 -> 4 that does
      // not); that move, once measured, leaves the rest to a later pair.
      double beyond = h.gain - BestFeasibleGain(estimates, h.move.lever_id);
      double confidence = s.memory_modelled ? kModelledPairConfidence : kPairConfidence;
      double gain = s.speed + confidence * beyond;
      if (best && gain <= best->gain) continue;
      best = PairChoice{&s, h.move, h.gain, beyond, confidence, *needed, h.source, gain};
    }
  }
  return best;
}

double UnlockValue(const ScoringContext& ctx) {
  ScoringContext relaxed = ctx;
  relaxed.oom_at.clear();
  double best = 0;
  for (const Hungry& h : OomHungry(relaxed)) best = std::max(best, h.gain);
  return kPairConfidence * best;
}

}  // namespace attune::agents
