// Copyright attune authors.
//
// REPORT.md's "Profile" section and profile.svg: the analyses the profile step recorded
// (ProfileAnalyzed), rendered from the folded state alone.
#include <fmt/format.h>

#include "profile/breakdown_chart.h"
#include "report/report.h"
#include "report/report_util.h"

namespace attune {

namespace ri = report_internal;

const ProfileRecord* LatestProfile(const CampaignState& state) {
  for (auto it = state.profiles.rbegin(); it != state.profiles.rend(); ++it) {
    if (it->error.empty()) return &*it;
  }
  return nullptr;
}

std::string ProfileSection(const CampaignState& state) {
  if (state.profiles.empty()) return "";
  std::string out = "\n## Profile\n\n";
  for (const ProfileRecord& p : state.profiles) {
    if (!p.error.empty()) {
      out += fmt::format("- `{}` (of {}): no analysis: {}\n", p.job, p.candidate, p.error);
      continue;
    }
    out += fmt::format("Profiled run `{}` of {} ({} trace file(s)); each rank's window split into "
                       "parts that add up to it:\n\n",
                       p.job, p.candidate, p.traces);
    out += profile::RenderBreakdownMarkdown(profile::BarsFromJson(p.bars));
    if (p.diagnoses.empty()) {
      out += "\nThe profile shows nothing that limits the run beyond its compute.\n\n";
    } else {
      out += "\nWhat it shows (the agents read this with the leader's diagnosis):\n\n";
      for (const Diagnosis& d : p.diagnoses) {
        out += fmt::format("- {} (severity {}): {}\n", d.kind, ri::Fixed(d.severity, 2), d.evidence);
      }
      out += "\n";
    }
  }
  if (LatestProfile(state)) out += "The breakdown of the last analysed run is drawn in `profile.svg`.\n";
  return out;
}

std::string RenderProfileSvg(const CampaignState& state) {
  const ProfileRecord* p = LatestProfile(state);
  return p ? profile::RenderBreakdownSvg(profile::BarsFromJson(p->bars)) : "";
}

}  // namespace attune
