// Copyright attune authors.
//
// The campaign's human-facing output: RESULTS.md (leaderboard), REPORT.md (what to ship and why),
// throughput.svg (throughput against cumulative GPU-hours) and lessons.md (for future campaigns,
// in the format of skill/past_tuning_projects/README.md).
//
// Every renderer is a pure function of the folded state (and of the launch command the stack
// rendered for the leader, itself deterministic): no wall-clock value appears, so a replayed
// campaign writes byte-identical files.
#ifndef ATTUNE_ENGINE_REPORT_REPORT_H_
#define ATTUNE_ENGINE_REPORT_REPORT_H_

#include <map>
#include <string>

#include "attune/status.h"
#include "campaign/campaign_state.h"

namespace attune {

std::string RenderResults(const CampaignState& state);
// `launch_command`: the leader's launch as a shell command ("" when the stack could not render it).
std::string RenderReport(const CampaignState& state, const std::string& launch_command);
std::string RenderThroughputSvg(const CampaignState& state);
std::string RenderLessons(const CampaignState& state);
// report.html: the dashboard's campaign page with its script, styles, charting library and data
// inlined, read from `web_dir` (DefaultDataDir()/web); opens from disk with no network. Without
// the charting library the charts say so and the tables still show.
std::string RenderReportHtml(const CampaignState& state, const std::string& web_dir);

// REPORT.md's "Profile" section ("" when no profile step ran) and the per-rank breakdown of the
// last analysed profiled run as a stacked-bar chart ("" when there is none).
std::string ProfileSection(const CampaignState& state);
std::string RenderProfileSvg(const CampaignState& state);
// The last profiled run with an analysis, or nullptr.
const ProfileRecord* LatestProfile(const CampaignState& state);

// All report files by name (RESULTS.md, REPORT.md, throughput.svg, lessons.md, report.html, and
// profile.svg when a profiled run was analysed).
std::map<std::string, std::string> RenderAllReports(const CampaignState& state,
                                                    const std::string& launch_command);

// Writes `content` to `path` atomically: a temporary file in the same directory, fsync, rename.
Status WriteFileAtomic(const std::string& path, const std::string& content);

// The speedup the report quotes: the verified paired median when the verify step ran, else the
// leader's tuning-time throughput over the baseline's. nullopt without both measurements.
struct QuotedSpeedup {
  double median = 1;
  double min = 1;
  double max = 1;
  int pairs = 0;  // 0 when not from paired runs
  // Paired runs where the leader ran no faster than the baseline.
  int pairs_not_faster = 0;
  // The campaign's noise band when it was quoted (NoiseBand of the baseline's runs).
  double noise_band = 0;

  // Why the paired runs do not establish the speedup, or "" when they do (or were not made): some
  // pair ran the leader no faster than the baseline, or the median lies inside the noise band.
  // Users ship on the number; a speedup one quiet pair made and another reversed is not one.
  std::string Caveat() const;
};
std::optional<QuotedSpeedup> QuoteSpeedup(const CampaignState& state);

}  // namespace attune

#endif  // ATTUNE_ENGINE_REPORT_REPORT_H_
