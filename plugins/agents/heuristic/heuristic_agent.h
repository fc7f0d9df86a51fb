// Copyright attune authors.
//
// HeuristicAgent: the default agent. No LLM; the tuning skill written as code. Deterministic: the
// same view gives the same proposal.
//
// One proposal:
//  1. done when the budget left is below one job's cost estimate, or no legal move is left;
//  2. read the leader (reading.h): the stack's diagnoses plus the agent's own;
//  3. value every legal move not tried before (scoring.h; history.h says what "tried" means);
//  4. also value PAIRS (pairs.h): a memory-saving legal move together with a change that ran out
//     of memory or is predicted not to fit, when the saving is predicted to make it fit. This is
//     the one way a failed change comes back: never alone, only with the remedy, each pair once.
//     After an OOM, memory-saving moves alone also get kPairConfidence × the OOMed change's gain
//     (they are the route to it);
//  5. propose the highest expected gain (ties: the stack's move order); done when that gain is not
//     above the threshold (the noise band unless `with: {min_gain: x}`), because a smaller expected
//     gain could not be told apart from noise.
// Each proposal carries a rationale (diagnosis → lever → why) and meta with the numbers.
//
// Config (`with:`): min_gain (double, default: the view's noise band), pair_after_oom (bool,
// default true).
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
