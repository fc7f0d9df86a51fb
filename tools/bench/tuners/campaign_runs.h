// Copyright attune authors.
//
// Runs one campaign through the `attune` CLI (a subprocess, as a user would) and reads its
// outcome back from `attune events DIR --json`.
//
// The campaign's workflow is the scenario's, with: the agent replaced (grid gets its space),
// the seed and budget set, max_candidates raised so that the budget is what stops it, the recipe
// path made absolute, and only the benchmark and tune steps kept (verify and report re-measure;
// they cost the same for every agent and would blur the comparison).
//
// From the events: ProposalRecorded gives each candidate's recipe, JobRequested maps jobs to
// candidates, JobFinished gives charges and failures, LeaderChanged the leader over time. The
// leader's throughput is scored with the noise-free Evaluator, so agents are compared on what
// they found, not on a lucky measurement.
#ifndef ATTUNE_TOOLS_BENCH_TUNERS_CAMPAIGN_RUNS_H_
#define ATTUNE_TOOLS_BENCH_TUNERS_CAMPAIGN_RUNS_H_

#include <string>
#include <vector>

#include "bench_types.h"
#include "space_search.h"

namespace attune::bench {

struct CampaignRequest {
  const ScenarioFile* scenario = nullptr;
  std::string agent;
  nlohmann::json agent_with = nlohmann::json::object();
  int seed = 0;
  double budget_gpu_hours = 0;
  std::string dir;  // created; the workflow variant and logs go here, the campaign in dir/campaign
};

// Writes the workflow variant; returns its path.
Result<std::string> WriteWorkflowVariant(const CampaignRequest& request);

CampaignOutcome RunCampaign(const BenchOptions& options, const CampaignRequest& request,
                            const SpaceResult& space, Evaluator* evaluator);

// Reads an NDJSON event stream into an outcome (exposed for testing the reader on a log).
// `budget_gpu_hours` places the 25/50/100% checkpoints.
CampaignOutcome ReadOutcome(const std::vector<nlohmann::json>& events, const Recipe& baseline,
                            const SpaceResult& space, Evaluator* evaluator, double budget_gpu_hours);

// Scores a scenario's runs against the best known recipe: the search's best, or a final leader
// that beat it (the search stops at its depth and beam). Recomputes each run's share of the best
// and GPU-hours to 90% from its trajectory.
void RaiseBestToLeaders(SpaceResult* space, std::vector<CampaignOutcome>* outcomes);

}  // namespace attune::bench

#endif  // ATTUNE_TOOLS_BENCH_TUNERS_CAMPAIGN_RUNS_H_
