// Copyright attune authors.
//
// Profile analysis: what PyTorch profiler (Kineto) traces say about a training run, per rank and
// across ranks, and the diagnoses that follow (docs/profile.md is the reference).
//
// The contract figures of one rank (tests and users compare against these definitions):
//   kernels are events with cat == "kernel"; a kernel is communication when its name contains
//   "nccl" (any case); memory events have cat "gpu_memcpy" or "gpu_memset"; every other kernel
//   is compute.
//   window = last end − first start over kernels and memory events; busy = |union of them all|;
//   idle = window − busy; compute, communication, memory = |union of each class|;
//   exposed communication = |union(comm) \ union(compute)|;
//   comm_compute_overlap = |union(comm) ∩ union(compute)| ÷ |union(comm)| (none without comm).
// A trace without GPU activity (a CPU-only run) is measured on its CPU operators instead
// (Basis::kCpuOps): the same figures over cpu_op events, communication being the collective
// operators (names with nccl/gloo, c10d::*, record_param_comms) and compute the other operators'
// time outside them on the same thread; memory is 0.
//
// Everything here is a pure function of the trace files; no clocks, no globals. Thread-safe.
#ifndef ATTUNE_ENGINE_PROFILE_PROFILE_H_
#define ATTUNE_ENGINE_PROFILE_PROFILE_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/metrics.h"
#include "attune/status.h"

namespace attune::profile {

// What a timed activity is.
enum class ActivityClass { kCompute, kCommunication, kMemory };
const char* ActivityClassName(ActivityClass c);  // "compute", "communication", "memory"

// What a rank's figures were measured on.
enum class Basis { kGpuKernels, kCpuOps, kNone };
const char* BasisName(Basis b);  // "gpu_kernels", "cpu_ops", "none"

// The contract figures of one timeline (a rank, or one step of it). Nanoseconds.
struct Figures {
  int64_t window_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t memory_ns = 0;
  int64_t exposed_communication_ns = 0;
  std::optional<double> comm_compute_overlap;  // none when communication_ns == 0
  int64_t first_ns = 0;  // trace clock of the window's start (for alignment across ranks)
  int64_t last_ns = 0;
};

// One kernel name (or memory operation) and its time.
struct KernelSummary {
  std::string name;
  ActivityClass cls = ActivityClass::kCompute;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
};

// NCCL collectives of one type, data type and process group.
struct CollectiveSummary {
  std::string type;   // "allreduce", "allgather", "reduce_scatter", "sendrecv", "broadcast", ...
  std::string dtype;  // "Float", "float", ... ("" when unknown)
  std::string group;  // process group description or name ("" when unknown)
  int64_t count = 0;
  int64_t total_ns = 0;          // summed kernel time
  int64_t sized = 0;             // how many had a known message size
  int64_t min_bytes = 0;         // over the sized ones
  int64_t median_bytes = 0;
  int64_t max_bytes = 0;
  int64_t total_bytes = 0;
  std::string size_source;  // "kernel args", "record_param_comms", "" (no size known)
};

// One ProfilerStep#N: the CPU-side step and the GPU work launched inside it.
struct StepSummary {
  int64_t number = 0;
  int64_t cpu_ns = 0;     // the ProfilerStep annotation's duration
  int64_t activities = 0; // kernels and memory events assigned to the step
  Figures figures;        // over those activities (window = their span)
  std::optional<int64_t> pipeline_wait_ns;  // see BubbleEstimate; only with p2p kernels
};

// GPU idle gaps and which of them the CPU caused.
struct LaunchSummary {
  int64_t gaps = 0;                 // idle gaps between busy stretches inside the window
  int64_t gap_ns = 0;               // their total (= idle_ns)
  int64_t launch_bound_gaps = 0;    // gaps that end with an activity launched after the gap began
  int64_t launch_bound_ns = 0;      // total length of those gaps
  int64_t unmatched_gaps = 0;       // gaps whose ending activity has no launch in the trace
  int64_t kernels = 0;
  int64_t median_kernel_ns = 0;
  int64_t short_kernels = 0;        // kernels under 10 µs
};

// Pipeline-parallel waiting, where the trace has point-to-point (send/recv) NCCL kernels: the
// time inside the profiled steps when the GPU runs neither compute, memory nor a non-p2p
// collective — it is idle or only waiting in a send/recv.
struct BubbleEstimate {
  int64_t p2p_kernels = 0;
  // True when the p2p kernels are known to be pipeline transfers: their collective args say
  // send/recv, or AnalyzeOptions::pipeline_parallel > 1. Bare SendRecv kernel names are also
  // what NCCL runs for all-to-all, so without either the estimate is not a diagnosis.
  bool pipeline = false;
  int64_t wait_ns = 0;
  int64_t span_ns = 0;  // the steps' GPU spans (or the window, without steps)
  double fraction = 0;  // wait ÷ span
};

// Everything about one rank's trace.
struct RankProfile {
  std::string file;
  std::optional<int> rank;
  std::string rank_source;  // "distributedInfo", "file name" or "unknown"
  std::optional<int> world_size;
  std::string backend;      // distributedInfo.backend ("nccl", "gloo", "")
  Basis basis = Basis::kNone;
  Figures figures;
  int64_t kernels = 0;
  int64_t communication_kernels = 0;
  int64_t memory_events = 0;
  int64_t cpu_ops = 0;  // only counted on the CPU basis
  std::vector<StepSummary> steps;
  std::vector<KernelSummary> top_kernels;  // by total time, longest first
  std::vector<CollectiveSummary> collectives;
  LaunchSummary launch;
  std::optional<BubbleEstimate> bubble;
  std::vector<std::string> notes;  // what the reader should know about this trace
};

// The rank that holds the others back.
struct StragglerReport {
  int straggler_index = 0;     // into ProfileReport::ranks
  double compute_ns = 0;       // its compute per step (or per trace, without common steps)
  double median_compute_ns = 0;  // the other ranks' median
  double imbalance = 0;        // (compute − median) ÷ median
  std::string per;             // "step" or "trace"
  // For each rank (same order as ranks): estimated wait in collectives for the straggler,
  // communication time beyond the straggler's own, per step (or per trace).
  std::vector<double> collective_wait_ns;
};

struct CrossRank {
  // Whether the ranks' clocks agree well enough to compare when things happened.
  bool aligned = true;
  std::optional<int64_t> max_step_offset_ns;  // largest start offset of the same ProfilerStep
  std::optional<StragglerReport> straggler;
  std::vector<std::string> notes;
};

struct ProfileReport {
  std::vector<RankProfile> ranks;  // sorted by rank (unknown ranks last, in argument order)
  CrossRank across;
  std::vector<Diagnosis> diagnoses;  // strongest first
};

struct AnalyzeOptions {
  size_t top_kernels = 10;
  // The run's pipeline-parallel size when known (a campaign knows it from the recipe): 1 means
  // send/recv kernels are not pipeline transfers; > 1 means they are.
  std::optional<int> pipeline_parallel;
};

// Analyses one trace file (plain or gzip chrome-trace JSON). Errors name the file and say what
// to do; see trace_reader.h.
Result<RankProfile> AnalyzeTrace(const std::string& path, const AnalyzeOptions& options);

// Analyses one trace per rank and compares them. Refuses two files that claim the same rank.
Result<ProfileReport> AnalyzeTraces(const std::vector<std::string>& paths,
                                    const AnalyzeOptions& options);

// The report as JSON: {"ranks": [{"rank", "window_us", ...}], "across_ranks": {...},
// "diagnoses": [...]} (docs/profile.md lists every field). Times in microseconds.
nlohmann::json ReportToJson(const ProfileReport& report);

// The report as text tables for people.
void PrintReport(const ProfileReport& report, std::ostream& out);

}  // namespace attune::profile

#endif  // ATTUNE_ENGINE_PROFILE_PROFILE_H_
