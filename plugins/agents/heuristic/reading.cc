// Copyright attune authors.
#include "reading.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "attune/support/tokenizers.h"
#include "comm_estimate.h"

namespace attune::agents {
namespace {

std::string Format(const char* fmt, double a, double b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

int IntOr(const Recipe& r, const char* key, int fallback) {
  std::optional<long long> v = ParseInt(GetValue(r, key));
  return v && *v > 0 ? static_cast<int>(*v) : fallback;
}

void Merge(std::map<std::string, Diagnosis>* merged, const Diagnosis& d) {
  if (d.severity <= 0) return;
  auto it = merged->find(d.kind);
  if (it == merged->end()) {
    (*merged)[d.kind] = d;
    return;
  }
  if (!d.evidence.empty() && it->second.evidence.find(d.evidence) == std::string::npos) {
    it->second.evidence += it->second.evidence.empty() ? d.evidence : "; " + d.evidence;
  }
  it->second.severity = std::max(it->second.severity, d.severity);
}

void ReadMemory(const CampaignView& view, std::vector<Diagnosis>* out) {
  if (!view.leader_measurement || !view.leader_measurement->peak_memory_gib) return;
  double capacity = view.cluster.device_memory_gib;
  if (capacity <= 0) return;
  double peak = *view.leader_measurement->peak_memory_gib;
  double used = peak / capacity;
  std::string evidence = Format("peak %.1f of %.0f GiB", peak, capacity);
  if (used <= 0.8) {
    out->push_back({"memory_headroom", std::clamp((0.9 - used) / 0.6, 0.1, 1.0), evidence});
  }
  if (used >= 0.88) {
    out->push_back({"memory_pressure", std::clamp((used - 0.8) / 0.2, 0.3, 1.0), evidence});
  }
}

void ReadOom(const CampaignView& view, std::vector<Diagnosis>* out) {
  for (const CandidateRecord& r : view.history) {
    if (r.base_id != view.leader_id || !r.failure) continue;
    if (r.failure->kind != FailureKind::kOom && r.failure->kind != FailureKind::kHostOom) continue;
    out->push_back({"oom", 0.8, r.candidate_id + " (" + DescribeChanges(r.changes) +
                                    ") ran out of memory"});
  }
}

// A micro-batch shorter than this (per pipeline stage) is launch-bound (the Megatron stack's
// diagnosis uses the same threshold).
constexpr double kLaunchBoundMicroBatchMs = 50;

void ReadShapeDiagnoses(const CampaignView& view, std::vector<Diagnosis>* out) {
  RecipeShape s = ReadShape(view.leader);
  double bubble = s.Bubble();
  if (bubble > 0.02) {
    out->push_back({"pipeline_bubble", std::min(1.0, 2 * bubble / (1 + bubble)),
                    Format("PP bubble (PP-1)/(M*VPP) = %.2f", bubble)});
  }
  int reach = NvlinkReach(view.cluster, view.leader.topology.gpus_per_node);
  if (s.tp > reach) {
    out->push_back(
        {"communication", 0.7, Format("TP %.0f spans NVLink domains of %.0f GPUs", s.tp, reach)});
  }
  if (s.dp > 1 && !GetValue(view.leader, "--overlap-grad-reduce")) {
    double sev = view.leader.topology.nodes > 1 ? 0.5 : 0.3;
    out->push_back({"communication", sev, "data-parallel gradient reduce is not overlapped"});
  }
  // Host launch time matters where a micro-batch's GPU work is short: many micro-batches alone
  // do not make it so (an 8B model's micro-batch of 8k tokens keeps the GPU busy for ~100 ms).
  // With the leader's step time, a micro-batch under 50 ms is read as launch-bound, more so the
  // shorter it is; without one, many micro-batches of size 1 are the guess.
  std::optional<int> m = s.MicroBatches();
  const double step_s = view.leader_measurement ? view.leader_measurement->step_time_s : 0;
  if (m && *m > 0 && step_s > 0) {
    const double per_micro_ms = 1000 * step_s / (*m + s.pp - 1);
    if (per_micro_ms < kLaunchBoundMicroBatchMs) {
      const double severity = std::min(1.0, 0.2 * kLaunchBoundMicroBatchMs / std::max(1.0, per_micro_ms));
      out->push_back({"launch_overhead", severity,
                      Format("%.0f ms of GPU work per micro-batch", per_micro_ms)});
    }
  } else if (m && *m >= 16 && s.mbs == 1) {
    out->push_back({"launch_overhead", 0.3,
                    Format("%.0f micro-batches of size 1 per iteration", *m)});
  }
}

// The MoE shape's own costs (Megatron's expert grid orders ranks ETP, then EP, so an EP group
// spans EP x ETP consecutive ranks). The busiest of EP ranks holding E/EP experts each sits about
// sqrt(2 ln EP) standard deviations above the mean load, and a rank's load varies as one expert's
// (a router cv of about 0.5 even with an auxiliary loss) over sqrt(E/EP): few experts per rank
// means every rank waits for a much busier one.
void ReadMoe(const CampaignView& view, std::vector<Diagnosis>* out) {
  RecipeShape s = ReadShape(view.leader);
  if (s.experts <= 0 || s.ep <= 1) return;
  const double per_rank = static_cast<double>(s.experts) / s.ep;
  const double excess = MoeBusiestExcess(s.experts, s.ep);
  if (excess >= 0.2) {
    out->push_back({"moe_imbalance", std::min(1.0, excess),
                    Format("%.0f experts per expert-parallel rank: the busiest rank carries about "
                           "%.0f%% more than the mean routed load",
                           per_rank, 100 * excess)});
  }
  const int reach = NvlinkReach(view.cluster, view.leader.topology.gpus_per_node);
  const int per_node = std::max(1, reach / std::max(1, s.etp));
  if (s.ep > per_node && view.leader.topology.nodes > 1) {
    const double off_node = 1 - static_cast<double>(per_node) / s.ep;
    out->push_back(
        {"moe_dispatch", 0.6 * off_node,
         Format("EP %.0f with at most %.0f of its ranks per NVLink domain: ", s.ep, per_node) +
             Format("%.0f%% of the routed tokens cross the network", 100 * off_node)});
  }
}

}  // namespace

double MoeBusiestExcess(int experts, int ep) {
  if (experts <= 0 || ep <= 1) return 0;
  const double per_rank = static_cast<double>(experts) / ep;
  return 0.5 * std::sqrt(2 * std::log(static_cast<double>(ep)) / per_rank);
}

std::optional<long long> ParseInt(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  long long v = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    if (v > (1LL << 40)) return std::nullopt;
  }
  return v;
}

std::optional<double> PositiveFlag(const Recipe& recipe,
                                   const std::map<std::string, std::string>& defaults,
                                   const std::string& key) {
  std::optional<std::string> v = GetValue(recipe, key);
  if (!v) {
    auto d = defaults.find(key);
    if (d != defaults.end()) v = d->second;
  }
  std::optional<long long> n = ParseInt(v);
  if (!n || *n <= 0) return std::nullopt;
  return static_cast<double>(*n);
}

std::optional<double> VocabSize(const Recipe& recipe,
                                const std::map<std::string, std::string>& defaults) {
  if (std::optional<double> given = PositiveFlag(recipe, defaults, "--vocab-size")) return given;
  std::optional<std::string> type = GetValue(recipe, "--tokenizer-type");
  if (!type) return std::nullopt;
  std::optional<long> known = support::MegatronTokenizerVocab(*type);
  if (!known) return std::nullopt;
  return static_cast<double>(*known);
}

std::optional<int> RecipeShape::MicroBatches() const {
  if (!gbs || mbs <= 0 || dp <= 0) return std::nullopt;
  int m = *gbs / (mbs * dp);
  return m > 0 ? std::optional<int>(m) : std::nullopt;
}

double RecipeShape::Bubble() const {
  std::optional<int> m = MicroBatches();
  if (pp <= 1 || !m) return 0;
  return static_cast<double>(pp - 1) / (static_cast<double>(*m) * std::max(1, vpp));
}

namespace {

// The stages a Megatron --pipeline-model-parallel-layout names: one more than its '|', with a
// group "(...)*n" counted n times (Megatron unrolls one level of groups).
int LayoutStages(const std::string& layout) {
  int bars = 0;
  for (size_t i = 0; i < layout.size(); ++i) {
    if (layout[i] == '|') ++bars;
    if (layout[i] != '(') continue;
    size_t close = layout.find(')', i);
    if (close == std::string::npos) return 0;
    const int inside = static_cast<int>(std::count(layout.begin() + static_cast<long>(i), layout.begin() + static_cast<long>(close), '|'));
    int times = 1;
    if (close + 1 < layout.size() && layout[close + 1] == '*') times = std::max(1, std::atoi(layout.c_str() + close + 2));
    bars += inside * times;
    i = close;
  }
  return bars + 1;
}

}  // namespace

RecipeShape ReadShape(const Recipe& r) {
  RecipeShape s;
  s.world = std::max(1, r.topology.WorldSize());
  s.tp = IntOr(r, "--tensor-model-parallel-size", 1);
  s.pp = IntOr(r, "--pipeline-model-parallel-size", 1);
  s.cp = IntOr(r, "--context-parallel-size", 1);
  s.vpp = IntOr(r, "--num-virtual-stages-per-pipeline-rank", 1);
  // The older spelling gives layers per virtual stage: the stages a rank holds follow from it.
  const int per_stage = IntOr(r, "--num-layers-per-virtual-pipeline-stage", 0);
  const int layers = IntOr(r, "--num-layers", 0) + (GetValue(r, "--account-for-embedding-in-pipeline-split") ? 1 : 0) +
                     (GetValue(r, "--account-for-loss-in-pipeline-split") ? 1 : 0);
  if (per_stage > 0 && layers > 0 && s.pp > 0) s.vpp = std::max(1, layers / s.pp / per_stage);
  // A layout's stages beyond PP are virtual stages.
  if (auto layout = GetValue(r, "--pipeline-model-parallel-layout"); layout && s.pp > 0) {
    s.vpp = std::max(1, LayoutStages(*layout) / s.pp);
  }
  s.mbs = IntOr(r, "--micro-batch-size", 1);
  s.ep = IntOr(r, "--expert-model-parallel-size", 1);
  s.etp = IntOr(r, "--expert-tensor-parallel-size", s.tp);
  s.experts = IntOr(r, "--num-experts", 0);
  s.dp = std::max(1, s.world / std::max(1, s.tp * s.pp * s.cp));
  std::optional<long long> gbs = ParseInt(GetValue(r, "--global-batch-size"));
  if (gbs && *gbs > 0) s.gbs = static_cast<int>(*gbs);
  return s;
}

double SeverityOf(const std::vector<Diagnosis>& diagnoses, const std::string& kind) {
  for (const Diagnosis& d : diagnoses) {
    if (d.kind == kind) return d.severity;
  }
  return 0;
}

std::vector<Diagnosis> ReadDiagnoses(const CampaignView& view) {
  std::vector<Diagnosis> own;
  ReadMemory(view, &own);
  ReadOom(view, &own);
  ReadShapeDiagnoses(view, &own);
  ReadMoe(view, &own);
  std::map<std::string, Diagnosis> merged;
  for (const Diagnosis& d : view.diagnosis) Merge(&merged, d);
  for (const Diagnosis& d : own) Merge(&merged, d);
  bool limited = false;
  for (const auto& [kind, d] : merged) limited = limited || d.severity >= 0.3;
  if (!limited) merged["compute_bound"] = {"compute_bound", 0.3, "no other limit stands out"};
  std::vector<Diagnosis> out;
  for (auto& [kind, d] : merged) out.push_back(d);
  std::stable_sort(out.begin(), out.end(), [](const Diagnosis& a, const Diagnosis& b) {
    return a.severity > b.severity;
  });
  return out;
}

}  // namespace attune::agents
