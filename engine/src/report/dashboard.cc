// The dashboard's data as JSON: a pure function of the folded state (docs/serve.md).
#include "report/dashboard.h"

#include <algorithm>
#include <unordered_map>

#include "campaign/events.h"
#include "report/report.h"
#include "report/report_util.h"

namespace attune {
namespace ri = report_internal;
using nlohmann::json;

namespace {

// Candidates, jobs and charges by name, built once per rendering: the state's own Find* scan
// their vectors, which made a 10,000-candidate page quadratic (seconds per render).
class Lookup {
 public:
  explicit Lookup(const CampaignState& state) : state_(state) {
    for (const auto& c : state.candidates) candidates_[c.id] = &c;
    for (const auto& j : state.jobs) {
      jobs_[j.name] = &j;
      if (j.finished) charged_[j.candidate] += j.charged_gpu_hours;
    }
  }
  const CandidateRecordState* Candidate(const std::string& id) const {
    auto it = candidates_.find(id);
    return it == candidates_.end() ? nullptr : it->second;
  }
  const JobRecord* Job(const std::string& name) const {
    auto it = jobs_.find(name);
    return it == jobs_.end() ? nullptr : it->second;
  }
  double Charged(const std::string& id) const {
    auto it = charged_.find(id);
    return it == charged_.end() ? 0 : it->second;
  }
  std::string Lever(const std::string& id) const {
    const auto* c = Candidate(id);
    return c ? c->lever_id : "";
  }
  std::string Change(const std::string& id) const {
    const auto* c = Candidate(id);
    return c ? DescribeChanges(c->changes) : "";
  }
  std::string Verdict(const CandidateRecordState& c) const {
    return ri::VerdictText(state_, c, [this](const std::string& name) { return Job(name); });
  }
  std::string Verdict(const std::string& id) const {
    if (id == events::kBaselineId) return state_.leader_id == id ? "baseline, leader" : "baseline";
    const auto* c = Candidate(id);
    return c ? Verdict(*c) : "";
  }

 private:
  const CampaignState& state_;
  std::unordered_map<std::string, const CandidateRecordState*> candidates_;
  std::unordered_map<std::string, const JobRecord*> jobs_;
  std::unordered_map<std::string, double> charged_;
};

json OptionalNumber(const std::optional<double>& v) { return v ? json(*v) : json(); }

bool IsChartedRun(const JobRecord& j) {
  return j.finished && !j.cancelled_by_engine && IsTuning(j.purpose);
}

std::optional<double> BaselineTps(const CampaignState& state) {
  auto base = state.MeasurementOf(events::kBaselineId);
  if (!base) return std::nullopt;
  return base->tokens_per_s_per_gpu;
}

json RunJson(const Lookup& lookup, const JobRecord& j) {
  const bool ok = j.measurement && !j.failure;
  json run = {{"job", j.name},
              {"candidate", j.candidate},
              {"purpose", JobPurposeName(j.purpose)},
              {"attempt", j.attempt},
              {"gpu_hours_after", j.charged_total_after},
              {"gpu_hours", j.charged_gpu_hours},
              {"tokens_per_s_per_gpu", ok ? json(j.measurement->tokens_per_s_per_gpu) : json()},
              {"ok", ok},
              {"failure", j.failure ? json(FailureKindName(j.failure->kind)) : json()},
              {"lever", lookup.Lever(j.candidate)},
              {"change", lookup.Change(j.candidate)},
              {"verdict", lookup.Verdict(j.candidate)}};
  return run;
}

// The leader's throughput over cumulative GPU-hours: the baseline's, then one step per new leader
// (and per faster candidate whose losses did not match, which led until the check), as drawn in
// throughput.svg.
json LeaderSteps(const CampaignState& state, const Lookup& lookup) {
  json steps = json::array();
  auto base = BaselineTps(state);
  if (!base) return steps;
  steps.push_back({{"gpu_hours", 0.0},
                   {"tokens_per_s_per_gpu", *base},
                   {"candidate", "baseline"},
                   {"lever", ""},
                   {"change", ""}});
  for (const auto& c : state.candidates) {
    const bool led = c.outcome == Outcome::kNewLeader || c.outcome == Outcome::kPairedLossMismatch;
    if (!led || !c.tokens_per_s_per_gpu || c.jobs.empty()) continue;
    const auto* j = lookup.Job(c.jobs.back());
    if (!j || !j->finished) continue;
    steps.push_back({{"gpu_hours", j->charged_total_after},
                     {"tokens_per_s_per_gpu", *c.tokens_per_s_per_gpu},
                     {"candidate", c.id},
                     {"lever", c.lever_id},
                     {"change", DescribeChanges(c.changes)}});
  }
  return steps;
}

json LeaderboardJson(const CampaignState& state, const std::vector<LeaderboardRow>& board) {
  json rows = json::array();
  auto base = BaselineTps(state);
  int rank = 0;
  for (const auto& r : board) {
    json speedup;
    if (r.tokens_per_s_per_gpu && base && *base > 0) speedup = *r.tokens_per_s_per_gpu / *base;
    rows.push_back({{"rank", r.tokens_per_s_per_gpu ? json(++rank) : json()},
                    {"candidate", r.id},
                    {"change", r.change},
                    {"lever", r.lever},
                    {"tokens_per_s_per_gpu", OptionalNumber(r.tokens_per_s_per_gpu)},
                    {"speedup", speedup},
                    {"gpu_hours", r.gpu_hours},
                    {"verdict", r.verdict},
                    {"leader", r.id == state.leader_id}});
  }
  return rows;
}

// Budget left after each finished job, in finish order (the burn-down).
json BurnDown(const CampaignState& state) {
  std::vector<const JobRecord*> done;
  for (const auto& j : state.jobs) {
    if (j.finished) done.push_back(&j);
  }
  std::stable_sort(done.begin(), done.end(), [](const JobRecord* a, const JobRecord* b) {
    return a->charged_total_after < b->charged_total_after;
  });
  json burn = json::array();
  burn.push_back({{"jobs", 0}, {"charged_gpu_hours", 0.0}, {"left_gpu_hours", state.ledger.total}});
  int n = 0;
  for (const JobRecord* j : done) {
    burn.push_back({{"jobs", ++n},
                    {"job", j->name},
                    {"charged_gpu_hours", j->charged_total_after},
                    {"left_gpu_hours", state.ledger.total - j->charged_total_after}});
  }
  return burn;
}

json Tree(const CampaignState& state, const Lookup& lookup) {
  json nodes = json::array();
  auto base = BaselineTps(state);
  nodes.push_back({{"id", "baseline"},
                   {"parent", json()},
                   {"lever", ""},
                   {"change", ""},
                   {"outcome", "baseline"},
                   {"tokens_per_s_per_gpu", OptionalNumber(base)},
                   {"leader", state.leader_id == events::kBaselineId}});
  for (const auto& c : state.candidates) {
    nodes.push_back({{"id", c.id},
                     {"parent", c.base_id},
                     {"lever", c.lever_id},
                     {"change", DescribeChanges(c.changes)},
                     {"outcome", OutcomeName(c.outcome)},
                     {"verdict", lookup.Verdict(c)},
                     {"tokens_per_s_per_gpu", OptionalNumber(c.tokens_per_s_per_gpu)},
                     {"leader", state.leader_id == c.id}});
  }
  return nodes;
}

json JobJson(const JobRecord& j) {
  return {{"job", j.name},
          {"purpose", JobPurposeName(j.purpose)},
          {"attempt", j.attempt},
          {"pair", j.pair},
          {"finished", j.finished},
          {"state", JobStateName(j.state)},
          {"gpus", j.devices},
          {"gpu_hours", j.charged_gpu_hours},
          {"measurement", j.measurement ? MeasurementToJson(*j.measurement) : json()},
          {"failure", j.failure ? FailureToJson(*j.failure) : json()},
          {"stopped_early", j.stopped_early},
          {"measured_at_time_limit", j.measured_at_time_limit}};
}

json DiagnosesJson(const std::vector<Diagnosis>& ds) {
  json out = json::array();
  for (const auto& d : ds) out.push_back(DiagnosisToJson(d));
  return out;
}

json ProfileOf(const CampaignState& state, const std::string& id) {
  for (auto it = state.profiles.rbegin(); it != state.profiles.rend(); ++it) {
    if (it->candidate != id) continue;
    return {{"job", it->job},
            {"traces", it->traces},
            {"bars", it->bars},
            {"diagnoses", DiagnosesJson(it->diagnoses)},
            {"error", it->error}};
  }
  return json();
}

json PairedLossOf(const CampaignState& state, const std::string& id) {
  json checks = json::array();
  for (const auto& p : state.paired_loss_checks) {
    if (p.candidate != id) continue;
    checks.push_back({{"pass", p.pass},
                      {"tolerance", p.tolerance},
                      {"compared", p.compared},
                      {"max_rel_diff", p.max_rel_diff},
                      {"reason", p.reason}});
  }
  return checks;
}

// Each change as {key, from, to} plus "text", the form the reports print ("--x: 1 -> 2").
json ChangesJson(const std::vector<Change>& changes) {
  json out = ChangesToJson(changes);
  for (size_t i = 0; i < changes.size() && i < out.size(); ++i)
    out[i]["text"] = DescribeChange(changes[i]);
  return out;
}

json ChangesAgainst(const Recipe* from, const Recipe* to) {
  if (!from || !to) return json::array();
  return ChangesJson(Diff(*from, *to));
}

}  // namespace

std::string LeverOf(const CampaignState& state, const std::string& id) {
  const auto* c = state.FindCandidate(id);
  return c ? c->lever_id : "";
}

namespace {

std::vector<LeaderboardRow> LeaderboardOf(const CampaignState& state, const Lookup& lookup) {
  std::vector<LeaderboardRow> rows;
  rows.push_back(LeaderboardRow{events::kBaselineId, "(baseline)", "", BaselineTps(state),
                                lookup.Charged(events::kBaselineId),
                                lookup.Verdict(events::kBaselineId), 0});
  for (const auto& c : state.candidates) {
    rows.push_back(LeaderboardRow{c.id, DescribeChanges(c.changes), c.lever_id,
                                  c.tokens_per_s_per_gpu, lookup.Charged(c.id), lookup.Verdict(c),
                                  c.index});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LeaderboardRow& a, const LeaderboardRow& b) {
    const auto& x = a.tokens_per_s_per_gpu;
    const auto& y = b.tokens_per_s_per_gpu;
    if (x.has_value() != y.has_value()) return x.has_value();
    if (x && y && *x != *y) return *x > *y;
    return a.order < b.order;
  });
  return rows;
}

}  // namespace

std::vector<LeaderboardRow> Leaderboard(const CampaignState& state) {
  return LeaderboardOf(state, Lookup(state));
}

json DashboardSummary(const CampaignState& state) {
  auto q = QuoteSpeedup(state);
  const Recipe* leader = state.RecipeOf(state.leader_id);
  json steps = json::array();
  for (const auto& st : state.steps) {
    steps.push_back({{"id", st.id},
                     {"uses", st.uses},
                     {"started", st.started},
                     {"finished", st.finished},
                     {"outcome", st.outcome}});
  }
  return {{"campaign_id", state.campaign_id},
          {"stack", state.stack_name},
          {"launcher", state.launcher_name},
          {"agent", state.agent_name},
          {"finished", state.finished},
          {"paused", state.paused},
          {"pause_reason", state.pause_reason},
          {"leader", state.leader_id},
          {"leader_lever", LeverOf(state, state.leader_id)},
          {"leader_change", leader && state.leader_id != events::kBaselineId
                                ? DescribeChanges(Diff(state.baseline, *leader))
                                : ""},
          {"speedup", q ? json(q->median) : json()},
          {"speedup_verified", q && q->pairs > 0},
          {"speedup_caveat", q ? q->Caveat() : ""},
          {"events", state.last_seq},
          {"candidates", state.candidates.size()},
          {"jobs", state.jobs.size()},
          {"failed_jobs", state.FailedJobs()},
          {"jobs_in_flight", state.InFlightJobs().size()},
          {"steps", steps},
          {"budget",
           {{"total_gpu_hours", state.ledger.total},
            {"charged_gpu_hours", state.ledger.charged},
            {"reserved_gpu_hours", state.ledger.reserved},
            {"left_gpu_hours", state.ledger.Left()}}}};
}

json DashboardCampaign(const CampaignState& state) {
  const Lookup lookup(state);
  json runs = json::array();
  for (const auto& j : state.jobs) {
    if (IsChartedRun(j)) runs.push_back(RunJson(lookup, j));
  }
  std::stable_sort(runs.begin(), runs.end(), [](const json& a, const json& b) {
    return a.at("gpu_hours_after").get<double>() < b.at("gpu_hours_after").get<double>();
  });
  return {{"summary", DashboardSummary(state)},
          {"baseline_tokens_per_s_per_gpu", OptionalNumber(BaselineTps(state))},
          {"runs", runs},
          {"leader_steps", LeaderSteps(state, lookup)},
          {"leaderboard", LeaderboardJson(state, LeaderboardOf(state, lookup))},
          {"burn_down", BurnDown(state)},
          {"tree", Tree(state, lookup)}};
}

std::optional<json> DashboardCandidate(const CampaignState& state, const std::string& id) {
  const Recipe* recipe = state.RecipeOf(id);
  const auto* c = state.FindCandidate(id);
  if (id != events::kBaselineId && !c) return std::nullopt;
  json out = {{"candidate", id},
              {"leader", state.leader_id == id},
              {"verdict", id == events::kBaselineId
                              ? (state.leader_id == id ? "baseline, leader" : "baseline")
                              : ri::VerdictText(state, *c)},
              {"diagnosis", DiagnosesJson(state.DiagnosisOf(id))},
              {"profile", ProfileOf(state, id)},
              {"paired_loss", PairedLossOf(state, id)}};
  auto m = state.MeasurementOf(id);
  out["measurement"] = m ? MeasurementToJson(*m) : json();
  json jobs = json::array();
  for (const auto& j : state.jobs) {
    if (j.candidate == id) jobs.push_back(JobJson(j));
  }
  out["jobs"] = jobs;
  if (!c) {
    out["changes_vs_baseline"] = json::array();
    return out;
  }
  out["index"] = c->index;
  out["parent"] = c->base_id;
  out["lever"] = c->lever_id;
  out["rationale"] = c->rationale;
  out["changes"] = ChangesJson(c->changes);
  out["changes_vs_baseline"] = ChangesAgainst(&state.baseline, recipe);
  out["changes_vs_parent"] = ChangesAgainst(state.RecipeOf(c->base_id), recipe);
  out["apply_error"] = c->apply_error;
  out["outcome"] = OutcomeName(c->outcome);
  out["gate"] = {{"checked", c->gated},
                 {"pass", c->gate_pass},
                 {"rule", c->rule_id},
                 {"reason", c->gate_reason}};
  out["tokens_per_s_per_gpu"] = OptionalNumber(c->tokens_per_s_per_gpu);
  out["speedup_vs_baseline"] = OptionalNumber(c->speedup_vs_baseline);
  out["speedup_vs_leader"] = OptionalNumber(c->speedup_vs_leader);
  return out;
}

}  // namespace attune
