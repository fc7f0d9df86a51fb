// Copyright attune authors.
//
// Reading a coding agent's answer. Generic: nothing here is specific to one CLI; every CLI agent
// plugin uses the same parser.
//
// The answer is free text whose LAST JSON object (in a ```json fenced block or bare) is the
// proposal: {"changes":[{"key":..,"from":..,"to":..}],"lever_id":..,"rationale":..} or
// {"done":true,"rationale":..}. "from"/"to" are strings, or null for "absent".
#ifndef ATTUNE_AGENTKIT_PROPOSAL_H_
#define ATTUNE_AGENTKIT_PROPOSAL_H_

#include <nlohmann/json.hpp>
#include <string>

#include "attune/agent.h"
#include "attune/status.h"

namespace attune::agentkit {

// The last JSON object in `text` that parses. Fenced ```json blocks are preferred over bare
// objects. kInvalidArgument when there is none.
Result<nlohmann::json> ExtractLastJsonObject(const std::string& text);

// ExtractLastJsonObject + ProposalFromJson, with messages written for the model to read.
Result<Proposal> ParseAnswer(const std::string& text);

// Checks a proposal against the view: its changes must equal one legal move's changes (key, from
// and to), or, when the view lists no legal moves, touch catalog keys with the leader's current
// values as `from`. Fills lever_id from the matched move when the answer left it empty. The error
// names the offending change and what would be legal, so it can be fed back to the model. A
// proposal with a `base` other than the leader is checked against that candidate's legal moves
// (view.parents); a base not among them is an error naming the ones there are.
Status ValidateProposal(const CampaignView& view, Proposal* proposal);

}  // namespace attune::agentkit

#endif  // ATTUNE_AGENTKIT_PROPOSAL_H_
