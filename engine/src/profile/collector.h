// Copyright attune authors.
//
// The compact record of one trace that the analyses work on: what the streaming reader's events
// leave behind (a few dozen bytes per GPU activity, nothing for the events no figure needs).
// Internal to engine/src/profile.
#ifndef ATTUNE_ENGINE_PROFILE_COLLECTOR_H_
#define ATTUNE_ENGINE_PROFILE_COLLECTOR_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/profile.h"
#include "profile/trace_reader.h"

namespace attune::profile {

// Collective arguments carried by an NCCL kernel or a record_param_comms operator.
struct CollectiveArgs {
  std::string collective;
  std::string dtype;
  std::string group;
  std::optional<int64_t> nelems;  // "In msg nelems"
};

// A kernel or a memory event on the GPU.
struct Activity {
  int64_t start = 0;
  int64_t end = 0;
  int64_t correlation = -1;  // -1: none
  int64_t external_id = -1;
  int32_t name = 0;          // index into TraceRecord::names
  int32_t args = -1;         // index into TraceRecord::collective_args, -1: none
  ActivityClass cls = ActivityClass::kCompute;
};

struct StepMark {
  int64_t number = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// A CPU operator (only kept on the CPU basis).
struct CpuOp {
  int64_t start = 0;
  int64_t end = 0;
  int32_t thread = 0;
  bool communication = false;
};

struct TraceRecord {
  std::vector<Activity> activities;
  std::vector<std::string> names;
  std::vector<CollectiveArgs> collective_args;
  std::unordered_map<int64_t, int64_t> launch_start;  // correlation → launch call's start
  std::unordered_map<int64_t, CollectiveArgs> comm_ops;  // record_param_comms by External id
  std::vector<StepMark> steps;
  std::vector<CpuOp> cpu_ops;
  int64_t untimed_activities = 0;  // kernels/memory events without ts or dur
};

// True for a kernel name that is NCCL communication (contains "nccl", any case).
bool IsCommunicationKernel(std::string_view name);
// True for a CPU operator that is a collective (nccl/gloo in the name, c10d::*, record_param_comms).
bool IsCommunicationOp(std::string_view name);

// Fills a TraceRecord from events. Pass 1 (collect_cpu_ops = false) keeps GPU activities,
// launches, steps and record_param_comms; pass 2 (true) keeps only CPU operators.
class Collector {
 public:
  Collector(TraceRecord* record, bool collect_cpu_ops)
      : record_(record), collect_cpu_ops_(collect_cpu_ops) {}
  void Add(const TraceEvent& e);

 private:
  int32_t Intern(const std::string& name, std::unordered_map<std::string, int32_t>* index,
                 std::vector<std::string>* names);
  void AddActivity(const TraceEvent& e, ActivityClass cls);
  void AddCpuOp(const TraceEvent& e);

  TraceRecord* record_;
  bool collect_cpu_ops_;
  std::unordered_map<std::string, int32_t> name_index_;
  std::unordered_map<std::string, int32_t> thread_index_;
  std::vector<std::string> threads_;
};

}  // namespace attune::profile

#endif  // ATTUNE_ENGINE_PROFILE_COLLECTOR_H_
