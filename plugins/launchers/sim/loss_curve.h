// Copyright attune authors.
//
// The simulated training curve: lm loss, grad norm and learning rate per iteration. The curve
// depends only on what defines the training objective (seed, data, batch, schedule, model,
// precision recipe: every flag that is not a throughput or logging lever) and never on parallel
// layout or speed settings, so the paired-loss gate passes a lever and refuses an objective
// change, as it would on real hardware.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_LOSS_CURVE_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_LOSS_CURVE_H_

#include <cstdint>
#include <string>

#include "setup.h"

namespace attune::sim {

// True for flags that change speed, memory or logging only (reference §1); they do not enter the
// objective key.
bool IsThroughputOrLoggingFlag(const std::string& flag);

// A canonical string of the objective-defining flags and values of `setup`.
std::string ObjectiveKey(const TrainingSetup& setup);

class LossCurve {
 public:
  explicit LossCurve(const TrainingSetup& setup);
  double LossAt(int64_t iteration) const;
  double GradNormAt(int64_t iteration) const;
  // Megatron's schedule: linear warm-up, then linear or cosine decay to --min-lr.
  double LearningRateAt(int64_t iteration) const;
  // Auxiliary load-balancing loss of MoE runs (0 when not logged).
  double LoadBalancingLossAt(int64_t iteration) const;

 private:
  double Jitter(int64_t iteration, const char* stream) const;  // in [-1, 1)
  std::string key_;
  double initial_ = 11, floor_ = 2, rate_ = 0.02, offset_ = 0;
  double lr_ = 0, min_lr_ = 0, aux_coeff_ = 0;
  int64_t warmup_ = 0, decay_iters_ = 1;
  bool cosine_ = false;
};

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_LOSS_CURVE_H_
