// AnalyzeTrace / AnalyzeTraces: read each file (streaming), identify its rank, measure it.
#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

#include "profile/parts.h"

namespace attune::profile {

const char* ActivityClassName(ActivityClass c) {
  switch (c) {
    case ActivityClass::kCompute: return "compute";
    case ActivityClass::kCommunication: return "communication";
    case ActivityClass::kMemory: return "memory";
  }
  return "compute";
}

const char* BasisName(Basis b) {
  switch (b) {
    case Basis::kGpuKernels: return "gpu_kernels";
    case Basis::kCpuOps: return "cpu_ops";
    case Basis::kNone: return "none";
  }
  return "none";
}

namespace {

std::optional<int> IntField(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  return j[key].get<int>();
}

// "trace_rank3.json.gz", "rank-3.pt.trace.json", "worker_rank_12.json" → the rank.
std::optional<int> RankFromFileName(const std::string& path) {
  static const std::regex kRank(R"((?:^|[^a-z0-9])rank[-_]?(\d+))", std::regex::icase);
  std::string base = std::filesystem::path(path).filename().string();
  std::smatch m;
  if (!std::regex_search(base, m, kRank)) return std::nullopt;
  return std::stoi(m[1]);
}

void Identify(const TraceHeader& header, RankProfile* p) {
  const nlohmann::json& info = header.distributed_info;
  p->world_size = IntField(info, "world_size");
  if (info.is_object() && info.contains("backend") && info["backend"].is_string()) {
    p->backend = info["backend"].get<std::string>();
  }
  if ((p->rank = IntField(info, "rank"))) {
    p->rank_source = "distributedInfo";
    return;
  }
  std::string missing = info.is_null() ? "no distributedInfo" : "distributedInfo without a rank";
  if ((p->rank = RankFromFileName(p->file))) {
    p->rank_source = "file name";
    p->notes.push_back(missing + ": rank " + std::to_string(*p->rank) +
                       " taken from the file name");
    return;
  }
  p->rank_source = "unknown";
  p->notes.push_back(missing + " and no rank<N> in the file name: the rank is unknown. Profile "
                     "after torch.distributed is initialised (Kineto then records the rank), or "
                     "name the file after its rank (tensorboard_trace_handler(dir, worker_name="
                     "'rank<N>'))");
}

// CPU-basis steps: each ProfilerStep's operators (by start time).
std::vector<StepSummary> CpuSteps(const TraceRecord& r) {
  std::vector<StepSummary> out;
  for (const StepMark& m : r.steps) {
    std::vector<CpuOp> inside;
    for (const CpuOp& op : r.cpu_ops) {
      if (op.start >= m.start && op.start < m.end) inside.push_back(op);
    }
    StepSummary s;
    s.number = m.number;
    s.cpu_ns = m.end - m.start;
    s.activities = static_cast<int64_t>(inside.size());
    s.figures = CpuFiguresOf(inside);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const StepSummary& a, const StepSummary& b) { return a.number < b.number; });
  return out;
}

void MeasureGpu(const TraceRecord& r, const AnalyzeOptions& options, RankProfile* p) {
  p->basis = Basis::kGpuKernels;
  p->figures = FiguresOf(r.activities);
  for (const Activity& a : r.activities) {
    p->kernels += a.cls != ActivityClass::kMemory;
    p->communication_kernels += a.cls == ActivityClass::kCommunication;
    p->memory_events += a.cls == ActivityClass::kMemory;
  }
  p->steps = Steps(r);
  p->top_kernels = TopKernels(r, options.top_kernels);
  p->collectives = Collectives(r);
  p->launch = Launches(r);
  p->bubble = Bubble(r, p->steps, options);
  if (p->bubble && !p->bubble->pipeline) {
    p->notes.push_back(std::to_string(p->bubble->p2p_kernels) +
                       " SendRecv kernels without collective names: NCCL runs them for pipeline "
                       "transfers and for all-to-all alike, so the pipeline wait is not "
                       "diagnosed; give the run's pipeline-parallel size (--pipeline-parallel N) "
                       "to decide");
  }
  if (p->kernels == 0) {
    p->notes.push_back("no GPU kernels (cat \"kernel\"), only memory copies/sets: compute and "
                       "communication are 0");
  }
}

Status MeasureCpu(const std::string& path, TraceRecord* r, RankProfile* p) {
  Collector cpu(r, /*collect_cpu_ops=*/true);
  auto second = ReadTrace(path, [&](const TraceEvent& e) { cpu.Add(e); });
  if (!second.ok()) return second.status();
  if (r->cpu_ops.empty()) {
    p->notes.push_back("no GPU kernels, memory events or CPU operators with a duration: nothing "
                       "to measure. Is this a profiler trace of a training run (torch.profiler "
                       "with ProfilerActivity.CUDA for GPU work)?");
    return Status::Ok();
  }
  p->basis = Basis::kCpuOps;
  p->cpu_ops = static_cast<int64_t>(r->cpu_ops.size());
  p->figures = CpuFiguresOf(r->cpu_ops);
  p->steps = CpuSteps(*r);
  p->notes.push_back("no GPU kernels (cat \"kernel\") or memory events: a CPU-only trace; the "
                     "figures are measured on CPU operators instead (docs/profile.md)");
  return Status::Ok();
}

}  // namespace

Result<RankProfile> AnalyzeTrace(const std::string& path, const AnalyzeOptions& options) {
  TraceRecord record;
  Collector collector(&record, /*collect_cpu_ops=*/false);
  ATTUNE_ASSIGN_OR_RETURN(TraceHeader header,
                          ReadTrace(path, [&](const TraceEvent& e) { collector.Add(e); }));
  RankProfile p;
  p.file = path;
  Identify(header, &p);
  if (!record.activities.empty()) {
    MeasureGpu(record, options, &p);
  } else {
    ATTUNE_RETURN_IF_ERROR(MeasureCpu(path, &record, &p));
  }
  if (record.untimed_activities > 0) {
    p.notes.push_back(std::to_string(record.untimed_activities) +
                      " kernel/memory events without ts or dur were left out");
  }
  if (header.skipped_events > 0) {
    p.notes.push_back(std::to_string(header.skipped_events) +
                      " elements of traceEvents were not objects and were skipped");
  }
  return p;
}

Result<ProfileReport> AnalyzeTraces(const std::vector<std::string>& paths,
                                    const AnalyzeOptions& options) {
  if (paths.empty()) return Status::InvalidArgument("no trace files given");
  ProfileReport report;
  std::map<int, std::string> seen;
  for (const std::string& path : paths) {
    ATTUNE_ASSIGN_OR_RETURN(RankProfile p, AnalyzeTrace(path, options));
    if (p.rank) {
      auto [it, fresh] = seen.emplace(*p.rank, path);
      if (!fresh) {
        return Status::InvalidArgument(
            path + ": rank " + std::to_string(*p.rank) + " (from its " + p.rank_source +
            ") was already given by " + it->second +
            ": pass one trace per rank (torch.profiler writes one file per profiling cycle and "
            "rank; pick one cycle)");
      }
    }
    report.ranks.push_back(std::move(p));
  }
  std::stable_sort(report.ranks.begin(), report.ranks.end(),
                   [](const RankProfile& a, const RankProfile& b) {
                     if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
                     return a.rank && *a.rank < *b.rank;
                   });
  report.across = CompareRanks(report.ranks);
  report.diagnoses = DiagnoseProfile(report);
  return report;
}

}  // namespace attune::profile
