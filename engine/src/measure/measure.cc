#include "measure/measure.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attune {

double RelativeSpread(const std::vector<Measurement>& runs) {
  if (runs.size() < 2) return 0;
  std::vector<double> tps;
  for (const auto& m : runs) tps.push_back(m.tokens_per_s_per_gpu);
  const double median = Median(tps);
  if (median <= 0) return 0;
  const auto [lo, hi] = std::minmax_element(tps.begin(), tps.end());
  return (*hi - *lo) / median;
}

double NoiseBand(double configured, const std::vector<Measurement>& runs) {
  // Repeated runs are direct evidence of run-to-run noise; the within-run CV overstates it for a
  // median (one slow iteration inflates the CV, not the median), so it only stands in when a
  // single run is all there is.
  if (runs.size() >= 2) return std::max(configured, RelativeSpread(runs));
  double band = configured;
  for (const auto& m : runs) {
    if (m.iterations_used > 0) band = std::max(band, 2 * m.cv / std::sqrt(m.iterations_used));
  }
  return band;
}

const char* ComparisonName(Comparison c) {
  switch (c) {
    case Comparison::kFaster: return "faster";
    case Comparison::kWithinNoise: return "within_noise";
    case Comparison::kSlower: return "slower";
  }
  return "within_noise";
}

Comparison Compare(double candidate_tps, double leader_tps, double band) {
  if (candidate_tps > leader_tps * (1 + band)) return Comparison::kFaster;
  if (candidate_tps < leader_tps * (1 - band)) return Comparison::kSlower;
  return Comparison::kWithinNoise;
}

Outcome RankOutcome(const OutcomeInput& in) {
  if (!in.gate_pass) return Outcome::kRefused;
  if (in.skipped) return Outcome::kSkipped;
  if (in.failure) return Outcome::kFailed;
  if (!in.candidate_tps || !in.leader_tps) return Outcome::kFailed;
  switch (Compare(*in.candidate_tps, *in.leader_tps, in.band)) {
    case Comparison::kFaster: return Outcome::kNewLeader;
    case Comparison::kWithinNoise: return Outcome::kWithinNoise;
    case Comparison::kSlower: return Outcome::kSlower;
  }
  return Outcome::kFailed;
}

SpeedupStats PairedSpeedup(const std::vector<double>& a, const std::vector<double>& b) {
  SpeedupStats s;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (b[i] > 0) s.ratios.push_back(a[i] / b[i]);
  }
  if (s.ratios.empty()) return s;
  s.median = Median(s.ratios);
  const auto [lo, hi] = std::minmax_element(s.ratios.begin(), s.ratios.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

SteadyCheck CheckSteady(const std::vector<double>& step_times_s, int min_iterations, double target) {
  SteadyCheck c;
  c.iterations = static_cast<int>(step_times_s.size());
  if (c.iterations < std::max(min_iterations, 2)) {
    c.why = fmt::format("{} steady iteration(s) of the {} needed", c.iterations, std::max(min_iterations, 2));
    return c;
  }
  c.median_s = Median(step_times_s);
  const double cv = CoefficientOfVariation(step_times_s);
  if (!(c.median_s > 0) || !std::isfinite(cv)) {
    c.why = "no positive step time";
    return c;
  }
  c.relative_error = 1.2533 * cv / std::sqrt(static_cast<double>(c.iterations));
  const size_t half = step_times_s.size() / 2;
  const double first = Median({step_times_s.begin(), step_times_s.begin() + half});
  const double second = Median({step_times_s.end() - half, step_times_s.end()});
  c.drift = std::abs(second - first) / c.median_s;
  if (c.relative_error > target) {
    c.why = fmt::format("the median step time is known to {:.2f}%, {:.2f}% wanted", 100 * c.relative_error,
                        100 * target);
  } else if (c.drift > 3 * target) {
    c.why = fmt::format("the step time still drifts ({:.2f}% between the halves)", 100 * c.drift);
  } else {
    c.stable = true;
  }
  return c;
}

}  // namespace attune
