// The agent's view: everything it may read, built from the folded state and the stack's
// deterministic answers. Lessons of past campaigns are read from the data directory; the agent's
// answer is recorded, so what it read never needs to be read again on replay.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "campaign/events.h"
#include "measure/measure.h"
#include "steps/job_driver.h"
#include "steps/steps.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLessonsBytes = 64 * 1024;

std::string ReadLessons(const std::string& data_dir) {
  const fs::path dir = fs::path(data_dir) / "skill" / "past_tuning_projects";
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".md" && entry.path().filename() != "README.md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    text += "<!-- " + f.filename().string() + " -->\n" + ss.str() + "\n";
    if (text.size() > kMaxLessonsBytes) break;
  }
  return text.substr(0, kMaxLessonsBytes);
}

CandidateRecord ToRecord(const CampaignState& s, const CandidateRecordState& c) {
  CandidateRecord r;
  r.index = c.index;
  r.candidate_id = c.id;
  r.base_id = c.base_id;
  r.changes = c.changes;
  r.lever_id = c.lever_id;
  r.rationale = c.rationale;
  r.outcome = c.outcome;
  r.rule_id = c.rule_id;
  r.measurement = s.MeasurementOf(c.id);
  for (const auto& name : c.jobs) {
    const JobRecord* j = s.FindJob(name);
    if (j && j->Counts() && j->failure && !r.failure) r.failure = j->failure;
  }
  r.speedup_vs_baseline = c.speedup_vs_baseline;
  r.agent_meta = c.meta;
  return r;
}

double JobCostEstimate(const RunContext& ctx, const Recipe& leader) {
  const CampaignState& s = ctx.state;
  double charged = 0;
  int n = 0;
  for (const auto& j : s.jobs) {
    if (j.finished && j.charged_gpu_hours > 0) {
      charged += j.charged_gpu_hours;
      ++n;
    }
  }
  return n > 0 ? charged / n : JobReservation(ctx, leader);
}

// The parents (ParentIds) with their recipes, measurements, diagnoses and legal moves.
std::vector<ParentView> Parents(const RunContext& ctx) {
  const CampaignState& s = ctx.state;
  std::vector<ParentView> out;
  for (const std::string& id : ParentIds(s)) {
    ParentView p;
    p.id = id;
    p.recipe = *s.RecipeOf(id);
    p.measurement = *s.MeasurementOf(id);
    out.push_back(std::move(p));
  }
  for (ParentView& p : out) {
    p.diagnosis = s.DiagnosisOf(p.id);
    for (Diagnosis& d : s.ProfileDiagnosisOf(p.id)) p.diagnosis.push_back(std::move(d));
    p.legal_moves = ctx.stack->LegalMoves(p.recipe, s.cluster);
  }
  return out;
}

}  // namespace

void FindUnlocks(const Stack& stack, const Recipe& recipe, const ClusterInfo& cluster,
                 std::vector<Move>* moves) {
  std::set<std::string> offered;
  for (const Move& m : *moves) offered.insert(m.lever_id);
  for (Move& m : *moves) {
    m.unlocks.clear();
    Recipe after = recipe;
    if (!ApplyChanges(&after, m.changes).ok()) continue;
    std::set<std::string> own;
    for (const Change& c : m.changes) own.insert(c.key);
    for (Move& next : stack.LegalMoves(after, cluster)) {
      if (offered.count(next.lever_id) > 0 || next.lever_id == m.lever_id) continue;
      bool touches = false;
      for (const Change& c : next.changes) touches = touches || own.count(c.key) > 0;
      if (touches) continue;
      next.unlocks.clear();
      m.unlocks.push_back(std::move(next));
    }
  }
}

std::vector<std::string> ParentIds(const CampaignState& s) {
  std::vector<std::pair<std::string, double>> measured;  // (id, tokens/s/GPU), baseline first
  std::vector<std::string> ids{events::kBaselineId};
  for (const auto& c : s.candidates) ids.push_back(c.id);
  for (const std::string& id : ids) {
    if (id == s.leader_id || !ParentRefusal(s, id).empty()) continue;
    measured.emplace_back(id, s.MeasurementOf(id)->tokens_per_s_per_gpu);
  }
  std::vector<std::pair<std::string, double>> fastest = measured;
  std::stable_sort(fastest.begin(), fastest.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (fastest.size() > static_cast<size_t>(kMaxParents)) fastest.resize(kMaxParents);
  std::vector<std::string> out;
  for (const auto& [id, tps] : fastest) out.push_back(id);
  // Then the measured last (candidates are measured in proposal order), most recent first.
  int recent = 0;
  for (auto it = measured.rbegin(); it != measured.rend() && recent < kRecentParents; ++it) {
    if (std::find(out.begin(), out.end(), it->first) != out.end()) continue;
    out.push_back(it->first);
    ++recent;
  }
  return out;
}

std::string ParentRefusal(const CampaignState& s, const std::string& id) {
  if (!s.RecipeOf(id)) return "'" + id + "' is not a candidate of this campaign";
  if (id != events::kBaselineId) {
    const CandidateRecordState* c = s.FindCandidate(id);
    if (!c || !c->ranked) return "'" + id + "' is not ranked yet";
    if (c->outcome != Outcome::kSlower && c->outcome != Outcome::kWithinNoise &&
        c->outcome != Outcome::kNewLeader) {
      return "'" + id + "' was " + OutcomeName(c->outcome) +
             " (a base must be measured: slower, within_noise or new_leader)";
    }
  }
  if (!s.MeasurementOf(id)) return "'" + id + "' has no measurement";
  return "";
}

CampaignView BuildCampaignView(const RunContext& ctx, int max_candidates) {
  const CampaignState& s = ctx.state;
  CampaignView v;
  v.campaign_id = s.campaign_id;
  v.campaign_dir = ctx.log->dir();
  v.stack = s.stack_name;
  v.cluster = s.cluster;
  v.baseline = s.baseline;
  v.baseline_measurement = s.MeasurementOf(events::kBaselineId);
  const Recipe* leader = s.RecipeOf(s.leader_id);
  v.leader = leader ? *leader : s.baseline;
  v.leader_id = s.leader_id;
  v.leader_measurement = s.MeasurementOf(s.leader_id);
  v.diagnosis = s.DiagnosisOf(s.leader_id);
  for (Diagnosis& d : s.ProfileDiagnosisOf(s.leader_id)) v.diagnosis.push_back(std::move(d));
  for (const auto& c : s.candidates) v.history.push_back(ToRecord(s, c));
  v.levers = ctx.stack->Levers();
  v.legal_moves = ctx.stack->LegalMoves(v.leader, s.cluster);
  const std::string leader_key = RecipeToJson(v.leader).dump();
  auto known = ctx.unlocks_by_leader.find(leader_key);
  if (known != ctx.unlocks_by_leader.end() && known->second.size() == v.legal_moves.size()) {
    for (size_t i = 0; i < v.legal_moves.size(); ++i) v.legal_moves[i].unlocks = known->second[i];
  } else {
    FindUnlocks(*ctx.stack, v.leader, s.cluster, &v.legal_moves);
    if (ctx.unlocks_by_leader.size() >= 16) ctx.unlocks_by_leader.clear();
    std::vector<std::vector<Move>>& unlocks = ctx.unlocks_by_leader[leader_key];
    for (const Move& m : v.legal_moves) unlocks.push_back(m.unlocks);
  }
  v.parents = Parents(ctx);
  v.budget_total_gpu_hours = s.ledger.total;
  v.budget_left_gpu_hours = s.ledger.Left();
  v.job_cost_estimate_gpu_hours = JobCostEstimate(ctx, v.leader);
  std::vector<Measurement> runs = s.MeasurementsOf(s.leader_id);
  if (runs.size() < 2) runs = s.MeasurementsOf(events::kBaselineId);
  v.noise_band = NoiseBand(s.settings.noise_band, runs);
  v.proposal_index = static_cast<int>(s.candidates.size()) + 1;
  v.candidates_left = std::max(0, max_candidates - static_cast<int>(s.candidates.size()));
  v.lessons = ReadLessons(ctx.data_dir);
  v.seed = s.seed + static_cast<uint64_t>(v.proposal_index);
  return v;
}

}  // namespace attune
