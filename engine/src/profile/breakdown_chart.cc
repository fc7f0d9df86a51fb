#include "profile/breakdown_chart.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "attune/support/markup.h"

namespace attune::profile {
namespace {

struct Part {
  const char* name;
  const char* color;
  int64_t RankBar::*field;
};

constexpr std::array<Part, 5> kParts = {{
    {"compute", "#4c78a8", &RankBar::compute_ns},
    {"exposed communication", "#e45756", &RankBar::exposed_communication_ns},
    {"memory copies", "#72b7b2", &RankBar::memory_only_ns},
    {"idle: launch-bound", "#f58518", &RankBar::launch_bound_idle_ns},
    {"idle: other", "#bab0ac", &RankBar::other_idle_ns},
}};

std::string Fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

std::string Share(int64_t part, int64_t whole) {
  return whole > 0 ? Fixed("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole))
                   : "-";
}

}  // namespace

std::vector<RankBar> BarsOf(const ProfileReport& report) {
  std::vector<RankBar> bars;
  for (const RankProfile& p : report.ranks) {
    const Figures& f = p.figures;
    RankBar b;
    b.label = p.rank ? "rank " + std::to_string(*p.rank) : p.file;
    b.basis = BasisName(p.basis);
    b.window_ns = f.window_ns;
    b.compute_ns = f.compute_ns;
    b.exposed_communication_ns = f.exposed_communication_ns;
    // busy = |compute| + |comm \ compute| + |memory \ (compute ∪ comm)|
    b.memory_only_ns = std::max<int64_t>(0, f.busy_ns - f.compute_ns - f.exposed_communication_ns);
    b.launch_bound_idle_ns = p.basis == Basis::kGpuKernels ? std::min(p.launch.launch_bound_ns, f.idle_ns) : 0;
    b.other_idle_ns = std::max<int64_t>(0, f.idle_ns - b.launch_bound_idle_ns);
    bars.push_back(std::move(b));
  }
  return bars;
}

nlohmann::json BarsToJson(const std::vector<RankBar>& bars) {
  nlohmann::json out = nlohmann::json::array();
  for (const RankBar& b : bars) {
    out.push_back({{"label", b.label},
                   {"basis", b.basis},
                   {"window_ns", b.window_ns},
                   {"compute_ns", b.compute_ns},
                   {"exposed_communication_ns", b.exposed_communication_ns},
                   {"memory_only_ns", b.memory_only_ns},
                   {"launch_bound_idle_ns", b.launch_bound_idle_ns},
                   {"other_idle_ns", b.other_idle_ns}});
  }
  return out;
}

std::vector<RankBar> BarsFromJson(const nlohmann::json& j) {
  std::vector<RankBar> bars;
  if (!j.is_array()) return bars;
  for (const auto& item : j) {
    if (!item.is_object()) continue;
    RankBar b;
    b.label = item.value("label", "");
    b.basis = item.value("basis", "");
    b.window_ns = item.value("window_ns", int64_t{0});
    b.compute_ns = item.value("compute_ns", int64_t{0});
    b.exposed_communication_ns = item.value("exposed_communication_ns", int64_t{0});
    b.memory_only_ns = item.value("memory_only_ns", int64_t{0});
    b.launch_bound_idle_ns = item.value("launch_bound_idle_ns", int64_t{0});
    b.other_idle_ns = item.value("other_idle_ns", int64_t{0});
    bars.push_back(std::move(b));
  }
  return bars;
}

std::string RenderBreakdownMarkdown(const std::vector<RankBar>& bars) {
  std::string out = "| rank | window ms |";
  for (const Part& part : kParts) {
    out += ' ';
    out += part.name;
    out += " |";
  }
  out += "\n|---|---:|";
  for (size_t i = 0; i < kParts.size(); ++i) out += "---:|";
  out += "\n";
  for (const RankBar& b : bars) {
    out += "| ";
    out += b.label;
    out += " | ";
    out += Fixed("%.2f", static_cast<double>(b.window_ns) / 1e6);
    out += " |";
    for (const Part& part : kParts) {
      out += ' ';
      out += Share(b.*part.field, b.window_ns);
      out += " |";
    }
    out += "\n";
  }
  return out;
}

std::string RenderBreakdownSvg(const std::vector<RankBar>& bars) {
  constexpr double kLeft = 110, kBarWidth = 560, kBarHeight = 22, kGap = 8, kTop = 40;
  const double height = kTop + bars.size() * (kBarHeight + kGap) + 70;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" height=\"" +
                    Fixed("%.0f", height) + "\" font-family=\"sans-serif\">\n" +
                    "<text x=\"10\" y=\"22\" font-size=\"14\">Where each rank's profiled window "
                    "goes (share of its window)</text>\n";
  for (size_t i = 0; i < bars.size(); ++i) {
    const RankBar& b = bars[i];
    double y = kTop + i * (kBarHeight + kGap);
    out += "<text x=\"" + Fixed("%.1f", kLeft - 8) + "\" y=\"" + Fixed("%.1f", y + 15) +
           "\" font-size=\"12\" text-anchor=\"end\">" + support::XmlEscape(b.label) + "</text>\n";
    double x = kLeft;
    for (const Part& part : kParts) {
      double w = b.window_ns > 0 ? kBarWidth * static_cast<double>(b.*part.field) /
                                       static_cast<double>(b.window_ns)
                                 : 0;
      if (w <= 0) continue;
      out += "<rect x=\"" + Fixed("%.1f", x) + "\" y=\"" + Fixed("%.1f", y) + "\" width=\"" +
             Fixed("%.1f", w) + "\" height=\"" + Fixed("%.0f", kBarHeight) + "\" fill=\"" +
             part.color + "\"><title>" + support::XmlEscape(b.label) + ": " + part.name + " " +
             Share(b.*part.field, b.window_ns) + "</title></rect>\n";
      x += w;
    }
  }
  double legend_y = kTop + bars.size() * (kBarHeight + kGap) + 20;
  double x = 10;
  for (const Part& part : kParts) {
    out += "<rect x=\"" + Fixed("%.0f", x) + "\" y=\"" + Fixed("%.0f", legend_y) +
           "\" width=\"12\" height=\"12\" fill=\"" + part.color + "\"/>\n<text x=\"" +
           Fixed("%.0f", x + 16) + "\" y=\"" + Fixed("%.0f", legend_y + 11) +
           "\" font-size=\"11\">" + part.name + "</text>\n";
    x += 32 + 6.5 * std::string(part.name).size();
  }
  return out + "</svg>\n";
}

}  // namespace attune::profile
