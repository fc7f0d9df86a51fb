// Copyright attune authors.
//
// The analyses that turn a TraceRecord into a RankProfile, and the comparisons across ranks.
// Internal to engine/src/profile; each is a pure function.
#ifndef ATTUNE_ENGINE_PROFILE_PARTS_H_
#define ATTUNE_ENGINE_PROFILE_PARTS_H_

#include <string>
#include <vector>

#include "profile/collector.h"
#include "profile/intervals.h"
#include "profile/profile.h"

namespace attune::profile {

// The contract figures from the class unions and the window's ends.
Figures FiguresFromSets(const IntervalSet& compute, const IntervalSet& communication,
                        const IntervalSet& memory, int64_t first, int64_t last);
// The contract figures over GPU activities (kernels and memory events).
Figures FiguresOf(const std::vector<Activity>& activities);
// The CPU-basis figures over CPU operators (see profile.h).
Figures CpuFiguresOf(const std::vector<CpuOp>& ops);

std::vector<KernelSummary> TopKernels(const TraceRecord& record, size_t limit);
std::vector<CollectiveSummary> Collectives(const TraceRecord& record);
LaunchSummary Launches(const TraceRecord& record);
// Per-step figures; with p2p kernels, each step's pipeline wait too. Activities belong to the
// step whose ProfilerStep annotation was open when the CPU launched them; the GPU timeline is cut
// at the first start of each step's activities, so the steps' GPU spans tile the window from the
// first step's work to the end of the last step's.
std::vector<StepSummary> Steps(const TraceRecord& record);
// Only when the trace has point-to-point (send/recv) NCCL kernels and options do not rule
// pipeline parallelism out.
std::optional<BubbleEstimate> Bubble(const TraceRecord& record, const std::vector<StepSummary>& steps,
                                     const AnalyzeOptions& options);

// The canonical collective type of an NCCL activity (from its args, the record_param_comms that
// launched it, or its kernel name).
std::string CollectiveTypeOf(const TraceRecord& record, const Activity& activity);
// Point-to-point NCCL work (send, recv, sendrecv). kNamed: its collective args say send/recv
// (pipeline transfers); kKernelName: only a SendRecv kernel name, which NCCL also uses for
// all-to-all, so it may not be pipeline parallelism.
enum class PointToPoint { kNone, kNamed, kKernelName };
PointToPoint PointToPointOf(const TraceRecord& record, const Activity& activity);
bool IsPointToPoint(const TraceRecord& record, const Activity& activity);

// The canonical collective type of a "Collective name" argument or an NCCL kernel name:
// "allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "sendrecv", "send", "recv",
// "reduce", "barrier", "gather", "scatter", or the lower-cased input.
std::string CollectiveType(std::string_view text);
// The collective part of an NCCL kernel name ("ncclKernel_AllReduce_RING_LL_Sum_float(...)" →
// "AllReduce") and its element type when the name carries one ("float"); empty when unknown.
std::string KernelCollective(std::string_view kernel_name);
std::string KernelDtype(std::string_view kernel_name);
// Bytes per element of a dtype as traces spell it ("Float", "BFloat16", "int8_t"); 0 if unknown.
int DtypeBytes(std::string_view dtype);

// Cross-rank: clock alignment and the straggler.
CrossRank CompareRanks(const std::vector<RankProfile>& ranks);

// The diagnoses a report supports (strongest first).
std::vector<Diagnosis> DiagnoseProfile(const ProfileReport& report);

}  // namespace attune::profile

#endif  // ATTUNE_ENGINE_PROFILE_PARTS_H_
