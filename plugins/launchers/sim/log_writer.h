// Copyright attune authors.
//
// Megatron-LM's stdout, rendered from a simulated run: the start-up lines (reference §4.5), the
// per-iteration line (§3.2), memory reports (§3.3), and the failure texts of PyTorch, NCCL and
// torchrun (§4). Formats follow the reference exactly; the Megatron stack plugin parses them.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_LOG_WRITER_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_LOG_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hardware.h"
#include "loss_curve.h"
#include "megatron_rules.h"
#include "memory_model.h"
#include "setup.h"

namespace attune::sim {

// " [2026-01-01 00:01:30.000000]"-style wall clock for virtual seconds (virtual 0 is
// 2026-01-01 00:00:00 UTC).
std::string FormatTimestamp(double virtual_s);

// Accumulates the log of one job as its virtual clock advances.
class LogWriter {
 public:
  LogWriter(const TrainingSetup& setup, const ClusterSpec& cluster, double start_s);

  double now() const { return now_; }
  void Advance(double seconds) { now_ += seconds; }
  const std::string& text() const { return text_; }

  // "using world size ..." (validate_args prints it before most checks).
  void WorldSizeLine();
  // Everything from the argument dump to "[before the start of training step]".
  void Startup(double setup_s);
  // Runs iterations [first, last] with the given per-iteration seconds (index 0 = iteration
  // `first`), printing the iteration lines and memory reports Megatron would print.
  void Iterations(int64_t first, const std::vector<double>& seconds, double tflops_per_step);
  void Finish(bool exit_interval_reached);

  void ArgumentError(const ArgumentError& error);
  void OutOfMemory(const MemoryEstimate& memory);
  void NcclTimeout(int64_t iteration, double timeout_s);
  void NodeFailure();

 private:
  void Line(const std::string& line);
  void DatetimeMarker(const std::string& marker);
  void MemoryReport(int64_t iteration);
  void IterationLine(int64_t iteration, double interval_s, int64_t interval_iters,
                     double loss_sum, double aux_sum, double tflops_per_step);
  void Traceback(const std::vector<std::pair<std::string, std::string>>& frames);
  void ChildFailed(int exit_code, const std::string& signal);

  const TrainingSetup& setup_;
  const ClusterSpec& cluster_;
  LossCurve curve_;
  double now_;
  std::string text_;
  // The log-interval accumulators (not reset after iteration 1, as in training_log).
  double interval_s_ = 0, loss_sum_ = 0, aux_sum_ = 0;
  int64_t interval_iters_ = 0;
  bool memory_reported_again_ = false;
};

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_LOG_WRITER_H_
