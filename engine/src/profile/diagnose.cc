// From figures to attune::Diagnosis kinds (metrics.h): communication, launch_overhead,
// pipeline_bubble, compute_bound. Each names the rank where the limiter is strongest.
#include <algorithm>
#include <cstdio>
#include <functional>

#include "profile/parts.h"

namespace attune::profile {
namespace {

// Below this share of the window a limiter is not worth a lever.
constexpr double kMinShare = 0.05;

std::string Format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c);
  return buf;
}

std::string RankName(const RankProfile& p) {
  return p.rank ? "rank " + std::to_string(*p.rank) : p.file;
}

double Share(int64_t part, const RankProfile& p) {
  return p.figures.window_ns > 0 ? static_cast<double>(part) / static_cast<double>(p.figures.window_ns)
                                 : 0;
}

// The rank where `share` is largest, and that share.
std::pair<const RankProfile*, double> Strongest(const ProfileReport& report,
                                                const std::function<double(const RankProfile&)>& share) {
  const RankProfile* best = nullptr;
  double best_share = 0;
  for (const RankProfile& p : report.ranks) {
    if (p.basis == Basis::kNone) continue;
    double s = share(p);
    if (!best || s > best_share) {
      best = &p;
      best_share = s;
    }
  }
  return {best, best_share};
}

void Communication(const ProfileReport& report, std::vector<Diagnosis>* out) {
  auto [p, share] = Strongest(report, [](const RankProfile& r) {
    return Share(r.figures.exposed_communication_ns, r);
  });
  if (!p || share < kMinShare) return;
  std::string evidence =
      "exposed communication " + Format("%.0f%% of the window on ", 100 * share) + RankName(*p) +
      Format(" (%.1f of %.1f ms", p->figures.exposed_communication_ns / 1e6,
             p->figures.window_ns / 1e6) +
      Format("; %.0f%% of its communication overlaps compute)",
             100 * p->figures.comm_compute_overlap.value_or(0));
  const auto& straggler = report.across.straggler;
  if (straggler && straggler->imbalance >= 0.1) {
    evidence += "; " + RankName(report.ranks[straggler->straggler_index]) +
                Format(" computes %.0f%% longer than the median rank: the others wait for it",
                       100 * straggler->imbalance);
  }
  out->push_back({"communication", std::min(1.0, share), evidence});
}

void LaunchOverhead(const ProfileReport& report, std::vector<Diagnosis>* out) {
  auto [p, share] = Strongest(report, [](const RankProfile& r) {
    // On the CPU basis every gap between operators is host time: Python and framework overhead.
    return Share(r.basis == Basis::kCpuOps ? r.figures.idle_ns : r.launch.launch_bound_ns, r);
  });
  if (!p || share < kMinShare) return;
  std::string evidence;
  if (p->basis == Basis::kCpuOps) {
    evidence = "no operator runs " + Format("%.0f%% of the window on ", 100 * share) +
               RankName(*p) + " (host overhead between operators)";
  } else {
    evidence = "the GPU waits for kernel launches " +
               Format("%.0f%% of the window on ", 100 * share) + RankName(*p) + " (" +
               std::to_string(p->launch.launch_bound_gaps) + " idle gaps ended by a kernel " +
               "launched after the gap began" +
               Format("; median kernel %.1f us)", p->launch.median_kernel_ns / 1e3);
  }
  out->push_back({"launch_overhead", std::min(1.0, share), evidence});
}

void PipelineBubble(const ProfileReport& report, std::vector<Diagnosis>* out) {
  auto [p, share] = Strongest(report, [](const RankProfile& r) {
    return r.bubble && r.bubble->pipeline ? r.bubble->fraction : 0.0;
  });
  if (!p || share < kMinShare || !p->bubble || !p->bubble->pipeline) return;
  std::string evidence =
      "pipeline wait " + Format("%.0f%% of the profiled steps on ", 100 * share) + RankName(*p) +
      " (GPU idle or only in send/recv" +
      Format(" for %.1f of %.1f ms, %.0f p2p kernels)", p->bubble->wait_ns / 1e6,
             p->bubble->span_ns / 1e6, static_cast<double>(p->bubble->p2p_kernels));
  out->push_back({"pipeline_bubble", std::min(1.0, share), evidence});
}

void ComputeBound(const ProfileReport& report, std::vector<Diagnosis>* out) {
  double strongest = 0;
  for (const Diagnosis& d : *out) strongest = std::max(strongest, d.severity);
  auto [p, share] = Strongest(report, [](const RankProfile& r) { return Share(r.figures.compute_ns, r); });
  if (!p || share < 0.5 || strongest >= 0.3) return;
  out->push_back({"compute_bound", std::min(1.0, share),
                  "compute " + Format("%.0f%% of the window on ", 100 * share) + RankName(*p) +
                      "; no stronger limiter in the trace"});
}

}  // namespace

std::vector<Diagnosis> DiagnoseProfile(const ProfileReport& report) {
  std::vector<Diagnosis> out;
  Communication(report, &out);
  LaunchOverhead(report, &out);
  PipelineBubble(report, &out);
  ComputeBound(report, &out);
  std::stable_sort(out.begin(), out.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.severity > b.severity; });
  return out;
}

}  // namespace attune::profile
