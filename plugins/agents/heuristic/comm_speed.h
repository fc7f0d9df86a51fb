// Copyright attune authors.
//
// Whole-move speed estimates of communication levers from the recipe's shape and the fabric
// (comm_estimate.h), relative to the leader's measured step: turning on --overlap-grad-reduce,
// --tp-comm-overlap or --overlap-moe-expert-parallel-comm, and moving the expert tensor-parallel
// size. Each is std::nullopt for any other move, or without the leader's step time or the
// model's shape; EstimateMove (scoring.h) blends them with what the campaign measured.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_COMM_SPEED_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_COMM_SPEED_H_

#include <map>
#include <optional>
#include <string>

#include "attune/agent.h"

namespace attune::agents {

std::optional<double> GradReduceOverlapSpeed(const CampaignView& view, const Move& move,
                                             const std::map<std::string, std::string>& defaults);
std::optional<double> TpOverlapSpeed(const CampaignView& view, const Move& move,
                                     const std::map<std::string, std::string>& defaults);
std::optional<double> ExpertTpSpeed(const CampaignView& view, const Move& move,
                                    const std::map<std::string, std::string>& defaults);
std::optional<double> EpOverlapSpeed(const CampaignView& view, const Move& move,
                                     const std::map<std::string, std::string>& defaults);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_COMM_SPEED_H_
