#include "profile/collector.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace attune::profile {
namespace {

bool ContainsNoCase(std::string_view text, std::string_view word) {
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Runtime calls that put work on the GPU: their correlation id is the activity's.
bool IsLaunchCall(std::string_view name) {
  return name.find("Launch") != std::string_view::npos ||
         name.find("Memcpy") != std::string_view::npos ||
         name.find("Memset") != std::string_view::npos;
}

// "ProfilerStep#12" → 12; -1 when not a step annotation.
int64_t StepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!StartsWith(name, kPrefix)) return -1;
  std::string digits(name.substr(kPrefix.size()));
  char* end = nullptr;
  long long n = std::strtoll(digits.c_str(), &end, 10);
  return (end == digits.c_str() || *end != '\0') ? -1 : n;
}

CollectiveArgs ArgsOf(const TraceEvent& e) {
  return {e.collective, e.dtype, e.group_desc.empty() ? e.group_name : e.group_desc, e.in_nelems};
}

}  // namespace

bool IsCommunicationKernel(std::string_view name) { return ContainsNoCase(name, "nccl"); }

bool IsCommunicationOp(std::string_view name) {
  return ContainsNoCase(name, "nccl") || ContainsNoCase(name, "gloo") ||
         StartsWith(name, "c10d::") || name == "record_param_comms";
}

int32_t Collector::Intern(const std::string& name, std::unordered_map<std::string, int32_t>* index,
                          std::vector<std::string>* names) {
  auto [it, inserted] = index->try_emplace(name, static_cast<int32_t>(names->size()));
  if (inserted) names->push_back(name);
  return it->second;
}

void Collector::Add(const TraceEvent& e) {
  if (e.ph != "X") return;
  const std::string& cat = e.cat;
  if (collect_cpu_ops_) {
    // Legacy (Kineto-less) traces have no category: every complete event is an operator.
    if ((cat == "cpu_op" || cat.empty()) && StepNumber(e.name) < 0) AddCpuOp(e);
    return;
  }
  if (cat == "kernel") {
    AddActivity(e, IsCommunicationKernel(e.name) ? ActivityClass::kCommunication
                                                 : ActivityClass::kCompute);
  } else if (cat == "gpu_memcpy" || cat == "gpu_memset") {
    AddActivity(e, ActivityClass::kMemory);
  } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
    if (e.correlation && e.has_ts && IsLaunchCall(e.name)) {
      record_->launch_start.emplace(*e.correlation, e.ts_ns);
    }
  } else if (int64_t step = StepNumber(e.name); step >= 0 && e.has_ts) {
    if (cat == "user_annotation" || cat == "cpu_op" || cat.empty()) {
      record_->steps.push_back({step, e.ts_ns, e.ts_ns + std::max<int64_t>(0, e.dur_ns)});
    }
  } else if (e.name == "record_param_comms" && e.external_id && !e.collective.empty()) {
    record_->comm_ops.emplace(*e.external_id, ArgsOf(e));
  }
}

void Collector::AddActivity(const TraceEvent& e, ActivityClass cls) {
  if (!e.has_ts || !e.has_dur || e.dur_ns < 0) {
    ++record_->untimed_activities;
    return;
  }
  Activity a;
  a.start = e.ts_ns;
  a.end = e.ts_ns + e.dur_ns;
  a.correlation = e.correlation.value_or(-1);
  a.external_id = e.external_id.value_or(-1);
  a.name = Intern(e.name, &name_index_, &record_->names);
  a.cls = cls;
  if (cls == ActivityClass::kCommunication && !e.collective.empty()) {
    a.args = static_cast<int32_t>(record_->collective_args.size());
    record_->collective_args.push_back(ArgsOf(e));
  }
  record_->activities.push_back(a);
}

void Collector::AddCpuOp(const TraceEvent& e) {
  if (!e.has_ts || !e.has_dur || e.dur_ns < 0) return;
  CpuOp op;
  op.start = e.ts_ns;
  op.end = e.ts_ns + e.dur_ns;
  op.thread = Intern(e.pid + "/" + e.tid, &thread_index_, &threads_);
  op.communication = IsCommunicationOp(e.name);
  record_->cpu_ops.push_back(op);
}

}  // namespace attune::profile
