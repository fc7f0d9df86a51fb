// Copyright attune authors.
#include "data/length_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "attune/support/markup.h"

namespace attune::data {
namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace

void LengthStats::Add(uint64_t tokens, uint64_t loss_tokens) {
  ++rows_;
  tokens_ += tokens;
  loss_tokens_ += loss_tokens;
  ++by_length_[tokens];
  if (loss_tokens == 0) ++zero_loss_rows_;
  size_t share = tokens == 0 ? 0 : static_cast<size_t>(std::llround(1000.0 * loss_tokens / tokens));
  ++by_share_[std::min<size_t>(share, 1000)];
}

uint64_t LengthStats::Percentile(double p) const {
  if (rows_ == 0) return 0;
  uint64_t need = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p * rows_)));
  uint64_t seen = 0;
  for (const auto& [len, count] : by_length_) {
    seen += count;
    if (seen >= need) return len;
  }
  return by_length_.rbegin()->first;
}

double LengthStats::LossSharePercentile(double p) const {
  if (rows_ == 0) return 0;
  uint64_t need = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p * rows_)));
  uint64_t seen = 0;
  for (size_t i = 0; i < by_share_.size(); ++i) {
    seen += by_share_[i];
    if (seen >= need) return i / 1000.0;
  }
  return 1.0;
}

double LengthStats::TruncatedShare(uint64_t s) const {
  if (tokens_ == 0) return 0;
  uint64_t cut = 0;
  for (auto it = by_length_.upper_bound(s); it != by_length_.end(); ++it) {
    cut += (it->first - s) * it->second;
  }
  return static_cast<double>(cut) / tokens_;
}

double LengthStats::PaddingShare(uint64_t s) const {
  if (rows_ == 0 || s == 0) return 0;
  uint64_t pad = 0;
  for (const auto& [len, count] : by_length_) {
    if (len >= s) break;
    pad += (s - len) * count;
  }
  return static_cast<double>(pad) / (static_cast<double>(rows_) * s);
}

uint64_t LengthStats::RowsLongerThan(uint64_t s) const {
  uint64_t n = 0;
  for (auto it = by_length_.upper_bound(s); it != by_length_.end(); ++it) n += it->second;
  return n;
}

std::vector<HistogramBin> LengthStats::Histogram(int bins, uint64_t upper) const {
  std::vector<HistogramBin> out;
  if (rows_ == 0 || bins <= 0) return out;
  uint64_t top = upper ? upper : by_length_.rbegin()->first + 1;
  uint64_t width = std::max<uint64_t>(1, (top + bins - 1) / bins);
  for (uint64_t lo = 0; lo < top; lo += width) out.push_back({lo, lo + width, 0});
  for (const auto& [len, count] : by_length_) {
    size_t i = std::min<size_t>(len / width, out.size() - 1);
    out[i].count += count;
  }
  if (upper && by_length_.rbegin()->first >= out.back().hi) out.back().hi = by_length_.rbegin()->first + 1;
  return out;
}

nlohmann::json LengthStats::ToJson(uint64_t s) const {
  nlohmann::json j = {
      {"rows", rows_},
      {"tokens", tokens_},
      {"loss_tokens", loss_tokens_},
      {"mean", rows_ ? static_cast<double>(tokens_) / rows_ : 0.0},
      {"min", rows_ ? by_length_.begin()->first : 0},
      {"max", rows_ ? by_length_.rbegin()->first : 0},
      {"percentiles",
       {{"p50", Percentile(0.5)}, {"p90", Percentile(0.9)}, {"p95", Percentile(0.95)},
        {"p99", Percentile(0.99)}}},
      {"loss_share",
       {{"overall", tokens_ ? static_cast<double>(loss_tokens_) / tokens_ : 0.0},
        {"p10", LossSharePercentile(0.1)}, {"p50", LossSharePercentile(0.5)},
        {"p90", LossSharePercentile(0.9)}, {"rows_without_loss_tokens", zero_loss_rows_}}},
  };
  if (s > 0) {
    j["at_seq_length"] = {{"seq_length", s},
                          {"rows_longer", RowsLongerThan(s)},
                          {"truncated_token_share", TruncatedShare(s)},
                          {"padding_share", PaddingShare(s)}};
  }
  return j;
}

std::string HistogramText(const std::vector<HistogramBin>& bins, int width, uint64_t s) {
  uint64_t most = 1;
  for (const auto& b : bins) most = std::max(most, b.count);
  std::ostringstream out;
  for (const auto& b : bins) {
    int bar = static_cast<int>(std::llround(static_cast<double>(b.count) * width / most));
    char range[64];
    std::snprintf(range, sizeof(range), "%8llu-%-8llu", static_cast<unsigned long long>(b.lo),
                  static_cast<unsigned long long>(b.hi - 1));
    out << range << " " << std::string(bar, '#') << std::string(width - bar, ' ') << " "
        << b.count;
    if (s > 0 && b.lo <= s && s < b.hi) out << "  <- seq-length " << s;
    out << "\n";
  }
  return out.str();
}

std::string HistogramSvg(const std::vector<HistogramBin>& bins, const std::string& title,
                         uint64_t s) {
  const double w = 720, h = 360, left = 70, right = 20, top = 40, bottom = 50;
  double plot_w = w - left - right, plot_h = h - top - bottom;
  uint64_t most = 1;
  for (const auto& b : bins) most = std::max(most, b.count);
  uint64_t span = bins.empty() ? 1 : bins.back().hi;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << w / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">"
    << support::XmlEscape(title) << "</text>\n";
  for (const auto& b : bins) {
    double x = left + plot_w * b.lo / span, bw = plot_w * (b.hi - b.lo) / span;
    double bh = plot_h * b.count / most;
    o << "<rect x=\"" << Fixed(x, 1) << "\" y=\"" << Fixed(top + plot_h - bh, 1) << "\" width=\""
      << Fixed(std::max(bw - 1, 0.5), 1) << "\" height=\"" << Fixed(bh, 1)
      << "\" fill=\"#4a78b5\"><title>" << b.lo << "-" << b.hi - 1 << ": " << b.count
      << " rows</title></rect>\n";
  }
  o << "<line x1=\"" << left << "\" y1=\"" << top + plot_h << "\" x2=\"" << left + plot_w
    << "\" y2=\"" << top + plot_h << "\" stroke=\"black\"/>\n"
    << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + plot_h
    << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double x = left + plot_w * i / 4;
    o << "<text x=\"" << Fixed(x, 1) << "\" y=\"" << top + plot_h + 16
      << "\" text-anchor=\"middle\">" << span * i / 4 << "</text>\n";
    double y = top + plot_h - plot_h * i / 4;
    o << "<text x=\"" << left - 6 << "\" y=\"" << Fixed(y + 4, 1) << "\" text-anchor=\"end\">"
      << most * i / 4 << "</text>\n";
  }
  o << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << h - 10
    << "\" text-anchor=\"middle\">tokens per row</text>\n"
    << "<text x=\"16\" y=\"" << top + plot_h / 2 << "\" transform=\"rotate(-90 16 "
    << top + plot_h / 2 << ")\" text-anchor=\"middle\">rows</text>\n";
  if (s > 0 && s <= span) {
    double x = left + plot_w * s / span;
    o << "<line x1=\"" << Fixed(x, 1) << "\" y1=\"" << top << "\" x2=\"" << Fixed(x, 1)
      << "\" y2=\"" << top + plot_h << "\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n"
      << "<text x=\"" << Fixed(x + 4, 1) << "\" y=\"" << top + 12 << "\" fill=\"#c0392b\">seq-length "
      << s << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace attune::data
