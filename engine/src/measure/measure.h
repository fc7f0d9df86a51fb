// Copyright attune authors.
//
// Measurement arithmetic: the noise band, the comparison of a candidate with the leader, the
// speedup of paired runs, and the outcome of a candidate. Pure functions; no I/O.
#ifndef ATTUNE_ENGINE_MEASURE_MEASURE_H_
#define ATTUNE_ENGINE_MEASURE_MEASURE_H_

#include <optional>
#include <string>
#include <vector>

#include "attune/agent.h"
#include "attune/metrics.h"

namespace attune {

// The relative band within which two throughputs are not told apart: the larger of the
// configured band (default 0.03) and
//   - with ≥ 2 runs: the relative spread (max − min) ÷ median of the leader's repeated runs;
//   - with one run: 2 × cv ÷ sqrt(iterations used), the band that run alone cannot resolve.
// `runs` are the repeated runs of the leader (or of the baseline when the leader ran once).
double NoiseBand(double configured, const std::vector<Measurement>& runs);

// (max − min) ÷ median of the runs' throughputs; 0 for fewer than two runs.
double RelativeSpread(const std::vector<Measurement>& runs);

enum class Comparison { kFaster, kWithinNoise, kSlower };
const char* ComparisonName(Comparison c);  // "faster", "within_noise", "slower"

// Compares throughputs (tokens/s/GPU): faster only when candidate > leader × (1 + band).
Comparison Compare(double candidate_tps, double leader_tps, double band);

// The outcome of a tried candidate, as recorded in CandidateRanked.
struct OutcomeInput {
  bool gate_pass = true;
  bool skipped = false;                     // did not fit the budget
  std::optional<Failure> failure;           // first failed run
  std::optional<double> candidate_tps;      // median over its runs
  std::optional<double> leader_tps;
  double band = 0.03;
};
// kRefused, kSkipped, kFailed, kSlower, kWithinNoise or kNewLeader.
Outcome RankOutcome(const OutcomeInput& in);

// Speedup of paired runs: ratio of each pair (a ÷ b), with median, min and max.
struct SpeedupStats {
  std::vector<double> ratios;
  double median = 0;
  double min = 0;
  double max = 0;
};
SpeedupStats PairedSpeedup(const std::vector<double>& a, const std::vector<double>& b);

// The adaptive stop's test of a running job (measure.early_stop): are its steady step times
// (the iterations the stack measures, oldest first, in seconds) enough to pin the median step time
// down to `target` (relative)? Stable when
//   - there are at least `min_iterations` of them,
//   - the standard error of their median, estimated as 1.2533 × cv ÷ √n (the large-sample factor
//     √(π/2) for a median), is at most `target`, and
//   - the medians of their first and second halves differ by at most 3 × `target` of the median
//     (a step time still drifting — warming caches, a growing allocator — is not yet steady).
struct SteadyCheck {
  bool stable = false;
  std::string why;              // what is still missing when not stable
  int iterations = 0;
  double median_s = 0;
  double relative_error = 0;    // the estimated standard error of the median, relative
  double drift = 0;             // |median(second half) − median(first half)| ÷ median
};
SteadyCheck CheckSteady(const std::vector<double>& step_times_s, int min_iterations, double target);

}  // namespace attune

#endif  // ATTUNE_ENGINE_MEASURE_MEASURE_H_
