// RESULTS.md: the leaderboard (Leaderboard(): measured entries first, fastest first; then the
// others in proposal order).
#include <algorithm>

#include <fmt/format.h>

#include "campaign/events.h"
#include "measure/measure.h"
#include "report/dashboard.h"
#include "report/report.h"
#include "report/report_util.h"

namespace attune {
namespace ri = report_internal;

std::string RenderResults(const CampaignState& state) {
  std::string out = fmt::format("# Results: campaign {}\n\n", state.campaign_id);
  auto base = state.MeasurementOf(events::kBaselineId);
  out += fmt::format("Stack `{}`, launcher `{}`, agent `{}`. Leader: **{}**.\n\n", state.stack_name,
                     state.launcher_name, state.agent_name, state.leader_id);
  out += "| rank | candidate | change | tokens/s/GPU | speedup | GPU-hours | verdict |\n";
  out += "|---:|---|---|---:|---:|---:|---|\n";
  int rank = 0;
  for (const auto& r : Leaderboard(state)) {
    std::string rank_cell = r.tokens_per_s_per_gpu ? std::to_string(++rank) : "-";
    std::string tps = r.tokens_per_s_per_gpu ? ri::Fixed(*r.tokens_per_s_per_gpu, 1) : "-";
    std::string speed = (r.tokens_per_s_per_gpu && base && base->tokens_per_s_per_gpu > 0)
                            ? ri::Times(*r.tokens_per_s_per_gpu / base->tokens_per_s_per_gpu)
                            : "-";
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", rank_cell, r.id, ri::Cell(r.change),
                       tps, speed, ri::Fixed(r.gpu_hours, 4), ri::Cell(r.verdict));
  }
  out += fmt::format("\nBudget: {} of {} GPU-hours charged, {} left; {} jobs, {} failed.\n",
                     ri::Fixed(state.ledger.charged, 4), ri::Fixed(state.ledger.total, 4),
                     ri::Fixed(state.ledger.Left(), 4), state.jobs.size(), state.FailedJobs());
  if (auto q = QuoteSpeedup(state)) {
    const std::string caveat = q->Caveat();
    out += q->pairs > 0
               ? fmt::format("Verified speedup of {}: {} (min {}, max {}) over {} paired runs{}.\n",
                             state.leader_id, ri::Times(q->median), ri::Times(q->min),
                             ri::Times(q->max), q->pairs, caveat.empty() ? "" : "; " + caveat)
               : fmt::format("Speedup of {} (tuning runs, not re-verified): {}.\n", state.leader_id,
                             ri::Times(q->median));
  }
  return out;
}

std::string QuotedSpeedup::Caveat() const {
  if (pairs <= 0) return "";
  if (pairs_not_faster > 0) {
    return fmt::format(
        "not established: in {} of {} paired runs the leader ran no faster than the "
        "baseline",
        pairs_not_faster, pairs);
  }
  if (median - 1 <= noise_band) {
    return fmt::format("not established: the median is inside the noise band of ±{:.1f}%",
                       noise_band * 100);
  }
  return "";
}

std::optional<QuotedSpeedup> QuoteSpeedup(const CampaignState& state) {
  if (state.speedup && state.speedup->leader == state.leader_id && !state.speedup->ratios.empty()) {
    QuotedSpeedup q{state.speedup->median, state.speedup->min, state.speedup->max,
                    static_cast<int>(state.speedup->ratios.size())};
    q.pairs_not_faster =
        static_cast<int>(std::count_if(state.speedup->ratios.begin(), state.speedup->ratios.end(),
                                       [](double r) { return r <= 1; }));
    q.noise_band = NoiseBand(state.settings.noise_band, state.MeasurementsOf(events::kBaselineId));
    return q;
  }
  auto base = state.MeasurementOf(events::kBaselineId);
  auto lead = state.MeasurementOf(state.leader_id);
  if (!base || !lead || base->tokens_per_s_per_gpu <= 0) return std::nullopt;
  const double r = lead->tokens_per_s_per_gpu / base->tokens_per_s_per_gpu;
  return QuotedSpeedup{r, r, r, 0};
}

}  // namespace attune
