// Copyright attune authors.
#include "random_agent.h"

#include <vector>

#include "attune/support/json_schema.h"
#include "history.h"
#include "options_schema.h"

namespace attune::agents {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Result<Proposal> RandomAgent::Propose(const CampaignView& view) {
  Proposal p;
  if (view.job_cost_estimate_gpu_hours > 0 &&
      view.budget_left_gpu_hours < view.job_cost_estimate_gpu_hours) {
    p.done = true;
    p.rationale = "budget left is below one job's cost estimate";
    return p;
  }
  TriedSet tried = CollectTried(view);
  std::vector<const Move*> open;
  for (const Move& m : view.legal_moves) {
    if (!AlreadyTried(tried, view.leader, m.changes)) open.push_back(&m);
  }
  if (open.empty()) {
    p.done = true;
    p.rationale = "every legal move from the leader has been tried";
    return p;
  }
  // The modulo bias is below 1e-17 for any realistic number of moves.
  uint64_t pick = SplitMix64(view.seed) % open.size();
  const Move& m = *open[pick];
  p.changes = m.changes;
  p.lever_id = m.lever_id;
  p.rationale = "random pick " + std::to_string(pick + 1) + " of " +
                std::to_string(open.size()) + " untried legal moves: " + m.lever_id + " [" +
                (m.summary.empty() ? DescribeChanges(m.changes) : m.summary) + "]";
  p.meta = {{"seed", view.seed}, {"open_moves", open.size()}};
  return p;
}

Result<std::unique_ptr<Plugin>> CreateRandomAgent(const PluginContext& context) {
  ATTUNE_RETURN_IF_ERROR(
      support::ValidateOptions(random::kOptionsSchema, context.config, "agent 'random'"));
  if (!context.config.is_null() && !context.config.empty()) {
    return Status::InvalidArgument("agent 'random' takes no `with:` settings; found " +
                                   context.config.dump() + " (remove them)");
  }
  return std::unique_ptr<Plugin>(std::make_unique<RandomAgent>());
}

}  // namespace attune::agents
