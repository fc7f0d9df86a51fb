#include <algorithm>
#include <cstdio>

#include "log_parser.h"
#include "recipe_view.h"
#include "timers.h"
#include "triage.h"

namespace attune::megatron {
namespace {

std::string F(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

void Memory(const Measurement& m, const ClusterInfo& c, std::vector<Diagnosis>* out) {
  if (!m.peak_memory_gib || c.device_memory_gib <= 0) return;
  double used = *m.peak_memory_gib / c.device_memory_gib;
  std::string evidence = "peak reserved " + F(*m.peak_memory_gib) + " of " + F(c.device_memory_gib) +
                         " GiB (" + F(100 * used, 0) + "%)";
  if (used >= 0.9) out->push_back({"memory_pressure", std::min(1.0, (used - 0.85) * 5), evidence});
  else if (used <= 0.7) out->push_back({"memory_headroom", std::min(1.0, 0.7 - used + 0.1), evidence});
}

void CommunicationFromRecipe(const RecipeView& v, std::vector<Diagnosis>* out) {
  if (v.tp > v.nvlink_gpus) {
    out->push_back({"communication", 0.6,
                    "TP " + std::to_string(v.tp) + " spans NVLink domains (" +
                        std::to_string(v.nvlink_gpus) + " GPUs per domain)"});
  }
  if (v.dp > 1 && !v.overlap_grad) {
    out->push_back({"communication", v.nodes > 1 ? 0.3 : 0.15,
                    "DP " + std::to_string(v.dp) + " without --overlap-grad-reduce"});
  }
  if (v.dp > 1 && v.dist_opt && !v.overlap_param) {
    out->push_back({"communication", 0.1, "distributed optimizer without --overlap-param-gather"});
  }
  if (v.tp > 1 && v.sp && !v.tp_comm_overlap) {
    out->push_back({"communication", 0.1, "TP " + std::to_string(v.tp) + " with SP but no --tp-comm-overlap"});
  }
}

void Bubble(const RecipeView& v, std::vector<Diagnosis>* out) {
  if (v.pp <= 1 || v.micro_batches <= 0) return;
  double bubble = static_cast<double>(v.pp - 1) / (static_cast<double>(v.micro_batches) * v.vpp);
  if (bubble < 0.03) return;
  out->push_back({"pipeline_bubble", std::min(1.0, bubble / (1 + bubble)),
                  "bubble (PP-1)/(M*VPP) = (" + std::to_string(v.pp) + "-1)/(" +
                      std::to_string(v.micro_batches) + "*" + std::to_string(v.vpp) + ") = " + F(bubble, 3)});
}

// Host launch time shows where a micro-batch's GPU work is short. Many micro-batches alone do not
// make it so: 128 micro-batches of size 1 at 50 ms each keep the GPU busy whatever launches them,
// so with a measured step time (always here) only the length of a micro-batch counts.
void LaunchOverhead(const RecipeView& v, const Measurement& m, std::vector<Diagnosis>* out) {
  if (v.cuda_graphs || v.micro_batches <= 0 || m.step_time_s <= 0) return;
  double per_micro_ms = 1000.0 * m.step_time_s / static_cast<double>(v.micro_batches);
  if (per_micro_ms >= 50) return;
  double severity = std::min(1.0, 50.0 / std::max(per_micro_ms, 1.0) * 0.2);
  out->push_back({"launch_overhead", severity,
                  F(per_micro_ms) + " ms per micro-batch over " + std::to_string(v.micro_batches) +
                      " micro-batches of size " + std::to_string(v.mbs.value_or(0)) + ", no CUDA graphs"});
}

void ComputeBound(const Measurement& m, const ClusterInfo& c, std::vector<Diagnosis>* out) {
  double strongest = 0;
  for (const auto& d : *out) strongest = std::max(strongest, d.severity);
  std::string evidence = "no stronger limiter found";
  double severity = 0.3;
  if (m.tflops_per_gpu && c.peak_tflops > 0) {
    double mfu = *m.tflops_per_gpu / c.peak_tflops;
    evidence = F(*m.tflops_per_gpu) + " TFLOP/s/GPU of " + F(c.peak_tflops, 0) + " peak (MFU " +
               F(100 * mfu, 0) + "%)";
    severity = std::clamp(mfu, 0.1, 1.0);
  }
  if (strongest < 0.3 || (m.tflops_per_gpu && c.peak_tflops > 0)) {
    out->push_back({"compute_bound", severity, evidence});
  }
}

}  // namespace

std::vector<Diagnosis> DiagnoseRun(const Recipe& recipe, const Measurement& measurement,
                                   const LogParse& parse, const ClusterInfo& cluster) {
  std::vector<Diagnosis> out;
  RecipeView view = ReadView(recipe);
  Memory(measurement, cluster, &out);
  // Measured timers replace the recipe-based guesses they cover.
  TimerDiagnosis timers = DiagnoseTimers(parse);
  out.insert(out.end(), timers.diagnoses.begin(), timers.diagnoses.end());
  if (!timers.have_timers) CommunicationFromRecipe(view, &out);
  if (!timers.have_pipeline_timers) Bubble(view, &out);
  LaunchOverhead(view, measurement, &out);
  ComputeBound(measurement, cluster, &out);
  std::stable_sort(out.begin(), out.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.severity > b.severity; });
  return out;
}

}  // namespace attune::megatron
