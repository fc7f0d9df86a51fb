// The contract figures (profile.h) as interval arithmetic.
#include <algorithm>
#include <limits>
#include <map>

#include "profile/parts.h"

namespace attune::profile {

Figures FiguresFromSets(const IntervalSet& compute, const IntervalSet& communication,
                        const IntervalSet& memory, int64_t first, int64_t last) {
  Figures f;
  if (last < first) return f;
  f.first_ns = first;
  f.last_ns = last;
  f.window_ns = last - first;
  f.busy_ns = compute.Union(communication).Union(memory).Length();
  f.idle_ns = f.window_ns - f.busy_ns;
  f.compute_ns = compute.Length();
  f.communication_ns = communication.Length();
  f.memory_ns = memory.Length();
  int64_t overlap = communication.Intersect(compute).Length();
  f.exposed_communication_ns = f.communication_ns - overlap;
  if (f.communication_ns > 0) {
    f.comm_compute_overlap = static_cast<double>(overlap) / static_cast<double>(f.communication_ns);
  }
  return f;
}

Figures FiguresOf(const std::vector<Activity>& activities) {
  std::vector<Interval> by_class[3];
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (const Activity& a : activities) {
    by_class[static_cast<int>(a.cls)].push_back({a.start, a.end});
    first = std::min(first, a.start);
    last = std::max(last, a.end);
  }
  if (activities.empty()) return Figures{};
  return FiguresFromSets(IntervalSet::Of(std::move(by_class[0])),
                         IntervalSet::Of(std::move(by_class[1])),
                         IntervalSet::Of(std::move(by_class[2])), first, last);
}

// Per thread, a collective operator's whole span is communication (its children included) and
// the other operators' time outside it is compute: a parent op that encloses a collective (an
// autograd node calling all_reduce) must not be counted as computing while it waits.
Figures CpuFiguresOf(const std::vector<CpuOp>& ops) {
  if (ops.empty()) return Figures{};
  std::map<int32_t, std::pair<std::vector<Interval>, std::vector<Interval>>> per_thread;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (const CpuOp& op : ops) {
    auto& [compute, comm] = per_thread[op.thread];
    (op.communication ? comm : compute).push_back({op.start, op.end});
    first = std::min(first, op.start);
    last = std::max(last, op.end);
  }
  IntervalSet compute, comm;
  for (auto& [thread, sets] : per_thread) {
    IntervalSet thread_comm = IntervalSet::Of(std::move(sets.second));
    compute = compute.Union(IntervalSet::Of(std::move(sets.first)).Subtract(thread_comm));
    comm = comm.Union(thread_comm);
  }
  return FiguresFromSets(compute, comm, IntervalSet(), first, last);
}

}  // namespace attune::profile
