// Copyright attune authors.
//
// The paired half of the correctness gate: with the same seed and data, a candidate's first
// losses must match the baseline's within a relative tolerance, loss by loss.
#ifndef ATTUNE_ENGINE_GATE_PAIRED_LOSS_H_
#define ATTUNE_ENGINE_GATE_PAIRED_LOSS_H_

#include <string>
#include <vector>

namespace attune {

struct PairedLossVerdict {
  bool pass = false;
  int compared = 0;           // losses compared
  double max_rel_diff = 0;    // the largest |c − b| ÷ |b|
  int worst_index = -1;       // 0-based index of that loss
  std::string reason;         // names the loss, both values and the tolerance
};

// Compares the first `count` losses (fewer when either side has fewer). Fails when no loss can
// be compared (fail closed) or any relative difference exceeds `tolerance`.
PairedLossVerdict ComparePairedLosses(const std::vector<double>& baseline,
                                      const std::vector<double>& candidate, int count,
                                      double tolerance);

}  // namespace attune

#endif  // ATTUNE_ENGINE_GATE_PAIRED_LOSS_H_
