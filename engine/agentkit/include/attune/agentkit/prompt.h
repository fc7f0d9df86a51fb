// Copyright attune authors.
//
// Builds the prompt a coding agent gets for one proposal, from the campaign view alone (so a
// resumed campaign asks the same question). Generic: no CLI-specific text.
//
// The prompt states the task, the rules (one legal move at a time, the noise band, the gate, when
// to stop), the budget, the baseline and the leader with their measurements, the leader's
// diagnosis, the history with verdicts and failures, past lessons, the legal moves, and the answer
// format. Long sections are bounded (history: the last kMaxHistory entries in full; moves: the
// first kMaxMoves) so the prompt stays well under the 128 KiB a single argv word may hold.
#ifndef ATTUNE_AGENTKIT_PROMPT_H_
#define ATTUNE_AGENTKIT_PROMPT_H_

#include <string>

#include "attune/agent.h"

namespace attune::agentkit {

inline constexpr size_t kMaxHistory = 40;
inline constexpr size_t kMaxMoves = 200;
inline constexpr size_t kMaxPromptBytes = 100 * 1024;

// The prompt for view.proposal_index.
std::string BuildProposalPrompt(const CampaignView& view);

// The follow-up after an invalid answer: the error, and the format again.
std::string BuildRetryPrompt(const std::string& error);

// The answer format paragraph (shared by both prompts and the skill).
std::string AnswerFormat();

}  // namespace attune::agentkit

#endif  // ATTUNE_AGENTKIT_PROMPT_H_
