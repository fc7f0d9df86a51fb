// Copyright attune authors.
#include "reopen.h"

#include <algorithm>

#include "history.h"
#include "pairs.h"

namespace attune::agents {
namespace {

bool IsMemoryKind(const std::string& kind) {
  return kind == "memory_headroom" || kind == "memory_pressure" || kind == "oom";
}

bool IsMeasured(const CandidateRecord& r) {
  return r.outcome == Outcome::kSlower || r.outcome == Outcome::kWithinNoise ||
         r.outcome == Outcome::kNewLeader;
}

const Recipe* RecipeOf(const ScoringContext& ctx, const std::string& id) {
  auto it = ctx.tried.recipes_by_candidate.find(id);
  if (it != ctx.tried.recipes_by_candidate.end()) return &it->second;
  return id == ctx.view->leader_id ? &ctx.view->leader : nullptr;
}

// True when one of the leader's ancestors (the candidates its base_id links lead through, down to
// the baseline) has `key` = `value`: a kept move took the key away from that value.
bool AncestorHas(const ScoringContext& ctx, const std::string& key,
                 const std::optional<std::string>& value) {
  const std::vector<CandidateRecord>& history = ctx.view->history;
  std::string id = ctx.view->leader_id;
  for (size_t hops = 0; id != "baseline" && hops <= history.size(); ++hops) {
    auto it = std::find_if(history.begin(), history.end(),
                           [&](const CandidateRecord& r) { return r.candidate_id == id; });
    if (it == history.end()) return false;
    id = it->base_id;
    const Recipe* recipe = RecipeOf(ctx, id);
    if (recipe != nullptr && GetValue(*recipe, key) == value) return true;
  }
  return false;
}

bool HasChanges(const std::vector<Change>& all, const std::vector<Change>& part) {
  return std::all_of(part.begin(), part.end(), [&](const Change& p) {
    return std::any_of(all.begin(), all.end(),
                       [&](const Change& c) { return c.key == p.key && c.to == p.to; });
  });
}

// True when `lost` (lever `lever_id`) was measured from a base holding `key` = `value`.
bool MeasuredUnder(const ScoringContext& ctx, const std::string& lever_id,
                   const std::vector<Change>& lost, const std::string& key,
                   const std::optional<std::string>& value) {
  for (const CandidateRecord& r : ctx.view->history) {
    if (r.lever_id != lever_id || !IsMeasured(r) || !HasChanges(r.changes, lost)) continue;
    const Recipe* base = RecipeOf(ctx, r.base_id);
    if (base != nullptr && GetValue(*base, key) == value) return true;
  }
  return false;
}

// The lost candidate's changes re-based on the leader; empty when the leader already has them.
std::vector<Change> RebaseLost(const Recipe& leader, const std::vector<Change>& changes) {
  std::vector<Change> out;
  bool differs = false;
  for (const Change& c : changes) {
    std::optional<std::string> now = GetValue(leader, c.key);
    differs = differs || now != c.to;
    out.push_back({c.key, now, c.to});
  }
  return differs ? out : std::vector<Change>{};
}

// Whether `enabler` takes one of its lever's keys from the value the lost candidate's base had
// (the leader's value too) back to a value one of the leader's ancestors had, under which `lost`
// was never measured.
bool Reopens(const ScoringContext& ctx, const Lever& lever, const MoveEstimate& enabler,
             const Recipe& lost_base, const std::string& lost_lever,
             const std::vector<Change>& lost) {
  for (const Change& c : enabler.move->changes) {
    if (std::find(lever.keys.begin(), lever.keys.end(), c.key) == lever.keys.end()) continue;
    std::optional<std::string> now = GetValue(ctx.view->leader, c.key);
    if (GetValue(lost_base, c.key) != now || c.to == now) continue;
    if (!AncestorHas(ctx, c.key, c.to)) continue;
    if (!MeasuredUnder(ctx, lost_lever, lost, c.key, c.to)) return true;
  }
  return false;
}

// True when every lost change takes its key back to a value one of the leader's ancestors had:
// the loss undid a kept move, and says that move still wins, not that the context changed.
bool UndoesKeptMove(const ScoringContext& ctx, const std::vector<Change>& lost) {
  return std::all_of(lost.begin(), lost.end(),
                     [&](const Change& c) { return AncestorHas(ctx, c.key, c.to); });
}

// True when a proposal already re-opened candidate `lost_id`: each loss is re-opened once, so a
// loss costs at most one enabler and one retry whichever settings interact with it.
bool AlreadyReopened(const ScoringContext& ctx, const std::string& lost_id) {
  return std::any_of(
      ctx.view->history.begin(), ctx.view->history.end(), [&](const CandidateRecord& r) {
        return r.agent_meta.is_object() && r.agent_meta.value("reopens", "") == lost_id;
      });
}

// The best re-opening of one lost candidate, or std::nullopt.
std::optional<ReopenChoice> ReopenOf(const ScoringContext& ctx, const CandidateRecord& r,
                                     const std::vector<MoveEstimate>& estimates) {
  auto lost_lever = ctx.levers.find(r.lever_id);
  const Recipe* base = RecipeOf(ctx, r.base_id);
  std::optional<double> effect = MeasuredEffect(*ctx.view, r);
  if (lost_lever == ctx.levers.end() || base == nullptr || !effect || *effect >= 0) {
    return std::nullopt;
  }
  const double prior = lost_lever->second->expected_speed;
  if (prior <= 0) return std::nullopt;  // because the catalog expects it to help nowhere
  std::vector<Change> lost = RebaseLost(ctx.view->leader, r.changes);
  if (lost.empty() || TouchesBanned(ctx.tried, lost) || UndoesKeptMove(ctx, lost) ||
      AlreadyReopened(ctx, r.candidate_id)) {
    return std::nullopt;
  }
  std::optional<ReopenChoice> best;
  for (const MoveEstimate& e : estimates) {
    auto lever = ctx.levers.find(e.move->lever_id);
    if (!e.feasible || lever == ctx.levers.end() || lever->first == r.lever_id) continue;
    if (!Interact(*lever->second, *lost_lever->second)) continue;
    if (!Reopens(ctx, *lever->second, e, *base, r.lever_id, lost)) continue;
    std::optional<Recipe> step = Apply(ctx.view->leader, e.move->changes);
    std::optional<Recipe> both = step ? Apply(*step, lost) : std::nullopt;
    if (!both || ctx.tried.recipe_ids.count(RecipeId(*both)) > 0) continue;
    ReopenChoice c{&e, Move{r.lever_id, lost, "", {}, {}}, r.candidate_id, *effect, 0, 0};
    c.reopened_gain = kReopenShare * std::max(prior, -*effect);
    c.gain = e.gain + kPairConfidence * c.reopened_gain;
    if (!best || c.gain > best->gain) best = std::move(c);
  }
  return best;
}

}  // namespace

bool Interact(const Lever& a, const Lever& b) {
  for (const std::string& kind : a.addresses) {
    if (IsMemoryKind(kind)) continue;
    if (std::find(b.addresses.begin(), b.addresses.end(), kind) != b.addresses.end()) return true;
  }
  return false;
}

std::optional<ReopenChoice> BestReopen(const ScoringContext& ctx,
                                       const std::vector<MoveEstimate>& estimates) {
  std::optional<ReopenChoice> best;
  for (const CandidateRecord& r : ctx.view->history) {
    if (r.outcome != Outcome::kSlower) continue;
    std::optional<ReopenChoice> c = ReopenOf(ctx, r, estimates);
    if (c && (!best || c->gain > best->gain)) best = std::move(c);
  }
  return best;
}

}  // namespace attune::agents
