// Copyright attune authors.
//
// The heuristic agent's proposal on a hand-built view (view_fixtures.h), for its test files.
#ifndef ATTUNE_TESTS_UNIT_AGENTS_HEURISTIC_ASK_H_
#define ATTUNE_TESTS_UNIT_AGENTS_HEURISTIC_ASK_H_

#include <catch2/catch.hpp>

#include "heuristic_agent.h"

namespace attune::testing {

// The heuristic's proposal on `view` under `config`; the call must succeed.
inline Proposal Ask(const CampaignView& view, agents::HeuristicConfig config = {}) {
  agents::HeuristicAgent agent(config);
  auto result = agent.Propose(view);
  REQUIRE(result.ok());
  return *result;
}

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_UNIT_AGENTS_HEURISTIC_ASK_H_
