// `verify`: the quoted speedup must come from runs made side by side, and the shipped leader
// must train the same model. First the paired-loss check (a failing leader is reverted to the
// one before it, recorded); then leader and baseline alternate, pair by pair.
#include <algorithm>

#include "campaign/events.h"
#include "measure/measure.h"
#include "steps/job_driver.h"
#include "steps/step_kinds.h"
#include "steps/steps.h"

namespace attune {
namespace {

using nlohmann::json;

bool Checked(const CampaignState& state, const std::string& id) {
  return std::any_of(state.paired_loss_checks.begin(), state.paired_loss_checks.end(),
                     [&](const PairedLossResult& r) { return r.candidate == id; });
}

// Checks the current leader once; reverts it when its losses do not match.
Status CheckLeaderLosses(RunContext& ctx) {
  const std::string leader = ctx.state.leader_id;
  json data = PairedLossData(ctx.state, leader);
  std::vector<NewEvent> batch{NewEvent{events::kPairedLossChecked, data}};
  if (!data.at("pass").get<bool>()) {
    batch.push_back(NewEvent{events::kLeaderChanged, json{{"from", leader},
                                                          {"to", ctx.state.PreviousLeader()},
                                                          {"reason", "paired_loss_mismatch"}}});
  }
  return ctx.Append(std::move(batch));
}

// A pair's run is settled once it measured or failed for its recipe, or when runs that failed for
// the infrastructure (InfrastructureBlame: NCCL, a first silent hang, node lost) used up the
// retries: such a run is run again, so that a pair is not lost to bad luck.
bool Settled(const CampaignState& state, const std::string& who, int pair, int infra_retries) {
  int infrastructure = 0;
  InfrastructureBlame blame;
  for (const auto* j : state.JobsOf(who, JobPurpose::kVerify)) {
    if (j->pair != pair) continue;
    if (!blame(*j)) return true;
    ++infrastructure;
  }
  return infrastructure > infra_retries;
}

// The next verify job still to run, in the order leader, baseline, leader, baseline, ...
std::optional<JobAsk> NextPairJob(const CampaignState& state, const StepDecl& step, int pairs,
                                  int infra_retries) {
  for (int p = 1; p <= pairs; ++p) {
    for (const std::string& who : {state.leader_id, std::string(events::kBaselineId)}) {
      if (!Settled(state, who, p, infra_retries)) return JobAsk{who, JobPurpose::kVerify, p, step.id};
    }
  }
  return std::nullopt;
}

std::optional<double> PairTps(const CampaignState& state, const std::string& who, int pair) {
  for (const auto* j : state.JobsOf(who, JobPurpose::kVerify)) {
    if (j->pair == pair && j->measurement && !j->failure) return j->measurement->tokens_per_s_per_gpu;
  }
  return std::nullopt;
}

Status RecordSpeedup(RunContext& ctx, const StepDecl& step, int pairs, const std::string& outcome) {
  std::vector<double> lead, base;
  for (int p = 1; p <= pairs; ++p) {
    auto l = PairTps(ctx.state, ctx.state.leader_id, p), b = PairTps(ctx.state, events::kBaselineId, p);
    if (l && b) {
      lead.push_back(*l);
      base.push_back(*b);
    }
  }
  SpeedupStats s = PairedSpeedup(lead, base);
  std::vector<NewEvent> batch;
  if (!s.ratios.empty()) {
    batch.push_back(NewEvent{events::kSpeedupMeasured,
                             json{{"leader", ctx.state.leader_id}, {"ratios", s.ratios},
                                  {"median", s.median}, {"min", s.min}, {"max", s.max}}});
  }
  batch.push_back(NewEvent{events::kStepFinished, json{{"step", step.id}, {"outcome", outcome}}});
  return ctx.Append(std::move(batch));
}

}  // namespace

Status RunVerifyStep(RunContext& ctx, const StepDecl& step) {
  ATTUNE_ASSIGN_OR_RETURN(const int pairs, StepIntOption(step, "repeats"));
  ATTUNE_ASSIGN_OR_RETURN(const int infra_retries, StepIntOption(step, "infra_retries"));
  while (true) {
    if (ctx.StopRequested()) return StopStatus();
    if (ctx.state.leader_id != events::kBaselineId && !Checked(ctx.state, ctx.state.leader_id)) {
      ATTUNE_RETURN_IF_ERROR(CheckLeaderLosses(ctx));
      continue;
    }
    if (ctx.state.leader_id == events::kBaselineId) return FinishStep(ctx, step, "baseline_is_leader");
    auto next = NextPairJob(ctx.state, step, pairs, infra_retries);
    if (!next) return RecordSpeedup(ctx, step, pairs, "done");
    ATTUNE_ASSIGN_OR_RETURN(std::optional<std::string> name, TryRequestJob(ctx, *next));
    if (!name) return RecordSpeedup(ctx, step, pairs, "budget_exhausted");
    ATTUNE_RETURN_IF_ERROR(DriveJob(ctx, *name));
  }
}

}  // namespace attune
