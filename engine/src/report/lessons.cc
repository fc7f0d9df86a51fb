// lessons.md, in the format of skill/past_tuning_projects/README.md: one header block of
// `key: value` lines, then one line per tried candidate that later campaigns (and agents) grep.
#include <fmt/format.h>

#include "campaign/events.h"
#include "report/report.h"
#include "report/report_util.h"

namespace attune {
namespace ri = report_internal;

namespace {

std::string Effect(const CandidateRecordState& c) {
  return c.speedup_vs_leader ? ri::Percent(*c.speedup_vs_leader) : "n/a";
}

std::string Detail(const CampaignState& state, const CandidateRecordState& c) {
  if (c.outcome == Outcome::kRefused) return "rule " + c.rule_id + ": " + c.gate_reason;
  for (const auto& name : c.jobs) {
    const auto* j = state.FindJob(name);
    if (j && j->failure) {
      return std::string(FailureKindName(j->failure->kind)) + ": " + j->failure->evidence;
    }
  }
  return c.rationale;
}

}  // namespace

std::string RenderLessons(const CampaignState& state) {
  std::string out = fmt::format("# Lessons from campaign {}\n\n", state.campaign_id);
  out += fmt::format("stack: {}\n", state.stack_name);
  out += fmt::format("device: {} x{}\n", state.cluster.device_type, state.baseline.topology.WorldSize());
  out += fmt::format("entry: {}\n", state.baseline.entry.empty() ? "" : state.baseline.entry.back());
  out += fmt::format("candidates: {}\n", state.candidates.size());
  out += fmt::format("gpu_hours: {}\n", ri::Fixed(state.ledger.charged, 4));
  auto q = QuoteSpeedup(state);
  out += fmt::format("speedup: {}\n", q ? ri::Times(q->median) : "n/a");
  out += fmt::format("shipped: {}\n", state.leader_id);
  const Recipe* leader = state.RecipeOf(state.leader_id);
  if (leader) {
    for (const auto& c : Diff(state.baseline, *leader)) out += "shipped_change: " + DescribeChange(c) + "\n";
  }
  out += "\n## Tried\n\n";
  for (const auto& c : state.candidates) {
    out += fmt::format("- lever: {} effect: {} outcome: {} change: `{}` — {}\n",
                       c.lever_id.empty() ? "-" : c.lever_id, Effect(c), OutcomeName(c.outcome),
                       DescribeChanges(c.changes), ri::Cell(Detail(state, c)));
  }
  return out;
}

}  // namespace attune
