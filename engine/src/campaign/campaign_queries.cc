// Derived queries over the folded state. Pure functions of the state.
#include <algorithm>
#include <cstdio>

#include "campaign/campaign_state.h"
#include "campaign/events.h"

namespace attune {

const StepRecord* CampaignState::FindStep(const std::string& id) const {
  for (const auto& s : steps) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

const JobRecord* CampaignState::FindJob(const std::string& name) const {
  for (const auto& j : jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

int CampaignState::CountedJobsOf(const CandidateRecordState& c) const {
  int n = 0;
  for (const auto& name : c.jobs) {
    const JobRecord* j = FindJob(name);
    if (j && j->Counts()) ++n;
  }
  return n;
}

const CandidateRecordState* CampaignState::FindCandidate(const std::string& id) const {
  for (const auto& c : candidates) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::vector<const JobRecord*> CampaignState::InFlightJobs() const {
  std::vector<const JobRecord*> out;
  for (const auto& j : jobs) {
    if (j.InFlight()) out.push_back(&j);
  }
  return out;
}

const Recipe* CampaignState::RecipeOf(const std::string& id) const {
  if (id == events::kBaselineId) return &baseline;
  const auto* c = FindCandidate(id);
  return c && c->recipe ? &*c->recipe : nullptr;
}

std::vector<const JobRecord*> CampaignState::JobsOf(const std::string& id,
                                                   JobPurpose purpose) const {
  std::vector<const JobRecord*> out;
  for (const auto& j : jobs) {
    if (j.candidate == id && j.purpose == purpose && j.Counts()) out.push_back(&j);
  }
  return out;
}

std::vector<Measurement> CampaignState::MeasurementsOf(const std::string& id,
                                                       std::optional<JobPurpose> purpose) const {
  std::vector<Measurement> out;
  for (const auto& j : jobs) {
    if (j.candidate != id || !j.Counts() || !j.measurement || j.failure) continue;
    if (purpose ? j.purpose == *purpose : IsTuning(j.purpose)) out.push_back(*j.measurement);
  }
  return out;
}

namespace {

// Index of the run with the median throughput (the lower one of an even count), so that the
// representative measurement is a real run with its own losses and memory.
template <typename Runs, typename Tps>
std::optional<size_t> MedianRunIndex(const Runs& runs, Tps tps) {
  if (runs.empty()) return std::nullopt;
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tps(runs[a]) < tps(runs[b]); });
  return order[(order.size() - 1) / 2];
}

}  // namespace

std::optional<Measurement> CampaignState::MeasurementOf(const std::string& id) const {
  auto runs = MeasurementsOf(id);
  auto i = MedianRunIndex(runs, [](const Measurement& m) { return m.tokens_per_s_per_gpu; });
  if (!i) return std::nullopt;
  return runs[*i];
}

std::vector<Diagnosis> CampaignState::DiagnosisOf(const std::string& id) const {
  std::vector<const JobRecord*> runs;
  for (const auto& j : jobs) {
    if (j.candidate == id && IsTuning(j.purpose) && j.Counts() && j.measurement && !j.failure) runs.push_back(&j);
  }
  auto i = MedianRunIndex(runs, [](const JobRecord* j) { return j->measurement->tokens_per_s_per_gpu; });
  if (!i) return {};
  return runs[*i]->diagnosis;
}

std::vector<Diagnosis> CampaignState::ProfileDiagnosisOf(const std::string& id) const {
  for (auto it = profiles.rbegin(); it != profiles.rend(); ++it) {
    if (it->candidate != id || !it->error.empty()) continue;
    std::vector<Diagnosis> out = it->diagnoses;
    for (Diagnosis& d : out) d.evidence = "profile: " + d.evidence;
    return out;
  }
  return {};
}

std::string CampaignState::PreviousLeader() const {
  // Walk back through the leader history, skipping leaders that were reverted.
  std::vector<std::string> chain{events::kBaselineId};
  for (const auto& c : leader_changes) {
    if (c.reason == "paired_loss_mismatch") {
      while (chain.size() > 1 && chain.back() != c.to) chain.pop_back();
    } else {
      chain.push_back(c.to);
    }
  }
  return chain.size() >= 2 ? chain[chain.size() - 2] : std::string(events::kBaselineId);
}

int CampaignState::FailedJobs() const {
  int n = 0;
  for (const auto& j : jobs) {
    if (j.Counts() && j.failure) ++n;
  }
  return n;
}

int CampaignState::NextAttempt(const std::string& candidate, JobPurpose purpose, int pair) const {
  int n = 0;
  for (const auto& j : jobs) {
    if (j.candidate == candidate && j.purpose == purpose && j.pair == pair) ++n;
  }
  return n + 1;
}

double CampaignState::TimeLimitForNextJob() const {
  if (settings.time_limit_factor <= 0) return settings.job_time_limit_s;
  double longest = 0;
  for (const auto& j : jobs) {
    if (j.candidate != events::kBaselineId || !j.Counts() || !j.measurement) continue;
    if (j.purpose == JobPurpose::kProfile) continue;  // the profiler's overhead is not the run's
    const double start = j.status.value("start_time", -1.0), end = j.status.value("end_time", -1.0);
    if (start < 0 || end <= start) continue;
    double ran = end - start;
    if (j.stopped_early) {
      // A run stopped early stands for the whole benchmark run it would have been: its time scaled
      // by planned ÷ logged iterations (start-up scaled too, so on the long side). Unknown without a
      // planned length; such a run leaves the limit as configured.
      const nlohmann::json p = j.stop.value("planned_iterations", nlohmann::json());
      const double planned = p.is_number() ? p.get<double>() : 0.0;
      const double logged = std::max(j.stop.value("last_iteration", 0.0), j.stop.value("iterations_logged", 0.0));
      if (!(planned > 0 && logged > 0)) continue;
      ran *= std::max(1.0, planned / logged);
    }
    longest = std::max(longest, ran);
  }
  if (longest <= 0) return settings.job_time_limit_s;  // the baseline has not measured yet
  return std::min(settings.job_time_limit_s, std::max(kMinDerivedTimeLimitS, settings.time_limit_factor * longest));
}

double CampaignState::ReservationFor(int devices) const {
  return devices * TimeLimitForNextJob() / 3600.0;
}

std::string CampaignState::CandidateId(int index) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "c%03d", index);
  return buf;
}

}  // namespace attune
