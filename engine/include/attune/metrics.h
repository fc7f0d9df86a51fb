// Copyright attune authors.
//
// What a stack reads from a job's log: per-iteration samples, memory reports, the steady-state
// measurement, failures and diagnoses. Plain values shared by the engine and plugins.
#ifndef ATTUNE_METRICS_H_
#define ATTUNE_METRICS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune {

// One logged iteration (one Megatron iteration line, one AutoModel step line, ...).
struct IterationSample {
  int64_t iteration = 0;
  int64_t train_iters = 0;     // the planned total, 0 when the log does not say
  double step_time_ms = 0;     // elapsed time per iteration, averaged over the log interval
  std::optional<double> loss;  // the main loss ("lm loss"); absent when missing or NaN
  std::optional<double> grad_norm;
  std::optional<double> tflops_per_gpu;           // as the stack reports it
  std::optional<double> tokens_per_s_per_gpu;     // as the stack reports it, when it does
  std::optional<int64_t> global_batch_size;
  int64_t skipped_iterations = 0;
  int64_t nan_iterations = 0;
  std::map<std::string, double> extra;  // other numeric fields: MoE losses, lr, loss scale, ...
  int line = 0;                         // 1-based line in the log where the record ends
};

// One memory report (Megatron's "[Rank r] (after N iterations) memory (MB) | ...").
struct MemorySample {
  int rank = 0;
  int64_t after_iteration = 0;
  double allocated_mb = 0;
  double max_allocated_mb = 0;
  double reserved_mb = 0;
  double max_reserved_mb = 0;
};

// Everything parsed from one log.
struct LogParse {
  std::vector<IterationSample> iterations;
  std::vector<MemorySample> memory;
  bool training_started = false;       // the stack's "training started" marker was seen
  std::vector<std::string> warnings;   // lines that looked like records but did not parse
};

// The steady-state summary of one run. Throughput is the median over the iterations that the
// stack does not mark as warm-up.
struct Measurement {
  int iterations_logged = 0;
  int iterations_used = 0;              // after dropping warm-up records
  double step_time_s = 0;               // median
  double tokens_per_s_per_gpu = 0;      // global batch × seq ÷ step time ÷ world size
  double cv = 0;                        // coefficient of variation of the used step times
  std::optional<double> tflops_per_gpu;
  std::optional<double> peak_memory_gib;  // max over ranks of max reserved (or the stack's best)
  std::vector<double> first_losses;       // losses of the first logged iterations, in order
};

// Why a job failed, as the stack classifies its log.
enum class FailureKind {
  kNone,
  kOom,            // device out of memory (PyTorch or NCCL form)
  kHostOom,        // killed by the kernel's OOM killer
  kNcclTimeout,    // collective watchdog timeout
  kNcclError,      // NCCL/communication error
  kIllegalMemory,  // illegal memory access / launch failure
  kHang,           // no progress for too long
  kConfigError,    // refused at start-up (argument or assertion errors)
  kLaunchError,    // could not start at all (missing entry point, sbatch refused)
  kTimeLimit,      // ran past its time limit
  kCancelled,      // cancelled by the user or the engine
  kNodeFailure,    // the infrastructure failed (node lost, preempted)
  kUnknown,
};
const char* FailureKindName(FailureKind kind);                 // "oom", "nccl_timeout", ...
std::optional<FailureKind> FailureKindFromName(const std::string& name);

struct Failure {
  FailureKind kind = FailureKind::kNone;
  std::string signature;  // the id of the triage rule that matched ("cuda_oom_pytorch")
  std::string evidence;   // the log line that decided
  int line = 0;           // its 1-based line number, 0 when not from the log
  std::string hint;       // what to do about it
  bool infrastructure = false;  // not the recipe's fault: a retry of the same recipe may pass
  std::string process;    // who printed the evidence, as the log names it ("rank 3",
                          // "TrainActor pid=4242", "[default7]:"); "" when the line names none
};

// What limits a run. Kinds used by the built-in agents and lever catalogs:
//   "memory_headroom"  unused memory that a faster, hungrier setting could use
//   "memory_pressure"  close to capacity (or OOM): levers that save memory
//   "communication"    exposed communication
//   "pipeline_bubble"  pipeline idle time
//   "launch_overhead"  kernel-launch / host overhead (small kernels, many micro-batches)
//   "compute_bound"    compute dominates; kernel-level levers (fusions, attention backend, FP8)
//   "oom"              the run failed out of memory
struct Diagnosis {
  std::string kind;
  double severity = 0;   // 0..1, how much this limits throughput (estimated)
  std::string evidence;  // human-readable: "peak 41.2 of 80 GiB"
};

nlohmann::json MeasurementToJson(const Measurement& m);
Measurement MeasurementFromJson(const nlohmann::json& j);
nlohmann::json FailureToJson(const Failure& f);
Failure FailureFromJson(const nlohmann::json& j);
nlohmann::json DiagnosisToJson(const Diagnosis& d);
Diagnosis DiagnosisFromJson(const nlohmann::json& j);
nlohmann::json IterationToJson(const IterationSample& s);

// Median, mean and coefficient of variation helpers (empty input gives 0).
double Median(std::vector<double> values);
double CoefficientOfVariation(const std::vector<double>& values);

}  // namespace attune

#endif  // ATTUNE_METRICS_H_
