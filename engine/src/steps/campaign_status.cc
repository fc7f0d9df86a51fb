// `attune status`: the folded state of a campaign as JSON, read without the lock, and its human
// form.
#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "campaign/events.h"
#include "log/event_log.h"
#include "report/report.h"
#include "steps/campaign_runner.h"

namespace attune {

using nlohmann::json;

namespace {

std::string StepStatus(const StepRecord& s) {
  if (s.finished) return s.outcome == "skipped" ? "skipped" : "done";
  return s.started ? "running" : "pending";
}

json StatusOf(const CampaignState& s) {
  json steps = json::array(), in_flight = json::array();
  for (const auto& st : s.steps) {
    steps.push_back(json{{"id", st.id}, {"uses", st.uses}, {"status", StepStatus(st)}, {"outcome", st.outcome}});
  }
  for (const auto* j : s.InFlightJobs()) {
    in_flight.push_back(json{{"job", j->name}, {"candidate", j->candidate}, {"submitted", j->submitted},
                             {"reserved_gpu_hours", j->reserved_gpu_hours}});
  }
  auto q = QuoteSpeedup(s);
  const auto* leader = s.FindCandidate(s.leader_id);
  // A baseline whose runs all ended without a measurement, said plainly with the last failure.
  json baseline_failed;
  const auto baseline_jobs = s.JobsOf(events::kBaselineId, JobPurpose::kBaseline);
  const bool any_finished = std::any_of(baseline_jobs.begin(), baseline_jobs.end(),
                                        [](const JobRecord* j) { return j->Counts(); });
  if (any_finished && !s.MeasurementOf(events::kBaselineId)) {
    baseline_failed = json{{"runs", baseline_jobs.size()}};
    for (const JobRecord* j : baseline_jobs) {
      if (j->failure) baseline_failed["failure"] = FailureToJson(*j->failure);
    }
  }
  return json{{"campaign_id", s.campaign_id},
              {"baseline_failed", baseline_failed},
              {"stack", s.stack_name},
              {"launcher", s.launcher_name},
              {"agent", s.agent_name},
              {"events", s.last_seq},
              {"state", s.finished ? "finished" : s.paused ? "paused" : "running_or_interrupted"},
              {"steps", steps},
              {"leader", s.leader_id},
              {"leader_change", leader && leader->recipe ? DescribeChanges(Diff(s.baseline, *leader->recipe)) : ""},
              {"speedup", q ? json(q->median) : json()},
              {"speedup_verified", q && q->pairs > 0},
              {"speedup_caveat", q ? q->Caveat() : ""},
              {"candidates", s.candidates.size()},
              {"jobs", s.jobs.size()},
              {"failed_jobs", s.FailedJobs()},
              {"jobs_in_flight", in_flight},
              {"budget", {{"total_gpu_hours", s.ledger.total},
                          {"charged_gpu_hours", s.ledger.charged},
                          {"reserved_gpu_hours", s.ledger.reserved},
                          {"left_gpu_hours", s.ledger.Left()}}}};
}

}  // namespace

Result<json> CampaignStatusJson(const std::string& campaign_dir) {
  EventLogOptions lo;
  lo.create_if_missing = false;
  lo.read_only = true;
  ATTUNE_ASSIGN_OR_RETURN(auto log, EventLog::Open(campaign_dir, lo));
  ATTUNE_ASSIGN_OR_RETURN(auto records, log->ReadFrom(1));
  if (records.empty()) return Status::NotFound("campaign directory " + campaign_dir + " holds no events");
  ATTUNE_ASSIGN_OR_RETURN(auto state, CampaignState::Fold(records));
  return StatusOf(state);
}

void PrintCampaignStatus(const json& s, std::ostream& out) {
  out << fmt::format("campaign {} ({}): {} on {}, agent {}\n", s.value("campaign_id", ""),
                     s.value("state", ""), s.value("stack", ""), s.value("launcher", ""), s.value("agent", ""));
  for (const auto& st : s.value("steps", json::array())) {
    out << fmt::format("  step {:<12} {:<8} {}\n", st.value("id", ""), st.value("status", ""), st.value("outcome", ""));
  }
  const std::string caveat = s.value("speedup_caveat", "");
  std::string speed = s.contains("speedup") && s.at("speedup").is_number()
                          ? fmt::format("{:.3f}x{}{}", s.at("speedup").get<double>(),
                                        s.value("speedup_verified", false) ? " (verified)" : "",
                                        caveat.empty() ? "" : "; " + caveat)
                          : "n/a";
  if (s.contains("baseline_failed") && s.at("baseline_failed").is_object()) {
    const json& bf = s.at("baseline_failed");
    const json f = bf.value("failure", json::object());
    out << fmt::format("  the baseline was never measured ({} run(s) failed): {}: {}\n", bf.value("runs", 0),
                       f.value("kind", "unknown"), f.value("evidence", ""));
    if (!f.value("hint", "").empty()) out << "    what to do: " << f.value("hint", "") << "\n";
    out << "    nothing was compared and nothing is recommended; fix the recipe and start a new campaign\n";
  } else {
    out << fmt::format("  leader {} {}; speedup {}\n", s.value("leader", ""), s.value("leader_change", ""), speed);
  }
  const json b = s.value("budget", json::object());
  out << fmt::format("  budget: {:.4f} charged + {:.4f} reserved of {:.4f} GPU-hours; {:.4f} left\n",
                     b.value("charged_gpu_hours", 0.0), b.value("reserved_gpu_hours", 0.0),
                     b.value("total_gpu_hours", 0.0), b.value("left_gpu_hours", 0.0));
  out << fmt::format("  {} candidates, {} jobs ({} failed), {} in flight\n", s.value("candidates", 0),
                     s.value("jobs", 0), s.value("failed_jobs", 0), s.value("jobs_in_flight", json::array()).size());
  for (const auto& j : s.value("jobs_in_flight", json::array())) {
    out << "    in flight: " << j.value("job", "") << (j.value("submitted", false) ? "" : " (not yet submitted)") << "\n";
  }
}

}  // namespace attune
