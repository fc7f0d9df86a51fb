// Copyright attune authors.
#include "steps/workflow_change.h"

#include <cmath>
#include <map>
#include <set>

namespace attune {

using json = nlohmann::json;

namespace {

// "/steps/0/with/repeats" -> "steps[0].with.repeats".
std::string DottedPath(const std::string& pointer) {
  std::string out;
  size_t i = 1;
  while (i <= pointer.size()) {
    size_t end = pointer.find('/', i);
    if (end == std::string::npos) end = pointer.size();
    std::string part = pointer.substr(i, end - i);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (index && !out.empty()) {
      out += "[" + part + "]";
    } else {
      out += (out.empty() ? "" : ".") + part;
    }
    i = end + 1;
  }
  return out;
}

std::string Short(const json& v) {
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

json Comparable(const Workflow& w) {
  json j = WorkflowToJson(w);
  for (const char* key : {"name", "source_path", "recipe_path"}) j.erase(key);
  return j;
}

struct Difference {
  std::string path;      // dotted
  std::string pointer;   // JSON pointer into the comparable form
  std::string line;
};

std::vector<Difference> Differences(const Workflow& recorded, const Workflow& given) {
  const json a = Comparable(recorded);
  const json b = Comparable(given);
  std::vector<Difference> out;
  bool recipe_said = false;
  for (const json& op : json::diff(a, b)) {
    const std::string pointer = op.at("path").get<std::string>();
    if (pointer.rfind("/recipe", 0) == 0) {
      if (!recipe_said) {
        out.push_back({"recipe", "/recipe", "recipe: the file's recipe differs from the recorded one"});
      }
      recipe_said = true;
      continue;
    }
    const std::string path = DottedPath(pointer);
    const json::json_pointer ptr(pointer);
    const std::string before = a.contains(ptr) ? Short(a.at(ptr)) : "(absent)";
    const std::string after = b.contains(ptr) ? Short(b.at(ptr)) : "(absent)";
    out.push_back({path, pointer, path + ": recorded " + before + ", the file " + after});
  }
  return out;
}

Status Refused(const std::string& what) { return Status::InvalidArgument(what); }

}  // namespace

std::vector<std::string> WorkflowDifferences(const Workflow& recorded, const Workflow& given) {
  std::vector<std::string> lines;
  for (const auto& d : Differences(recorded, given)) lines.push_back(d.line);
  return lines;
}

Status CheckRecordedWorkflow(const Workflow& w, const WorkflowSchema& schema) {
  auto check_plugin = [](const PluginRef& p, const char* key,
                         const std::map<std::string, support::JsonSchema>& schemas) -> Status {
    auto it = schemas.find(p.name);
    if (it == schemas.end()) return Status::Ok();
    return it->second.Validate(p.with, std::string(key) + ".with");
  };
  ATTUNE_RETURN_IF_ERROR(check_plugin(w.stack, "stack", schema.stack_options));
  ATTUNE_RETURN_IF_ERROR(check_plugin(w.launcher, "launcher", schema.launcher_options));
  ATTUNE_RETURN_IF_ERROR(check_plugin(w.agent, "agent", schema.agent_options));
  for (size_t i = 0; i < w.steps.size(); ++i) {
    const StepDecl& step = w.steps[i];
    const std::string path = "steps[" + std::to_string(i) + "]";
    auto kind = schema.step_kinds.find(step.uses);
    if (!schema.step_kinds.empty() && kind == schema.step_kinds.end()) {
      return Status::InvalidArgument(path + ".uses: unknown step '" + step.uses + "'");
    }
    if (kind != schema.step_kinds.end()) {
      ATTUNE_RETURN_IF_ERROR(kind->second.Validate(step.with, path + ".with"));
    }
    if (!step.if_expr.empty()) {
      Status s = CheckCondition(step.if_expr, schema.condition_names);
      if (!s.ok()) return Status::InvalidArgument(path + ".if: " + s.message());
    }
  }
  const std::pair<const char*, double> numbers[] = {
      {"budget.gpu_hours", w.budget.gpu_hours},
      {"budget.job_time_limit_s", w.budget.job_time_limit_s},
      {"budget.time_limit_factor", w.budget.time_limit_factor},
      {"measure.noise_band", w.measure.noise_band},
      {"measure.early_stop.relative_error", w.measure.early_stop.relative_error},
      {"measure.early_stop.check_every_s", w.measure.early_stop.check_every_s},
      {"gate.loss_rel_tolerance", w.gate.loss_rel_tolerance}};
  for (const auto& [path, value] : numbers) {
    if (!std::isfinite(value)) {
      return Status::InvalidArgument(std::string(path) + ": not a finite number");
    }
  }
  return Status::Ok();
}

Status CheckAmendment(const CampaignState& state, const Workflow& recorded,
                      const Workflow& amended) {
  // Steps that started keep exactly their declaration and their place.
  std::set<std::string> started;
  for (const StepRecord& s : state.steps) {
    if (s.started || s.finished) started.insert(s.id);
  }
  for (size_t i = 0; i < recorded.steps.size(); ++i) {
    const StepDecl& before = recorded.steps[i];
    if (!started.count(before.id)) continue;
    const bool same = i < amended.steps.size() && amended.steps[i].id == before.id &&
                      amended.steps[i].uses == before.uses &&
                      amended.steps[i].with == before.with &&
                      amended.steps[i].if_expr == before.if_expr;
    if (!same) {
      return Refused("steps[" + std::to_string(i) + "] ('" + before.id +
                     "') has started: an amendment must keep it, and every step before it, as "
                     "recorded; change only steps that have not started");
    }
  }
  std::vector<std::string> refused;
  for (const Difference& d : Differences(recorded, amended)) {
    const std::string& p = d.pointer;
    if (p.rfind("/steps", 0) == 0) continue;          // checked above
    if (p.rfind("/agent/with", 0) == 0) continue;     // how proposals are made, not past results
    if (p == "/budget/job_time_limit_s") continue;    // applies to jobs not yet requested
    if (p == "/budget/time_limit_factor") continue;   // likewise
    if (p.rfind("/measure/early_stop", 0) == 0) continue;  // stops are recorded as decided
    if (p == "/budget/gpu_hours") {
      const double spent = state.ledger.charged + state.ledger.reserved;
      if (amended.budget.gpu_hours < spent) {
        refused.push_back("budget.gpu_hours: " + std::to_string(amended.budget.gpu_hours) +
                          " is less than what is already spent or reserved (" +
                          std::to_string(spent) + " GPU-hours)");
      }
      continue;
    }
    if (p == "/budget/max_candidates") {
      if (amended.budget.max_candidates < static_cast<int>(state.candidates.size())) {
        refused.push_back("budget.max_candidates: " +
                          std::to_string(amended.budget.max_candidates) + " is less than the " +
                          std::to_string(state.candidates.size()) + " candidates already tried");
      }
      continue;
    }
    refused.push_back(d.line + " (past results were measured and judged with the recorded value)");
  }
  if (refused.empty()) return Status::Ok();
  std::string message = "this amendment changes what past decisions rest on: ";
  for (size_t i = 0; i < refused.size(); ++i) message += (i ? "; " : "") + refused[i];
  return Refused(message + ". Amend only the budget, the agent's options and steps not yet "
                           "started, or start a new campaign in another directory");
}

}  // namespace attune
