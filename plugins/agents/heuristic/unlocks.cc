// Copyright attune authors.
#include "unlocks.h"

#include "history.h"
#include "pairs.h"

namespace attune::agents {

std::optional<UnlockChoice> BestUnlock(const ScoringContext& ctx,
                                       const std::vector<MoveEstimate>& estimates) {
  const CampaignView& view = *ctx.view;
  const std::optional<double> peak =
      view.leader_measurement ? view.leader_measurement->peak_memory_gib : std::nullopt;
  std::optional<UnlockChoice> best;
  for (const MoveEstimate& e : estimates) {
    if (!e.feasible || e.move->unlocks.empty()) continue;
    std::optional<Recipe> after = Apply(view.leader, e.move->changes);
    if (!after) continue;
    // The recipe after the enabler, read with the leader's measurements: the enabler's own effect
    // is not known before it runs.
    CampaignView sub = view;
    sub.leader = *after;
    sub.legal_moves = e.move->unlocks;
    sub.parents.clear();
    ScoringContext from = MakeScoringContext(sub);
    from.defaults.insert(ctx.defaults.begin(), ctx.defaults.end());
    for (size_t i = 0; i < e.move->unlocks.size(); ++i) {
      const Move& u = e.move->unlocks[i];
      if (AlreadyTried(ctx.tried, *after, u.changes, peak)) continue;
      MoveEstimate ue = EstimateMove(from, u, static_cast<int>(i));
      // A catalog prior alone does not buy the enabler's job: the enabler's own effect is a
      // guess too, and a lever whose value the recipe's shape cannot show is reached anyway
      // once some other reason measures the enabler (a parent's move).
      if (!ue.feasible || !ue.speed_modelled || ue.gain <= 0) continue;
      const double gain = e.gain + kPairConfidence * ue.gain;
      if (best && gain <= best->gain) continue;
      best = UnlockChoice{&e, u, ue.gain, gain};
    }
  }
  return best;
}

}  // namespace attune::agents
