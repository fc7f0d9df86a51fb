// throughput.svg, written by hand: tokens/s/GPU of every tuning run against the GPU-hours spent
// so far. The leader is a step line; successful runs are dots; failed runs are crosses on the
// x axis. Numbers are printed with fixed decimals so the file is byte-stable.
#include <algorithm>

#include <fmt/format.h>

#include "campaign/events.h"
#include "report/report.h"

namespace attune {
namespace {

constexpr double kWidth = 720, kHeight = 420, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;

struct Scale {
  double max_x = 1, max_y = 1;
  double X(double v) const { return kLeft + v / max_x * (kWidth - kLeft - kRight); }
  double Y(double v) const { return kHeight - kBottom - v / max_y * (kHeight - kTop - kBottom); }
};

bool IsTuningRun(const JobRecord& j) {
  return j.finished && !j.cancelled_by_engine &&
         IsTuning(j.purpose);
}

Scale MakeScale(const CampaignState& state) {
  Scale s;
  for (const auto& j : state.jobs) {
    if (!IsTuningRun(j)) continue;
    s.max_x = std::max(s.max_x == 1 ? 0.0 : s.max_x, j.charged_total_after);
    if (j.measurement && !j.failure) s.max_y = std::max(s.max_y, j.measurement->tokens_per_s_per_gpu);
  }
  if (s.max_x <= 0) s.max_x = 1;
  s.max_y *= 1.15;
  return s;
}

std::string Axes(const Scale& s) {
  std::string out = fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#333\"/>\n"
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{3:.1f}\" stroke=\"#333\"/>\n",
      kLeft, kHeight - kBottom, kWidth - kRight, kTop);
  for (int i = 0; i <= 4; ++i) {
    const double xv = s.max_x * i / 4, yv = s.max_y * i / 4;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{:.3f}</text>\n",
                       s.X(xv), kHeight - kBottom + 16, xv);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{:.0f}</text>\n",
                       kLeft - 6, s.Y(yv) + 4, yv);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">cumulative GPU-hours</text>\n",
                     (kLeft + kWidth - kRight) / 2, kHeight - 12);
  out += fmt::format("<text x=\"14\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 14 {:.1f})\">tokens/s/GPU</text>\n",
                     kHeight / 2, kHeight / 2);
  return out;
}

std::string LeaderLine(const CampaignState& state, const Scale& s) {
  auto base = state.MeasurementOf(events::kBaselineId);
  if (!base) return "";
  std::string points = fmt::format("{:.1f},{:.1f}", s.X(0), s.Y(base->tokens_per_s_per_gpu));
  double y = base->tokens_per_s_per_gpu;
  for (const auto& c : state.candidates) {
    if (c.outcome != Outcome::kNewLeader &&
        !(c.outcome == Outcome::kPairedLossMismatch && c.tokens_per_s_per_gpu)) {
      continue;
    }
    if (!c.tokens_per_s_per_gpu || c.jobs.empty()) continue;
    const auto* j = state.FindJob(c.jobs.back());
    if (!j || !j->finished) continue;
    points += fmt::format(" {:.1f},{:.1f} {:.1f},{:.1f}", s.X(j->charged_total_after), s.Y(y),
                          s.X(j->charged_total_after), s.Y(*c.tokens_per_s_per_gpu));
    y = *c.tokens_per_s_per_gpu;
  }
  points += fmt::format(" {:.1f},{:.1f}", s.X(s.max_x), s.Y(y));
  return "<polyline fill=\"none\" stroke=\"#2a7\" stroke-width=\"2\" points=\"" + points + "\"/>\n";
}

std::string Runs(const CampaignState& state, const Scale& s) {
  std::string out;
  for (const auto& j : state.jobs) {
    if (!IsTuningRun(j)) continue;
    const double x = s.X(j.charged_total_after);
    if (j.measurement && !j.failure) {
      const char* color = j.purpose == JobPurpose::kBaseline ? "#888" : "#36c";
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}</title></circle>\n",
                         x, s.Y(j.measurement->tokens_per_s_per_gpu), color, j.name);
    } else {
      const double y = s.Y(0);
      out += fmt::format("<path d=\"M{:.1f},{:.1f} L{:.1f},{:.1f} M{:.1f},{:.1f} L{:.1f},{:.1f}\" "
                         "stroke=\"#c33\" stroke-width=\"2\"><title>{}</title></path>\n",
                         x - 5, y - 5, x + 5, y + 5, x - 5, y + 5, x + 5, y - 5, j.name);
    }
  }
  return out;
}

}  // namespace

std::string RenderThroughputSvg(const CampaignState& state) {
  const Scale s = MakeScale(state);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\">\n",
      kWidth, kHeight, kWidth, kHeight);
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += fmt::format("<text x=\"{:.1f}\" y=\"22\" font-size=\"14\" text-anchor=\"middle\">"
                     "campaign {}: throughput vs GPU-hours (line: leader, dots: runs, crosses: failures)</text>\n",
                     kWidth / 2, state.campaign_id);
  out += Axes(s);
  out += LeaderLine(state, s);
  out += Runs(state, s);
  out += "</svg>\n";
  return out;
}

}  // namespace attune
