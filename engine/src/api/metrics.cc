#include "attune/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attune/launcher.h"

namespace attune {
namespace {

struct FailureName {
  FailureKind kind;
  const char* name;
};
constexpr FailureName kFailureNames[] = {
    {FailureKind::kNone, "none"},
    {FailureKind::kOom, "oom"},
    {FailureKind::kHostOom, "host_oom"},
    {FailureKind::kNcclTimeout, "nccl_timeout"},
    {FailureKind::kNcclError, "nccl_error"},
    {FailureKind::kIllegalMemory, "illegal_memory"},
    {FailureKind::kHang, "hang"},
    {FailureKind::kConfigError, "config_error"},
    {FailureKind::kLaunchError, "launch_error"},
    {FailureKind::kTimeLimit, "time_limit"},
    {FailureKind::kCancelled, "cancelled"},
    {FailureKind::kNodeFailure, "node_failure"},
    {FailureKind::kUnknown, "unknown"},
};

struct StateName {
  JobState state;
  const char* name;
};
constexpr StateName kStateNames[] = {
    {JobState::kUnknown, "unknown"},         {JobState::kPending, "pending"},
    {JobState::kRunning, "running"},         {JobState::kSucceeded, "succeeded"},
    {JobState::kFailed, "failed"},           {JobState::kCancelled, "cancelled"},
    {JobState::kTimedOut, "timed_out"},      {JobState::kNodeFailure, "node_failure"},
    {JobState::kPreempted, "preempted"},     {JobState::kOutOfMemory, "out_of_memory"},
};

}  // namespace

const char* FailureKindName(FailureKind kind) {
  for (const auto& entry : kFailureNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "unknown";
}

std::optional<FailureKind> FailureKindFromName(const std::string& name) {
  for (const auto& entry : kFailureNames) {
    if (name == entry.name) return entry.kind;
  }
  return std::nullopt;
}

const char* JobStateName(JobState state) {
  for (const auto& entry : kStateNames) {
    if (entry.state == state) return entry.name;
  }
  return "unknown";
}

std::optional<JobState> JobStateFromName(const std::string& name) {
  for (const auto& entry : kStateNames) {
    if (name == entry.name) return entry.state;
  }
  return std::nullopt;
}

bool IsTerminal(JobState state) {
  return state != JobState::kUnknown && state != JobState::kPending &&
         state != JobState::kRunning;
}

double JobStatus::DeviceHours() const {
  if (!start_time || !end_time || *end_time < *start_time) return 0;
  return devices * (*end_time - *start_time) / 3600.0;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double CoefficientOfVariation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  if (mean == 0) return 0;
  double sq = 0;
  for (double v : values) sq += (v - mean) * (v - mean);
  return std::sqrt(sq / (values.size() - 1)) / mean;
}

}  // namespace attune
