#include "loss_curve.h"

#include <algorithm>
#include <cmath>

#include "attune/hash.h"

namespace attune::sim {
namespace {

constexpr double kPi = 3.14159265358979323846;

double Unit(const std::string& text) {
  return static_cast<double>(StableHash64(text) >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace

LossCurve::LossCurve(const TrainingSetup& s) : key_(s.objective_key) {
  double vocab = static_cast<double>(std::max<int64_t>(2, s.model.vocab_unpadded));
  initial_ = std::log(vocab) + 0.35;
  double params = 12.0 * s.model.layers * static_cast<double>(s.model.hidden) * s.model.hidden;
  floor_ = 1.7 + 6.0 / std::pow(std::max(1e6, params) / 1e6, 0.12);
  lr_ = s.run.lr > 0 ? s.run.lr : 3e-4;
  min_lr_ = s.run.min_lr;
  double batch_tokens = static_cast<double>(s.par.global_batch) * s.model.seq_length;
  // Early progress grows with the learning rate and the tokens per step.
  rate_ = 0.03 * std::sqrt(lr_ / 3e-4) * std::pow(batch_tokens / 1e6, 0.3) * (0.8 + 0.4 * Unit(key_ + "#rate"));
  // Each objective gets its own curve: a persistent 5–15% offset whose sign and size come from
  // the objective key, and its own batch-to-batch wobble (a different seed or data order sees
  // different batches), so the paired-loss check tells objectives apart.
  double u = Unit(key_ + "#offset");
  offset_ = (u < 0.5 ? -1.0 : 1.0) * (0.05 + 0.2 * std::abs(u - 0.5));
  aux_coeff_ = s.model.experts > 0 ? s.model.moe_aux_loss_coeff : 0.0;
  warmup_ = s.run.lr_warmup_iters;
  decay_iters_ = std::max<int64_t>(1, s.run.train_iters > 0 ? s.run.train_iters : 1000);
  cosine_ = s.run.lr_decay_style == "cosine";
}

double LossCurve::Jitter(int64_t iteration, const char* stream) const {
  return 2.0 * Unit(key_ + "#" + stream + std::to_string(iteration)) - 1.0;
}

double LossCurve::LossAt(int64_t iteration) const {
  double i = static_cast<double>(std::max<int64_t>(1, iteration));
  double excess = (initial_ - floor_) * (0.75 * std::exp(-rate_ * i) + 0.25 / (1 + rate_ * i * 0.05));
  return (floor_ + excess) * (1 + offset_) * (1 + 0.02 * Jitter(iteration, "loss"));
}

double LossCurve::GradNormAt(int64_t iteration) const {
  double i = static_cast<double>(std::max<int64_t>(1, iteration));
  return (0.6 + 8.0 * std::exp(-rate_ * i * 2)) * (1 + 0.1 * Jitter(iteration, "grad"));
}

double LossCurve::LearningRateAt(int64_t iteration) const {
  double i = static_cast<double>(iteration);
  if (warmup_ > 0 && iteration <= warmup_) return lr_ * i / static_cast<double>(warmup_);
  double span = static_cast<double>(std::max<int64_t>(1, decay_iters_ - warmup_));
  double progress = std::clamp((i - static_cast<double>(warmup_)) / span, 0.0, 1.0);
  double factor = cosine_ ? 0.5 * (1 + std::cos(kPi * progress)) : 1 - progress;
  return min_lr_ + (lr_ - min_lr_) * factor;
}

double LossCurve::LoadBalancingLossAt(int64_t iteration) const {
  if (aux_coeff_ <= 0) return 0;
  double i = static_cast<double>(std::max<int64_t>(1, iteration));
  return aux_coeff_ * (1.0 + 0.5 * std::exp(-rate_ * i)) * (1 + 0.02 * Jitter(iteration, "aux"));
}

}  // namespace attune::sim
