// RESULTS.md: the leaderboard. Measured entries first, fastest first; then the others in
// proposal order.
#include <algorithm>

#include <fmt/format.h>

#include "campaign/events.h"
#include "report/report.h"
#include "report/report_util.h"

namespace attune {
namespace ri = report_internal;

namespace {

struct Row {
  std::string id;
  std::string change;
  std::optional<double> tps;
  double gpu_hours = 0;
  std::string verdict;
  int order = 0;
};

std::vector<Row> Rows(const CampaignState& state) {
  std::vector<Row> rows;
  auto base = state.MeasurementOf(events::kBaselineId);
  rows.push_back(Row{events::kBaselineId, "(baseline)",
                     base ? std::optional<double>(base->tokens_per_s_per_gpu) : std::nullopt,
                     ri::ChargedFor(state, events::kBaselineId),
                     state.leader_id == events::kBaselineId ? "baseline, leader" : "baseline", 0});
  for (const auto& c : state.candidates) {
    rows.push_back(Row{c.id, ri::ChangeText(state, c.id), c.tokens_per_s_per_gpu,
                       ri::ChargedFor(state, c.id), ri::VerdictText(state, c), c.index});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.tps.has_value() != b.tps.has_value()) return a.tps.has_value();
    if (a.tps && b.tps && *a.tps != *b.tps) return *a.tps > *b.tps;
    return a.order < b.order;
  });
  return rows;
}

}  // namespace

std::string RenderResults(const CampaignState& state) {
  std::string out = fmt::format("# Results: campaign {}\n\n", state.campaign_id);
  auto base = state.MeasurementOf(events::kBaselineId);
  out += fmt::format("Stack `{}`, launcher `{}`, agent `{}`. Leader: **{}**.\n\n", state.stack_name,
                     state.launcher_name, state.agent_name, state.leader_id);
  out += "| rank | candidate | change | tokens/s/GPU | speedup | GPU-hours | verdict |\n";
  out += "|---:|---|---|---:|---:|---:|---|\n";
  int rank = 0;
  for (const auto& r : Rows(state)) {
    std::string rank_cell = r.tps ? std::to_string(++rank) : "-";
    std::string tps = r.tps ? ri::Fixed(*r.tps, 1) : "-";
    std::string speed = (r.tps && base && base->tokens_per_s_per_gpu > 0)
                            ? ri::Times(*r.tps / base->tokens_per_s_per_gpu)
                            : "-";
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", rank_cell, r.id, ri::Cell(r.change),
                       tps, speed, ri::Fixed(r.gpu_hours, 4), ri::Cell(r.verdict));
  }
  out += fmt::format("\nBudget: {} of {} GPU-hours charged, {} left; {} jobs, {} failed.\n",
                     ri::Fixed(state.ledger.charged, 4), ri::Fixed(state.ledger.total, 4),
                     ri::Fixed(state.ledger.Left(), 4), state.jobs.size(), state.FailedJobs());
  if (auto q = QuoteSpeedup(state)) {
    out += q->pairs > 0
               ? fmt::format("Verified speedup of {}: {} (min {}, max {}) over {} paired runs.\n",
                             state.leader_id, ri::Times(q->median), ri::Times(q->min),
                             ri::Times(q->max), q->pairs)
               : fmt::format("Speedup of {} (tuning runs, not re-verified): {}.\n", state.leader_id,
                             ri::Times(q->median));
  }
  return out;
}

std::optional<QuotedSpeedup> QuoteSpeedup(const CampaignState& state) {
  if (state.speedup && state.speedup->leader == state.leader_id && !state.speedup->ratios.empty()) {
    return QuotedSpeedup{state.speedup->median, state.speedup->min, state.speedup->max,
                         static_cast<int>(state.speedup->ratios.size())};
  }
  auto base = state.MeasurementOf(events::kBaselineId);
  auto lead = state.MeasurementOf(state.leader_id);
  if (!base || !lead || base->tokens_per_s_per_gpu <= 0) return std::nullopt;
  const double r = lead->tokens_per_s_per_gpu / base->tokens_per_s_per_gpu;
  return QuotedSpeedup{r, r, r, 0};
}

}  // namespace attune
