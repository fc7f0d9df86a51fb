#include "report/report_util.h"

#include <fmt/format.h>

#include "campaign/events.h"

namespace attune::report_internal {

std::string Percent(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

std::string Times(double ratio) { return fmt::format("{:.3f}x", ratio); }

std::string Fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string ChangeText(const CampaignState& state, const std::string& id) {
  const auto* c = state.FindCandidate(id);
  if (!c) return "";
  return DescribeChanges(c->changes);
}

double ChargedFor(const CampaignState& state, const std::string& id) {
  double total = 0;
  for (const auto& j : state.jobs) {
    if (j.candidate == id && j.finished) total += j.charged_gpu_hours;
  }
  return total;
}

std::string VerdictText(const CampaignState& state, const CandidateRecordState& c) {
  return VerdictText(state, c, [&state](const std::string& name) { return state.FindJob(name); });
}

std::string VerdictText(const CampaignState& state, const CandidateRecordState& c,
                        const std::function<const JobRecord*(const std::string&)>& find_job) {
  if (c.outcome == Outcome::kRefused) return "refused (" + c.rule_id + ")";
  if (c.outcome == Outcome::kFailed) {
    for (const auto& name : c.jobs) {
      const auto* j = find_job(name);
      if (j && j->failure) return std::string("failed (") + FailureKindName(j->failure->kind) + ")";
    }
    return "failed";
  }
  if (c.id == state.leader_id) return std::string(OutcomeName(c.outcome)) + ", leader";
  return OutcomeName(c.outcome);
}

}  // namespace attune::report_internal
