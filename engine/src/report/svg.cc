// throughput.svg, written by hand: tokens/s/GPU of every tuning run against the GPU-hours spent
// so far. The leader is a step line labelled with the lever of each step; successful runs are
// dots; failed runs are crosses on the x axis. Axes have "nice" ticks (1, 2 or 5 times a power of
// ten); everything plotted is clipped to the plot area; the title is shortened to fit; a legend
// says what each mark is. Numbers are printed with fixed decimals so the file is byte-stable.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "attune/support/markup.h"
#include "campaign/events.h"
#include "report/report.h"
#include "report/svg_axis.h"

namespace attune {
namespace {

constexpr double kWidth = 720, kHeight = 440, kLeft = 72, kRight = 24, kTop = 62, kBottom = 50;
constexpr double kTitleFont = 14;
constexpr size_t kMaxLabelChars = 18;

struct Scale {
  NiceAxis x, y;
  double X(double v) const { return kLeft + v / x.max * (kWidth - kLeft - kRight); }
  double Y(double v) const { return kHeight - kBottom - v / y.max * (kHeight - kTop - kBottom); }
};

bool IsTuningRun(const JobRecord& j) {
  return j.finished && !j.cancelled_by_engine && IsTuning(j.purpose);
}

Scale MakeScale(const CampaignState& state) {
  double max_x = 0, max_y = 0;
  for (const auto& j : state.jobs) {
    if (!IsTuningRun(j)) continue;
    max_x = std::max(max_x, j.charged_total_after);
    if (j.measurement && !j.failure) max_y = std::max(max_y, j.measurement->tokens_per_s_per_gpu);
  }
  // Headroom above the fastest run for the lever labels.
  return Scale{MakeNiceAxis(max_x, 5), MakeNiceAxis(max_y * 1.1, 5)};
}

// Shortens `s` to `max_chars` characters (UTF-8 aware), ending with an ellipsis when cut.
std::string Fit(const std::string& s, size_t max_chars) {
  size_t chars = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars - 1) {
      size_t rest = 0;
      for (size_t k = i; k < s.size(); ++k)
        rest += (static_cast<unsigned char>(s[k]) & 0xC0) != 0x80;
      if (rest > 1) return s.substr(0, i) + "\u2026";
    }
    ++chars;
  }
  return s;
}

std::string Axes(const Scale& s) {
  std::string out = fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#333\"/>\n"
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{3:.1f}\" stroke=\"#333\"/>\n",
      kLeft, kHeight - kBottom, kWidth - kRight, kTop);
  for (double v : s.x.Ticks()) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" font-size=\"11\" text-anchor=\"middle\">{4}</text>\n",
        s.X(v), kHeight - kBottom, kHeight - kBottom + 4, kHeight - kBottom + 16, s.x.Label(v));
  }
  for (double v : s.y.Ticks()) {
    if (v > 0) {
      out += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>\n",
          kLeft, s.Y(v), kWidth - kRight);
    }
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n",
        kLeft - 6, s.Y(v) + 4, s.y.Label(v));
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">cumulative "
      "GPU-hours</text>\n",
      (kLeft + kWidth - kRight) / 2, kHeight - 12);
  out += fmt::format(
      "<text x=\"14\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 14 {:.1f})\">tokens/s/GPU</text>\n",
      kHeight / 2, kHeight / 2);
  return out;
}

struct Step {
  double x, y;
  std::string label;
};

std::vector<Step> LeaderSteps(const CampaignState& state) {
  std::vector<Step> steps;
  for (const auto& c : state.candidates) {
    if (c.outcome != Outcome::kNewLeader &&
        !(c.outcome == Outcome::kPairedLossMismatch && c.tokens_per_s_per_gpu)) {
      continue;
    }
    if (!c.tokens_per_s_per_gpu || c.jobs.empty()) continue;
    const auto* j = state.FindJob(c.jobs.back());
    if (!j || !j->finished) continue;
    steps.push_back(Step{j->charged_total_after, *c.tokens_per_s_per_gpu,
                         c.lever_id.empty() ? c.id : c.lever_id});
  }
  return steps;
}

std::string LeaderLine(const CampaignState& state, const Scale& s) {
  auto base = state.MeasurementOf(events::kBaselineId);
  if (!base) return "";
  std::string points = fmt::format("{:.1f},{:.1f}", s.X(0), s.Y(base->tokens_per_s_per_gpu));
  std::string labels;
  double y = base->tokens_per_s_per_gpu;
  for (const auto& step : LeaderSteps(state)) {
    points +=
        fmt::format(" {:.1f},{:.1f} {:.1f},{:.1f}", s.X(step.x), s.Y(y), s.X(step.x), s.Y(step.y));
    y = step.y;
    const bool near_right = s.X(step.x) > kWidth - kRight - 110;
    labels += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#176\" "
        "text-anchor=\"{}\">{}</text>\n",
        s.X(step.x) + (near_right ? -3 : 3), s.Y(step.y) - 5, near_right ? "end" : "start",
        support::XmlEscape(Fit(step.label, kMaxLabelChars)));
  }
  const double last_x = std::max(s.x.max, 0.0);
  points += fmt::format(" {:.1f},{:.1f}", s.X(last_x), s.Y(y));
  return "<polyline fill=\"none\" stroke=\"#2a7\" stroke-width=\"2\" points=\"" + points +
         "\"/>\n" + labels;
}

std::string Runs(const CampaignState& state, const Scale& s) {
  std::string out;
  for (const auto& j : state.jobs) {
    if (!IsTuningRun(j)) continue;
    const double x = s.X(j.charged_total_after);
    if (j.measurement && !j.failure) {
      const char* color = j.purpose == JobPurpose::kBaseline ? "#888" : "#36c";
      out += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}</title></circle>\n", x,
          s.Y(j.measurement->tokens_per_s_per_gpu), color, support::XmlEscape(j.name));
    } else {
      const double y = s.Y(0);
      out += fmt::format(
          "<path d=\"M{:.1f},{:.1f} L{:.1f},{:.1f} M{:.1f},{:.1f} L{:.1f},{:.1f}\" "
          "stroke=\"#c33\" stroke-width=\"2\"><title>{}</title></path>\n",
          x - 5, y - 5, x + 5, y + 5, x - 5, y + 5, x + 5, y - 5, support::XmlEscape(j.name));
    }
  }
  return out;
}

// One row under the title: what the line, the dots and the crosses are.
std::string Legend() {
  const double y = 40;
  double x = kLeft;
  std::string out = "<g font-size=\"11\" class=\"legend\">\n";
  out += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#2a7\" "
      "stroke-width=\"2\"/>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\">leader (labelled with its lever)</text>\n",
      x, y - 4, x + 18, y - 4, x + 22, y);
  x += 200;
  out += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" rx=\"4\" fill=\"#888\"/>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\">baseline run</text>\n",
      x, y - 8, x + 12, y);
  x += 95;
  out += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" rx=\"4\" fill=\"#36c\"/>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\">candidate run</text>\n",
      x, y - 8, x + 12, y);
  x += 105;
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#c33\" font-weight=\"bold\">\u00d7</text>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\">failed run</text>\n",
      x, y, x + 12, y);
  return out + "</g>\n";
}

}  // namespace

std::string RenderThroughputSvg(const CampaignState& state) {
  const Scale s = MakeScale(state);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\">\n",
      kWidth, kHeight, kWidth, kHeight);
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // About 0.6 em per character of a sans-serif face: the title keeps a margin on both sides.
  const size_t title_chars = static_cast<size_t>((kWidth - 40) / (0.6 * kTitleFont));
  const std::string title = "Throughput vs GPU-hours: campaign " + state.campaign_id;
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"22\" font-size=\"{:.0f}\" "
      "text-anchor=\"middle\">{}<title>{}</title></text>\n",
      kWidth / 2, kTitleFont, support::XmlEscape(Fit(title, title_chars)), support::XmlEscape(title));
  out += Legend();
  out += fmt::format(
      "<clipPath id=\"plot\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
      "height=\"{:.1f}\"/></clipPath>\n",
      kLeft - 6, kTop - 6, kWidth - kLeft - kRight + 12, kHeight - kTop - kBottom + 12);
  out += Axes(s);
  out += "<g clip-path=\"url(#plot)\">\n";
  out += LeaderLine(state, s);
  out += Runs(state, s);
  out += "</g>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace attune
