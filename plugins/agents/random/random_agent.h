// Copyright attune authors.
//
// RandomAgent: the comparison baseline. Picks one legal move uniformly at random among those not
// tried before (history.h: by resulting recipe, and never a banned change), using view.seed, so
// the same view always gives the same proposal. Done when no untried legal move is left or the
// budget left is below one job's cost estimate. No configuration.
#ifndef ATTUNE_PLUGINS_AGENTS_RANDOM_RANDOM_AGENT_H_
#define ATTUNE_PLUGINS_AGENTS_RANDOM_RANDOM_AGENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "attune/agent.h"

namespace attune::agents {

// A portable 64-bit mix (SplitMix64) so that the choice does not depend on the standard
// library's distributions.
uint64_t SplitMix64(uint64_t x);

class RandomAgent : public Agent {
 public:
  std::string Name() const override { return "random"; }
  Result<Proposal> Propose(const CampaignView& view) override;
};

Result<std::unique_ptr<Plugin>> CreateRandomAgent(const PluginContext& context);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_RANDOM_RANDOM_AGENT_H_
