// Copyright attune authors.
//
// The built-in step kinds. Each runs from the folded state alone: it finds where it stands,
// does the next thing, records it, and repeats until it records its own StepFinished. Any of
// them may return StopStatus() (a stop was requested) and is then resumed later from the state.
#ifndef ATTUNE_ENGINE_STEPS_STEPS_H_
#define ATTUNE_ENGINE_STEPS_STEPS_H_

#include "attune/status.h"
#include "steps/run_context.h"
#include "workflow/workflow.h"

namespace attune {

// `benchmark`: runs the baseline `with.repeats` times.
Status RunBenchmarkStep(RunContext& ctx, const StepDecl& step);
// `tune`: asks the agent, gates, measures and ranks until the budget, the candidate limit or
// the agent ends it. with: max_candidates, agent_retries, infra_retries (new runs after a run that
// failed for the infrastructure, InfrastructureBlame, so that a lever is not lost to bad luck; a
// second silent hang of the same candidate is its recipe's), stop.no_gain_candidates (end after that many candidates ran without a new leader).
// Outcomes: no_baseline, agent_done, max_candidates, agent_failed, stop_rule, budget_exhausted,
// each recorded with its reason. Defaults: the schemas in step_kinds.cc.
Status RunTuneStep(RunContext& ctx, const StepDecl& step);

// `verify`: the leader's paired-loss check (reverting a leader that fails), then `with.repeats`
// alternating runs of the leader and the baseline for the quoted speedup.
Status RunVerifyStep(RunContext& ctx, const StepDecl& step);
// `profile`: one profiled run of the leader (Stack::ProfileForm), its traces analysed and recorded
// (ProfileAnalyzed) for the agents and the report. with: infra_retries. Outcomes: done,
// unsupported (the stack cannot profile this recipe), no_traces, profile_failed, budget_exhausted.
Status RunProfileStep(RunContext& ctx, const StepDecl& step);
// `report`: RESULTS.md, REPORT.md, throughput.svg and lessons.md in the campaign directory.
Status RunReportStep(RunContext& ctx, const StepDecl& step);

// Records StepFinished{step, outcome[, reason]}; the reason is the step's own words for the outcome
// (the report quotes it).
Status FinishStep(RunContext& ctx, const StepDecl& step, const std::string& outcome,
                  const std::string& reason = "");

// Checks the leader's first losses against the baseline's; returns the PairedLossChecked data.
nlohmann::json PairedLossData(const CampaignState& state, const std::string& candidate);

// The values `if:` conditions may use (docs/campaign.md lists them).
std::map<std::string, nlohmann::json> ConditionValues(const CampaignState& state);
// The names ConditionValues defines: what `attune validate` lets an `if:` use.
std::set<std::string> ConditionNames();

// The agent's read-only view of the campaign before proposal `index`.
CampaignView BuildCampaignView(const RunContext& ctx, int max_candidates);

// Fills Move::unlocks of each of `moves` (the stack's legal moves from `recipe`): the moves the
// stack offers from the recipe after it, of levers it offers no move of from `recipe`, that do not
// touch the move's own keys. Deterministic (the stack's answers are).
void FindUnlocks(const Stack& stack, const Recipe& recipe, const ClusterInfo& cluster,
                 std::vector<Move>* moves);

// Why `id` cannot be the base of a proposal, or "" when it can: the baseline and every candidate
// ranked slower, within noise or new leader (measured, same objective) can; a pending, refused,
// failed or skipped candidate, or one whose first losses differed, cannot.
std::string ParentRefusal(const CampaignState& state, const std::string& id);

// The candidates a proposal may start from, as CampaignView::parents lists them: the kMaxParents
// fastest measured ones besides the leader (the baseline among them), fastest first, ties in
// proposal order, then the kRecentParents measured last that are not among them, most recent
// first.
std::vector<std::string> ParentIds(const CampaignState& state);

}  // namespace attune

#endif  // ATTUNE_ENGINE_STEPS_STEPS_H_
