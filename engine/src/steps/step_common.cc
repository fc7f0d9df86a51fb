#include "campaign/events.h"
#include "gate/paired_loss.h"
#include "report/report.h"
#include "steps/steps.h"

namespace attune {

using nlohmann::json;

Status FinishStep(RunContext& ctx, const StepDecl& step, const std::string& outcome,
                  const std::string& reason) {
  json data{{"step", step.id}, {"outcome", outcome}};
  if (!reason.empty()) data["reason"] = reason;
  return ctx.Append({NewEvent{events::kStepFinished, std::move(data)}});
}

json PairedLossData(const CampaignState& state, const std::string& candidate) {
  const auto* c = state.FindCandidate(candidate);
  // A lever known to change RNG streams carries a wider tolerance from the gate.
  double tolerance = state.settings.loss_rel_tolerance;
  if (c && c->loss_rel_tolerance > 0) tolerance = std::max(tolerance, c->loss_rel_tolerance);
  auto base = state.MeasurementOf(events::kBaselineId);
  auto cand = state.MeasurementOf(candidate);
  PairedLossVerdict v = ComparePairedLosses(base ? base->first_losses : std::vector<double>{},
                                            cand ? cand->first_losses : std::vector<double>{},
                                            state.settings.paired_losses, tolerance);
  return json{{"candidate", candidate}, {"pass", v.pass},         {"tolerance", tolerance},
              {"compared", v.compared},  {"max_rel_diff", v.max_rel_diff}, {"reason", v.reason}};
}

std::set<std::string> ConditionNames() {
  return {"leader",     "leader_changed", "budget_left_gpu_hours", "budget_spent_gpu_hours",
          "candidates", "failed_jobs",    "speedup"};
}

std::map<std::string, json> ConditionValues(const CampaignState& state) {
  auto q = QuoteSpeedup(state);
  return {{"leader", state.leader_id},
          {"leader_changed", state.leader_id != events::kBaselineId},
          {"budget_left_gpu_hours", state.ledger.Left()},
          {"budget_spent_gpu_hours", state.ledger.charged},
          {"candidates", static_cast<int>(state.candidates.size())},
          {"failed_jobs", state.FailedJobs()},
          {"speedup", q ? q->median : 1.0}};
}

}  // namespace attune
