// Copyright attune authors.
//
// The per-rank time breakdown as a table (Markdown) and a stacked-bar chart (SVG): what the
// campaign report shows for a profiled run and `attune profile analyze --markdown/--svg` writes.
// The bars are a compact value (JSON round-trip) so that a campaign can record them in an event
// and render them again on replay. Pure functions; byte-stable output (fixed decimals).
#ifndef ATTUNE_ENGINE_PROFILE_BREAKDOWN_CHART_H_
#define ATTUNE_ENGINE_PROFILE_BREAKDOWN_CHART_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/profile.h"

namespace attune::profile {

// One rank's window split into parts that add up to it (nanoseconds):
//   compute, then communication not overlapped by compute, then memory copies/sets overlapped by
//   neither, then idle waiting for kernel launches, then other idle.
struct RankBar {
  std::string label;  // "rank 3", or the file when the rank is unknown
  std::string basis;  // BasisName
  int64_t window_ns = 0;
  int64_t compute_ns = 0;
  int64_t exposed_communication_ns = 0;
  int64_t memory_only_ns = 0;
  int64_t launch_bound_idle_ns = 0;
  int64_t other_idle_ns = 0;
};

std::vector<RankBar> BarsOf(const ProfileReport& report);
nlohmann::json BarsToJson(const std::vector<RankBar>& bars);
// Inverse of BarsToJson; missing fields read as 0.
std::vector<RankBar> BarsFromJson(const nlohmann::json& j);

// | rank | window ms | compute | exposed comm | memory | launch-bound idle | other idle |
std::string RenderBreakdownMarkdown(const std::vector<RankBar>& bars);
// One horizontal bar per rank, each scaled to its own window (percent axis), with a legend.
std::string RenderBreakdownSvg(const std::vector<RankBar>& bars);

}  // namespace attune::profile

#endif  // ATTUNE_ENGINE_PROFILE_BREAKDOWN_CHART_H_
