// The engine's own rules run first (they need no stack knowledge), then the stack's validation,
// then its objective rules. Any error on the way refuses: the gate fails closed.
#include "gate/static_gate.h"

namespace attune {
namespace {

GateVerdict Refuse(std::string rule, std::string reason) {
  GateVerdict v;
  v.pass = false;
  v.rule_id = std::move(rule);
  v.reason = std::move(reason);
  return v;
}

std::string Words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

GateVerdict CandidateGateCheck(const Stack& stack, const Recipe& baseline, const ClusterInfo& cluster,
                               const CandidateGateInput& in) {
  if (!in.candidate) {
    return Refuse("engine.changes_do_not_apply",
                  "the proposed changes do not apply to " + in.base_id + ": " + in.apply_error);
  }
  if (in.base && Diff(*in.base, *in.candidate).empty()) {
    return Refuse("engine.no_change", "the candidate is identical to " + in.base_id);
  }
  const std::string id = RecipeId(*in.candidate);
  if (id == RecipeId(baseline)) return Refuse("engine.duplicate", "the candidate is the baseline");
  for (const auto& other : in.earlier) {
    if (other.recipe_id == id) {
      return Refuse("engine.duplicate", "the candidate repeats " + other.id + " (" + other.outcome + ")");
    }
  }
  return StaticGateCheck(stack, baseline, *in.candidate, cluster);
}

GateVerdict StaticGateCheck(const Stack& stack, const Recipe& baseline, const Recipe& candidate,
                            const ClusterInfo& cluster) {
  if (candidate.stack != baseline.stack) {
    return Refuse("engine.stack_changed", "the candidate's stack is '" + candidate.stack +
                                              "' but the baseline's is '" + baseline.stack +
                                              "'; a candidate must run on the same stack");
  }
  if (candidate.entry != baseline.entry) {
    return Refuse("engine.entry_changed", "the candidate's entry point is '" +
                                              Words(candidate.entry) + "' but the baseline's is '" +
                                              Words(baseline.entry) +
                                              "'; a different program is a different model");
  }
  Status valid = stack.Validate(candidate, cluster);
  if (!valid.ok()) {
    return Refuse("engine.validate", "the candidate does not validate for the cluster: " +
                                         valid.message());
  }
  GateVerdict verdict = stack.CheckObjective(baseline, candidate);
  if (verdict.pass && verdict.rule_id.empty()) verdict.rule_id = "ok";
  if (!verdict.pass && verdict.rule_id.empty()) verdict.rule_id = "stack.unnamed_rule";
  return verdict;
}

Status CheckBenchmarkForm(const Stack& stack, const Recipe& recipe, const Recipe& run) {
  const std::string who = "the " + recipe.stack + " stack's benchmark form ";
  if (run.stack != recipe.stack || run.entry != recipe.entry) {
    return Status::FailedPrecondition(who + "changes the stack or the entry point; it may change "
                                            "run-control settings only (a plugin defect)");
  }
  if (run.topology.nodes != recipe.topology.nodes ||
      run.topology.gpus_per_node != recipe.topology.gpus_per_node) {
    return Status::FailedPrecondition(who + "changes the topology, which the job's reservation is "
                                            "made for; it may change run-control settings only "
                                            "(a plugin defect)");
  }
  GateVerdict v = stack.CheckBenchmarkForm(recipe, run);
  if (!v.pass) {
    return Status::FailedPrecondition(who + "would train a different model (" + v.rule_id + ": " +
                                      v.reason + "); it may change run-control settings only "
                                                 "(a plugin defect)");
  }
  return Status::Ok();
}

}  // namespace attune
