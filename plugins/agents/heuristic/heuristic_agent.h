// Copyright attune authors.
//
// HeuristicAgent: the default agent. No LLM; the tuning skill written as code. Deterministic: the
// same view gives the same proposal.
//
// One proposal, one lever:
//  1. done when the budget left is below one job's cost estimate;
//  2. read the leader (reading.h): the stack's diagnoses plus the agent's own;
//  3. value every legal move from the leader not tried before (scoring.h; history.h says what
//     "tried" means);
//  4. PAIRS (pairs.h) become two candidates: when a memory-saving move would let a change that ran
//     out of memory (or is predicted not to fit) fit, the saver is proposed ALONE with the pair's
//     value and meta.then naming the change; once the saver is measured (slower included), the
//     change is proposed from the saver's candidate (base_id; meta.follow_up_of). After an OOM,
//     memory-saving moves alone also get kPairConfidence × the OOMed change's gain;
//  4b. RE-OPENINGS (reopen.h) become two candidates the same way: when a lever lost under a
//     setting that a kept move introduced and that interacts with it, the move taking that
//     setting back to an ancestor's value is proposed alone (meta.reopens, meta.then naming the
//     lost change), then the lost change from its candidate (a follow-up, as for pairs);
//  4c. ENABLERS (unlocks.h) become two candidates the same way: a legal move that makes another
//     lever legal (Move::unlocks) is proposed alone for it (meta.unlocks, meta.then) when the
//     unlocked move's value comes from the recipe's shape, then that move from its candidate;
//  5. value every untried legal move of the other measured candidates (view.parents) against the
//     leader: (parent / leader) × (1 + gain from the parent) − 1 — how winners within noise
//     combine. A parent that leads the leader by less than half the noise band counts as exactly
//     as fast (such a lead is noise), so the same move from the leader wins the tie and the
//     campaign does not drift onto a line whose change was never shown to help;
//  6. propose the highest expected gain (ties: the leader's moves in the stack's order) when it is
//     above the threshold (the noise band unless `with: {min_gain: x}`);
//  7. otherwise EXPLORE (unless `with: {explore: false}`): propose the best of the rest anyway,
//     marked meta.explore — a measurement replaces the prior, and the campaign's budget or its stop
//     rule, not the agent, ends tuning. Exploring ranks by expected gain minus kExploreRepeatCost
//     per earlier measurement of the same lever, so the least-measured levers come first. Done only
//     when no untried legal move is left anywhere.
// Each proposal carries a rationale (diagnosis → lever → why) and meta with the numbers.
//
// Config (`with:`): min_gain (double, default: the view's noise band), pair_after_oom (bool,
// default true), explore (bool, default true).
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_HEURISTIC_AGENT_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_HEURISTIC_AGENT_H_

#include <memory>
#include <optional>
#include <string>

#include "attune/agent.h"

namespace attune::agents {

struct HeuristicConfig {
  std::optional<double> min_gain;
  bool pair_after_oom = true;
  bool explore = true;  // false: done when nothing is expected to beat the threshold
};

Result<HeuristicConfig> ParseHeuristicConfig(const nlohmann::json& with);

class HeuristicAgent : public Agent {
 public:
  explicit HeuristicAgent(HeuristicConfig config) : config_(config) {}
  std::string Name() const override { return "heuristic"; }
  Result<Proposal> Propose(const CampaignView& view) override;

 private:
  HeuristicConfig config_;
};

Result<std::unique_ptr<Plugin>> CreateHeuristicAgent(const PluginContext& context);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_HEURISTIC_AGENT_H_
