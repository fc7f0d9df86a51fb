// The report as text: a per-rank table, then each rank's steps, kernels and collectives, then the
// comparison across ranks and the diagnoses.
#include <cstdio>
#include <ostream>

#include "profile/parts.h"

namespace attune::profile {
namespace {

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

std::string Pct(int64_t part, int64_t whole) {
  return whole > 0 ? Fmt("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole))
                   : "-";
}

std::string Ms(int64_t ns) { return Fmt("%.2f", static_cast<double>(ns) / 1e6); }

std::string RankLabel(const RankProfile& p) { return p.rank ? std::to_string(*p.rank) : "?"; }

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

std::string Shorten(const std::string& name, size_t width) {
  return name.size() <= width ? name : name.substr(0, width - 3) + "...";
}

void PrintSummaryTable(const ProfileReport& r, std::ostream& out) {
  out << Pad("rank", 6) << Pad("basis", 13) << Pad("window ms", 12) << Pad("busy", 8)
      << Pad("compute", 9) << Pad("comm", 8) << Pad("exposed", 9) << Pad("overlap", 9)
      << Pad("memory", 8) << Pad("idle", 8) << "launch-bound\n";
  for (const RankProfile& p : r.ranks) {
    const Figures& f = p.figures;
    out << Pad(RankLabel(p), 6) << Pad(BasisName(p.basis), 13) << Pad(Ms(f.window_ns), 12)
        << Pad(Pct(f.busy_ns, f.window_ns), 8) << Pad(Pct(f.compute_ns, f.window_ns), 9)
        << Pad(Pct(f.communication_ns, f.window_ns), 8)
        << Pad(Pct(f.exposed_communication_ns, f.window_ns), 9)
        << Pad(f.comm_compute_overlap ? Fmt("%.0f%%", 100 * *f.comm_compute_overlap) : "-", 9)
        << Pad(Pct(f.memory_ns, f.window_ns), 8) << Pad(Pct(f.idle_ns, f.window_ns), 8)
        << (p.basis == Basis::kGpuKernels ? Pct(p.launch.launch_bound_ns, f.window_ns) : "-")
        << "\n";
  }
  out << "(percentages of each rank's window; exposed = communication not overlapped by compute)\n";
}

void PrintSteps(const RankProfile& p, std::ostream& out) {
  if (p.steps.empty()) return;
  out << "  " << Pad("step", 8) << Pad("cpu ms", 10) << Pad("span ms", 10) << Pad("compute", 9)
      << Pad("comm", 8) << Pad("exposed", 9) << Pad("idle", 8) << "pipeline wait\n";
  for (const StepSummary& s : p.steps) {
    const Figures& f = s.figures;
    out << "  " << Pad(std::to_string(s.number), 8) << Pad(Ms(s.cpu_ns), 10)
        << Pad(Ms(f.window_ns), 10) << Pad(Pct(f.compute_ns, f.window_ns), 9)
        << Pad(Pct(f.communication_ns, f.window_ns), 8)
        << Pad(Pct(f.exposed_communication_ns, f.window_ns), 9)
        << Pad(Pct(f.idle_ns, f.window_ns), 8)
        << (s.pipeline_wait_ns ? Pct(*s.pipeline_wait_ns, f.window_ns) : "-") << "\n";
  }
}

void PrintKernels(const RankProfile& p, std::ostream& out) {
  if (p.top_kernels.empty()) return;
  out << "  top kernels by time:\n";
  for (const KernelSummary& k : p.top_kernels) {
    out << "    " << Pad(Ms(k.total_ns) + " ms", 12) << Pad(Pct(k.total_ns, p.figures.busy_ns), 7)
        << Pad(std::to_string(k.count) + "x", 8) << Pad(ActivityClassName(k.cls), 14)
        << Shorten(k.name, 90) << "\n";
  }
}

void PrintCollectives(const RankProfile& p, std::ostream& out) {
  if (p.collectives.empty()) return;
  out << "  NCCL collectives:\n";
  for (const CollectiveSummary& c : p.collectives) {
    out << "    " << Pad(c.type, 14) << Pad(c.dtype.empty() ? "-" : c.dtype, 10)
        << Pad(std::to_string(c.count) + "x", 7) << Pad(Ms(c.total_ns) + " ms", 12);
    if (c.sized > 0) {
      out << "median " << Fmt("%.2f", c.median_bytes / 1048576.0) << " MiB (" 
          << Fmt("%.2f", c.min_bytes / 1048576.0) << "-" << Fmt("%.2f", c.max_bytes / 1048576.0)
          << ", " << c.size_source << ")";
    } else {
      out << "size unknown";
    }
    if (!c.group.empty()) out << ", group " << c.group;
    out << "\n";
  }
}

void PrintRank(const RankProfile& p, std::ostream& out) {
  out << "\nrank " << RankLabel(p) << " (" << p.file << ", rank from " << p.rank_source;
  if (p.world_size) out << ", world size " << *p.world_size;
  out << ")\n";
  if (p.basis == Basis::kGpuKernels) {
    out << "  " << p.kernels << " kernels (" << p.communication_kernels << " NCCL), "
        << p.memory_events << " memory events; " << p.launch.gaps << " idle gaps, "
        << p.launch.launch_bound_gaps << " launch-bound (" << Ms(p.launch.launch_bound_ns)
        << " ms); median kernel " << Fmt("%.1f", p.launch.median_kernel_ns / 1e3) << " us\n";
  } else if (p.basis == Basis::kCpuOps) {
    out << "  " << p.cpu_ops << " CPU operators\n";
  }
  if (p.bubble) {
    out << "  pipeline wait: " << Ms(p.bubble->wait_ns) << " of " << Ms(p.bubble->span_ns)
        << " ms (" << Fmt("%.1f%%", 100 * p.bubble->fraction) << ", " << p.bubble->p2p_kernels
        << " p2p kernels)\n";
  }
  PrintSteps(p, out);
  PrintKernels(p, out);
  PrintCollectives(p, out);
  for (const std::string& n : p.notes) out << "  note: " << n << "\n";
}

void PrintAcross(const ProfileReport& r, std::ostream& out) {
  if (r.ranks.size() < 2) return;
  out << "\nacross ranks: clocks " << (r.across.aligned ? "aligned" : "NOT aligned");
  if (r.across.max_step_offset_ns) {
    out << " (largest step start offset " << Ms(*r.across.max_step_offset_ns) << " ms)";
  }
  out << "\n";
  if (const auto& s = r.across.straggler) {
    out << "  straggler: rank " << RankLabel(r.ranks[s->straggler_index]) << ", compute "
        << Fmt("%.2f", s->compute_ns / 1e6) << " ms per " << s->per << " vs median "
        << Fmt("%.2f", s->median_compute_ns / 1e6) << " ms ("
        << Fmt("%+.1f%%", 100 * s->imbalance) << ")\n";
  }
  for (const std::string& n : r.across.notes) out << "  note: " << n << "\n";
}

}  // namespace

void PrintReport(const ProfileReport& report, std::ostream& out) {
  PrintSummaryTable(report, out);
  for (const RankProfile& p : report.ranks) PrintRank(p, out);
  PrintAcross(report, out);
  out << "\ndiagnosis:\n";
  if (report.diagnoses.empty()) out << "  nothing stands out\n";
  for (const Diagnosis& d : report.diagnoses) {
    out << "  " << Pad(d.kind, 17) << Fmt("%.2f", d.severity) << "  " << d.evidence << "\n";
  }
}

}  // namespace attune::profile
