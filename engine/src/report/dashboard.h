// Copyright attune authors.
//
// The dashboard's data: what `attune serve` answers under /api/ and what report.html inlines
// (docs/serve.md lists every member). Pure functions of the folded state, like every renderer
// here; the server adds what is not in the state (the campaign's name under its root, whether a
// writer is alive, the time of the last event, job log tails).
#ifndef ATTUNE_ENGINE_REPORT_DASHBOARD_H_
#define ATTUNE_ENGINE_REPORT_DASHBOARD_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "campaign/campaign_state.h"

namespace attune {

// One row of the leaderboard: the same rows, in the same order, as RESULTS.md's table (measured
// entries fastest first, then the others in proposal order; the baseline is a row).
struct LeaderboardRow {
  std::string id;
  std::string change;
  std::string lever;
  std::optional<double> tokens_per_s_per_gpu;
  double gpu_hours = 0;
  std::string verdict;
  int order = 0;  // 0 for the baseline, else the candidate's 1-based proposal index
};
std::vector<LeaderboardRow> Leaderboard(const CampaignState& state);

// The campaign at a glance (the campaigns list's row): id, plugins, leader, speedup, budget,
// counts, steps. `finished` and `paused` are the recorded facts; the server derives the state.
nlohmann::json DashboardSummary(const CampaignState& state);

// Everything the campaign page draws: summary, runs (every finished tuning run, in finish
// order, the chart's points), leader steps, leaderboard, budget burn-down and candidate tree.
nlohmann::json DashboardCampaign(const CampaignState& state);

// One candidate ("baseline" or "cNNN") in detail: changes against the baseline and its parent,
// gate verdict and rule, paired-loss check, diagnosis, profile breakdown, jobs. nullopt when the
// campaign has no such candidate.
std::optional<nlohmann::json> DashboardCandidate(const CampaignState& state, const std::string& id);

// "<lever>" of a candidate, or "" (the baseline, or a proposal that named no lever).
std::string LeverOf(const CampaignState& state, const std::string& id);

}  // namespace attune

#endif  // ATTUNE_ENGINE_REPORT_DASHBOARD_H_
