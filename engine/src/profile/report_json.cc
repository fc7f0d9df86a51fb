// The report as JSON (docs/profile.md lists the fields). Times in microseconds.
#include "profile/parts.h"

namespace attune::profile {
namespace {

using json = nlohmann::json;

double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The contract figures, flat (merged into a rank's or a step's object).
void PutFigures(const Figures& f, json* j) {
  (*j)["window_us"] = Us(f.window_ns);
  (*j)["busy_us"] = Us(f.busy_ns);
  (*j)["idle_us"] = Us(f.idle_ns);
  (*j)["compute_us"] = Us(f.compute_ns);
  (*j)["communication_us"] = Us(f.communication_ns);
  (*j)["memory_us"] = Us(f.memory_ns);
  (*j)["exposed_communication_us"] = Us(f.exposed_communication_ns);
  (*j)["comm_compute_overlap"] = Optional(f.comm_compute_overlap);
}

json StepJson(const StepSummary& s) {
  json j = {{"step", s.number}, {"cpu_us", Us(s.cpu_ns)}, {"activities", s.activities}};
  PutFigures(s.figures, &j);
  j["pipeline_wait_us"] = s.pipeline_wait_ns ? json(Us(*s.pipeline_wait_ns)) : json(nullptr);
  return j;
}

json KernelJson(const KernelSummary& k, int64_t busy_ns) {
  return {{"name", k.name},
          {"class", ActivityClassName(k.cls)},
          {"count", k.count},
          {"total_us", Us(k.total_ns)},
          {"max_us", Us(k.max_ns)},
          {"share_of_busy", busy_ns > 0 ? static_cast<double>(k.total_ns) / busy_ns : 0.0}};
}

json CollectiveJson(const CollectiveSummary& c) {
  json j = {{"type", c.type}, {"dtype", c.dtype}, {"group", c.group}, {"count", c.count},
            {"total_us", Us(c.total_ns)}, {"sized", c.sized}};
  if (c.sized > 0) {
    j["min_bytes"] = c.min_bytes;
    j["median_bytes"] = c.median_bytes;
    j["max_bytes"] = c.max_bytes;
    j["total_bytes"] = c.total_bytes;
    j["size_source"] = c.size_source;
  }
  return j;
}

json LaunchJson(const LaunchSummary& l) {
  return {{"gaps", l.gaps},
          {"gap_us", Us(l.gap_ns)},
          {"launch_bound_gaps", l.launch_bound_gaps},
          {"launch_bound_us", Us(l.launch_bound_ns)},
          {"unmatched_gaps", l.unmatched_gaps},
          {"kernels", l.kernels},
          {"median_kernel_us", Us(l.median_kernel_ns)},
          {"short_kernels", l.short_kernels}};
}

json BubbleJson(const std::optional<BubbleEstimate>& b) {
  if (!b) return nullptr;
  return {{"p2p_kernels", b->p2p_kernels},
          {"pipeline", b->pipeline},
          {"wait_us", Us(b->wait_ns)},
          {"span_us", Us(b->span_ns)},
          {"fraction", b->fraction}};
}

json RankJson(const RankProfile& p) {
  json j = {{"rank", p.rank ? json(*p.rank) : json(nullptr)},
            {"file", p.file},
            {"rank_source", p.rank_source},
            {"world_size", p.world_size ? json(*p.world_size) : json(nullptr)},
            {"backend", p.backend},
            {"basis", BasisName(p.basis)}};
  PutFigures(p.figures, &j);
  j["kernels"] = p.kernels;
  j["communication_kernels"] = p.communication_kernels;
  j["memory_events"] = p.memory_events;
  j["cpu_ops"] = p.cpu_ops;
  j["steps"] = json::array();
  for (const auto& s : p.steps) j["steps"].push_back(StepJson(s));
  j["top_kernels"] = json::array();
  for (const auto& k : p.top_kernels) j["top_kernels"].push_back(KernelJson(k, p.figures.busy_ns));
  j["collectives"] = json::array();
  for (const auto& c : p.collectives) j["collectives"].push_back(CollectiveJson(c));
  j["launch_overhead"] = LaunchJson(p.launch);
  j["pipeline_bubble"] = BubbleJson(p.bubble);
  j["notes"] = p.notes;
  return j;
}

json AcrossJson(const ProfileReport& r) {
  const CrossRank& a = r.across;
  json j = {{"ranks", r.ranks.size()},
            {"aligned", a.aligned},
            {"max_step_offset_us",
             a.max_step_offset_ns ? json(Us(*a.max_step_offset_ns)) : json(nullptr)},
            {"straggler", nullptr},
            {"notes", a.notes}};
  if (a.straggler) {
    const StragglerReport& s = *a.straggler;
    const RankProfile& p = r.ranks[s.straggler_index];
    json waits = json::array();
    for (size_t i = 0; i < r.ranks.size(); ++i) {
      waits.push_back({{"rank", r.ranks[i].rank ? json(*r.ranks[i].rank) : json(nullptr)},
                       {"collective_wait_us", s.collective_wait_ns[i] / 1000.0}});
    }
    j["straggler"] = {{"rank", p.rank ? json(*p.rank) : json(nullptr)},
                      {"file", p.file},
                      {"per", s.per},
                      {"compute_us", s.compute_ns / 1000.0},
                      {"median_compute_us", s.median_compute_ns / 1000.0},
                      {"imbalance", s.imbalance},
                      {"collective_wait", waits}};
  }
  return j;
}

}  // namespace

nlohmann::json ReportToJson(const ProfileReport& report) {
  json ranks = json::array();
  for (const RankProfile& p : report.ranks) ranks.push_back(RankJson(p));
  json diagnoses = json::array();
  for (const Diagnosis& d : report.diagnoses) diagnoses.push_back(DiagnosisToJson(d));
  return {{"ranks", ranks}, {"across_ranks", AcrossJson(report)}, {"diagnoses", diagnoses}};
}

}  // namespace attune::profile
