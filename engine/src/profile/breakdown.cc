// Top kernels, launch overhead, per-step figures and the pipeline-wait estimate of one rank.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "profile/parts.h"

namespace attune::profile {
namespace {

constexpr int64_t kShortKernelNs = 10'000;

// When the CPU asked for the activity: its launch call's start, else the activity's own start.
int64_t LaunchTime(const TraceRecord& r, const Activity& a) {
  auto it = r.launch_start.find(a.correlation);
  return (a.correlation >= 0 && it != r.launch_start.end()) ? it->second : a.start;
}

bool HasPointToPoint(const TraceRecord& r) {
  return std::any_of(r.activities.begin(), r.activities.end(),
                     [&](const Activity& a) { return IsPointToPoint(r, a); });
}

// Step annotations sorted by start, one per step number (a repeated number keeps the first).
std::vector<StepMark> SortedSteps(const TraceRecord& r) {
  std::vector<StepMark> marks = r.steps;
  std::sort(marks.begin(), marks.end(),
            [](const StepMark& a, const StepMark& b) { return a.start < b.start; });
  std::vector<StepMark> unique;
  for (const StepMark& m : marks) {
    bool seen = std::any_of(unique.begin(), unique.end(),
                            [&](const StepMark& u) { return u.number == m.number; });
    if (!seen) unique.push_back(m);
  }
  return unique;
}

}  // namespace

std::vector<KernelSummary> TopKernels(const TraceRecord& r, size_t limit) {
  std::unordered_map<int32_t, KernelSummary> by_name;
  for (const Activity& a : r.activities) {
    KernelSummary& k = by_name[a.name];
    k.cls = a.cls;
    ++k.count;
    k.total_ns += a.end - a.start;
    k.max_ns = std::max(k.max_ns, a.end - a.start);
  }
  std::vector<KernelSummary> out;
  for (auto& [name, k] : by_name) {
    k.name = r.names[name];
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const KernelSummary& a, const KernelSummary& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

// Sweeps the activities in start order; each idle gap ends at the activity that starts the next
// busy stretch. The gap is launch-bound when that activity's launch call began after the GPU
// went idle: the GPU waited for the CPU, not for other GPU work.
LaunchSummary Launches(const TraceRecord& r) {
  LaunchSummary s;
  std::vector<const Activity*> order;
  std::vector<int64_t> kernel_ns;
  for (const Activity& a : r.activities) {
    order.push_back(&a);
    if (a.cls != ActivityClass::kMemory) kernel_ns.push_back(a.end - a.start);
  }
  std::sort(order.begin(), order.end(), [](const Activity* a, const Activity* b) {
    return a->start != b->start ? a->start < b->start : a->correlation < b->correlation;
  });
  int64_t busy_end = order.empty() ? 0 : order.front()->end;
  for (size_t i = 1; i < order.size(); ++i) {
    const Activity& a = *order[i];
    if (a.start > busy_end) {
      ++s.gaps;
      s.gap_ns += a.start - busy_end;
      auto launch = r.launch_start.find(a.correlation);
      if (a.correlation < 0 || launch == r.launch_start.end()) {
        ++s.unmatched_gaps;
      } else if (launch->second > busy_end) {
        ++s.launch_bound_gaps;
        s.launch_bound_ns += a.start - busy_end;
      }
    }
    busy_end = std::max(busy_end, a.end);
  }
  s.kernels = static_cast<int64_t>(kernel_ns.size());
  if (!kernel_ns.empty()) {
    std::nth_element(kernel_ns.begin(), kernel_ns.begin() + kernel_ns.size() / 2, kernel_ns.end());
    s.median_kernel_ns = kernel_ns[kernel_ns.size() / 2];
    s.short_kernels = std::count_if(kernel_ns.begin(), kernel_ns.end(),
                                    [](int64_t ns) { return ns < kShortKernelNs; });
  }
  return s;
}

namespace {

// The classes' unions, and the union of everything but point-to-point transfers.
struct ClassSets {
  IntervalSet compute, communication, memory, working;
};

ClassSets SetsOf(const TraceRecord& r) {
  std::vector<Interval> compute, comm, memory, working;
  for (const Activity& a : r.activities) {
    Interval i{a.start, a.end};
    (a.cls == ActivityClass::kCompute ? compute
     : a.cls == ActivityClass::kMemory ? memory
                                       : comm).push_back(i);
    if (!IsPointToPoint(r, a)) working.push_back(i);
  }
  return {IntervalSet::Of(std::move(compute)), IntervalSet::Of(std::move(comm)),
          IntervalSet::Of(std::move(memory)), IntervalSet::Of(std::move(working))};
}

// Which step each activity belongs to (-1: none): GPU work belongs to the step during which the
// CPU launched it (GPU time lags the CPU).
std::vector<int> AssignSteps(const TraceRecord& r, const std::vector<StepMark>& marks) {
  std::vector<int> out;
  out.reserve(r.activities.size());
  for (const Activity& a : r.activities) {
    int64_t t = LaunchTime(r, a);
    auto after = std::upper_bound(marks.begin(), marks.end(), t,
                                  [](int64_t time, const StepMark& m) { return time < m.start; });
    int index = static_cast<int>(after - marks.begin()) - 1;
    out.push_back(index >= 0 && t < marks[index].end ? index : -1);
  }
  return out;
}

}  // namespace

std::vector<StepSummary> Steps(const TraceRecord& r) {
  std::vector<StepMark> marks = SortedSteps(r);
  if (marks.empty() || r.activities.empty()) return {};
  std::vector<int> step_of = AssignSteps(r, marks);
  std::vector<int64_t> count(marks.size(), 0);
  std::vector<int64_t> begin(marks.size(), std::numeric_limits<int64_t>::max());
  std::vector<int64_t> finish(marks.size(), std::numeric_limits<int64_t>::min());
  for (size_t i = 0; i < r.activities.size(); ++i) {
    if (step_of[i] < 0) continue;
    ++count[step_of[i]];
    begin[step_of[i]] = std::min(begin[step_of[i]], r.activities[i].start);
    finish[step_of[i]] = std::max(finish[step_of[i]], r.activities[i].end);
  }
  // Cut points: each step with work starts at its first activity (never before the previous cut).
  std::vector<int64_t> cut(marks.size(), 0);
  int64_t previous = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < marks.size(); ++i) {
    if (count[i] == 0) continue;
    cut[i] = previous = std::max(previous, begin[i]);
  }
  ClassSets sets = SetsOf(r);
  bool p2p = HasPointToPoint(r);
  std::vector<StepSummary> out;
  for (size_t i = 0; i < marks.size(); ++i) {
    StepSummary s;
    s.number = marks[i].number;
    s.cpu_ns = marks[i].end - marks[i].start;
    s.activities = count[i];
    if (count[i] > 0) {
      size_t next = i + 1;
      while (next < marks.size() && count[next] == 0) ++next;
      // The last step with work ends with its own last activity (work launched after the
      // profiled steps is not a step's).
      int64_t end = next < marks.size() ? cut[next] : std::max(cut[i], finish[i]);
      s.figures = FiguresFromSets(sets.compute.Clip(cut[i], end), sets.communication.Clip(cut[i], end),
                                  sets.memory.Clip(cut[i], end), cut[i], end);
      if (p2p) s.pipeline_wait_ns = (end - cut[i]) - sets.working.Clip(cut[i], end).Length();
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<BubbleEstimate> Bubble(const TraceRecord& r, const std::vector<StepSummary>& steps,
                                     const AnalyzeOptions& options) {
  if (options.pipeline_parallel && *options.pipeline_parallel <= 1) return std::nullopt;
  BubbleEstimate b;
  bool all_named = true;
  for (const Activity& a : r.activities) {
    PointToPoint kind = PointToPointOf(r, a);
    if (kind == PointToPoint::kNone) continue;
    ++b.p2p_kernels;
    all_named = all_named && kind == PointToPoint::kNamed;
  }
  if (b.p2p_kernels == 0) return std::nullopt;
  b.pipeline = all_named || (options.pipeline_parallel && *options.pipeline_parallel > 1);
  for (const StepSummary& s : steps) {
    if (s.activities == 0) continue;
    b.wait_ns += s.pipeline_wait_ns.value_or(0);
    b.span_ns += s.figures.window_ns;
  }
  if (b.span_ns == 0) {  // no steps with GPU work: the whole window
    Figures whole = FiguresOf(r.activities);
    b.span_ns = whole.window_ns;
    b.wait_ns = whole.window_ns - SetsOf(r).working.Length();
  }
  b.fraction = b.span_ns > 0 ? static_cast<double>(b.wait_ns) / static_cast<double>(b.span_ns) : 0;
  return b;
}

}  // namespace attune::profile
