// Copyright attune authors.
#include "heuristic_agent.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "history.h"
#include "attune/support/json_schema.h"
#include "options_schema.h"
#include "pairs.h"
#include "reading.h"
#include "scoring.h"

namespace attune::agents {
namespace {

std::string Percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", x * 100);
  return buf;
}

std::string Fixed(double x, const char* fmt = "%.2f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// A proposal under consideration: one legal move, or a saver paired with an OOMed change.
struct Option {
  std::vector<Change> changes;
  std::string lever_id;
  std::vector<std::string> levers;
  double gain = 0;
  int order = 0;
  std::string rationale;
  nlohmann::json meta = nlohmann::json::object();
};

std::string DiagnosisText(const ScoringContext& ctx, const std::string& kind) {
  for (const Diagnosis& d : ctx.diagnoses) {
    if (d.kind != kind) continue;
    std::string text = d.kind + " (severity " + Fixed(d.severity);
    return text + (d.evidence.empty() ? ")" : ": " + d.evidence + ")");
  }
  return "no diagnosis it addresses (generic prior)";
}

std::string MoveText(const Move& move) {
  return move.summary.empty() ? DescribeChanges(move.changes) : move.summary;
}

Option SingleOption(const ScoringContext& ctx, const MoveEstimate& e) {
  Option o;
  o.changes = e.move->changes;
  o.lever_id = e.move->lever_id;
  o.levers = {o.lever_id};
  o.gain = e.gain;
  o.order = e.order;
  o.rationale = DiagnosisText(ctx, e.matched) + " → " + e.move->lever_id + " [" +
                MoveText(*e.move) + "]: expected " + Percent(e.gain) + " (speed prior " +
                Percent(e.speed) + ", relevance ×" + Fixed(e.relevance) + ", history ×" +
                Fixed(e.history) + (e.risk < 1 ? ", memory risk ×" + Fixed(e.risk) : "") + ")";
  if (e.unlock_bonus > 0) {
    o.rationale += "; includes " + Percent(e.unlock_bonus) +
                   " for the out-of-memory change its saving could let fit later";
  }
  if (e.predicted_peak_gib) {
    o.rationale += "; predicted peak " + Fixed(*e.predicted_peak_gib, "%.1f") + " GiB";
  }
  o.meta = {{"expected_gain", e.gain},  {"speed_prior", e.speed}, {"relevance", e.relevance},
            {"history", e.history},     {"memory", e.memory},     {"direction", e.direction},
            {"diagnosis", e.matched}};
  return o;
}

Option PairOptionText(const ScoringContext& ctx, const PairChoice& pair) {
  const MoveEstimate& s = *pair.saver;
  bool oom = pair.source != "predicted";
  Option o;
  o.changes = s.move->changes;
  o.changes.insert(o.changes.end(), pair.hungry.changes.begin(), pair.hungry.changes.end());
  o.lever_id = s.move->lever_id;
  o.levers = {s.move->lever_id, pair.hungry.lever_id};
  o.gain = pair.gain;
  o.order = s.order;
  std::string why = oom ? DiagnosisText(ctx, "oom")
                        : pair.hungry.lever_id + " [" + DescribeChanges(pair.hungry.changes) +
                              "] is predicted not to fit";
  o.rationale = why + " → " + s.move->lever_id + " [" + MoveText(*s.move) + "] saves " +
                Percent(-s.memory) + " memory (needs " + Percent(-pair.needed_saving) +
                ") so that " + pair.hungry.lever_id + " [" +
                DescribeChanges(pair.hungry.changes) + "] fits: expected " + Percent(pair.gain) +
                " (" + Percent(s.speed) + " + " + Fixed(kPairConfidence) + " × " +
                Percent(pair.hungry_gain) + ")";
  o.meta = {{"expected_gain", pair.gain},
            {"pair_source", pair.source},
            {"memory", s.memory},
            {"saver_memory", s.memory},
            {"needed_saving", pair.needed_saving}};
  return o;
}

Proposal Done(std::string why) {
  Proposal p;
  p.done = true;
  p.rationale = std::move(why);
  return p;
}

std::string DoneText(const ScoringContext& ctx, const std::vector<MoveEstimate>& ranked,
                     double threshold) {
  std::string text = "nothing promising left: no untried move is expected to gain more than " +
                     Percent(threshold) + " (the noise band)";
  if (!ctx.diagnoses.empty()) text += "; leader: " + DiagnosisText(ctx, ctx.diagnoses[0].kind);
  int shown = 0;
  for (const MoveEstimate& e : ranked) {
    if (shown++ == 3) break;
    text += "; " + e.move->lever_id + " " + (e.feasible ? Percent(e.gain) : e.note);
  }
  return text;
}

}  // namespace

Result<HeuristicConfig> ParseHeuristicConfig(const nlohmann::json& with) {
  HeuristicConfig c;
  if (with.is_null()) return c;
  // The declared schema checks keys and types (the same check `attune validate` makes).
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(heuristic::kOptionsSchema, with, "agent 'heuristic'"));
  if (!with.is_object()) {
    return Status::InvalidArgument("agent 'heuristic': `with` must be a mapping, found " +
                                   std::string(with.type_name()));
  }
  for (const auto& [key, value] : with.items()) {
    if (key == "min_gain" && value.is_number()) {
      c.min_gain = value.get<double>();
    } else if (key == "pair_after_oom" && value.is_boolean()) {
      c.pair_after_oom = value.get<bool>();
    } else {
      return Status::InvalidArgument("agent 'heuristic': with." + key +
                                     ": unknown key or wrong type (expected min_gain: number, "
                                     "pair_after_oom: bool)");
    }
  }
  return c;
}

Result<Proposal> HeuristicAgent::Propose(const CampaignView& view) {
  if (view.job_cost_estimate_gpu_hours > 0 &&
      view.budget_left_gpu_hours < view.job_cost_estimate_gpu_hours) {
    return Done("budget left " + Fixed(view.budget_left_gpu_hours) +
                " GPU-h is below one job's estimate " + Fixed(view.job_cost_estimate_gpu_hours) +
                " GPU-h");
  }
  ScoringContext ctx = MakeScoringContext(view);
  std::vector<MoveEstimate> all;
  for (size_t i = 0; i < view.legal_moves.size(); ++i) {
    const Move& m = view.legal_moves[i];
    if (AlreadyTried(ctx.tried, view.leader, m.changes)) continue;
    all.push_back(EstimateMove(ctx, m, static_cast<int>(i)));
  }
  double unlock = UnlockValue(ctx);
  for (MoveEstimate& e : all) {
    if (unlock <= 0 || !e.feasible || e.memory >= -0.05) continue;
    e.unlock_bonus = unlock;
    e.gain += unlock;
  }
  std::stable_sort(all.begin(), all.end(), [](const MoveEstimate& a, const MoveEstimate& b) {
    if (a.feasible != b.feasible) return a.feasible;
    return a.gain > b.gain;
  });
  std::optional<Option> best;
  if (!all.empty() && all.front().feasible) best = SingleOption(ctx, all.front());
  if (config_.pair_after_oom) {
    std::optional<PairChoice> pair = BestPair(ctx, all);
    // A saver's unlock bonus stands for the pair it leads to; when that pair can be proposed
    // now, the single saver competes without it.
    double single = best ? best->gain - all.front().unlock_bonus : 0;
    if (pair && (!best || pair->gain > single)) best = PairOptionText(ctx, *pair);
  }
  double threshold = config_.min_gain.value_or(view.noise_band);
  if (!best || best->gain <= threshold) {
    if (all.empty() && !best) return Done("no untried legal move is left");
    return Done(DoneText(ctx, all, threshold));
  }
  Proposal p;
  p.changes = best->changes;
  p.lever_id = best->lever_id;
  p.rationale = best->rationale;
  p.meta = best->meta;
  p.meta["levers"] = best->levers;
  return p;
}

Result<std::unique_ptr<Plugin>> CreateHeuristicAgent(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(HeuristicConfig config, ParseHeuristicConfig(context.config));
  return std::unique_ptr<Plugin>(std::make_unique<HeuristicAgent>(config));
}

}  // namespace attune::agents
