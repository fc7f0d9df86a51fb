// Copyright attune authors.
//
// The simulated training curve: lm loss, grad norm and learning rate per iteration. The curve
// depends only on what defines the training objective (the plan's objective_key, which the stack
// builds from every setting that is not a throughput or logging lever, and the schedule) and never
// on parallel layout or speed settings, so the paired-loss gate passes a lever and refuses an objective
// change, as it would on real hardware.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_LOSS_CURVE_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_LOSS_CURVE_H_

#include <cstdint>
#include <string>

#include "setup.h"

namespace attune::sim {

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
