#include "gate/paired_loss.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attune {

PairedLossVerdict ComparePairedLosses(const std::vector<double>& baseline,
                                      const std::vector<double>& candidate, int count,
                                      double tolerance) {
  PairedLossVerdict v;
  const size_t n = std::min({baseline.size(), candidate.size(), static_cast<size_t>(std::max(count, 0))});
  v.compared = static_cast<int>(n);
  if (n == 0) {
    v.reason = fmt::format("no losses to compare (baseline logged {}, candidate {}); the check "
                           "fails closed: log losses from the first iteration",
                           baseline.size(), candidate.size());
    return v;
  }
  for (size_t i = 0; i < n; ++i) {
    const double denom = std::max(std::abs(baseline[i]), 1e-12);
    const double rel = std::abs(candidate[i] - baseline[i]) / denom;
    // A NaN loss on either side is the worst possible difference.
    const double diff = std::isfinite(rel) ? rel : INFINITY;
    if (v.worst_index < 0 || diff > v.max_rel_diff) {
      v.max_rel_diff = diff;
      v.worst_index = static_cast<int>(i);
    }
  }
  v.pass = v.max_rel_diff <= tolerance;
  const int w = v.worst_index;
  v.reason = fmt::format("loss {} of {}: candidate {:.6g} vs baseline {:.6g}, relative difference "
                         "{:.3g} {} tolerance {:.3g}",
                         w + 1, n, candidate[w], baseline[w], v.max_rel_diff,
                         v.pass ? "within" : "exceeds", tolerance);
  return v;
}

}  // namespace attune
