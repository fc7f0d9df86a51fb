// Copyright attune authors.
#include "heuristic_agent.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "history.h"
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

bool KeysDisjoint(const std::vector<Change>& a, const std::vector<Change>& b) {
  for (const Change& x : a) {
    for (const Change& y : b) {
      if (x.key == y.key) return false;
    }
  }
  return true;
}

// The OOMed change re-based on the leader; empty when the leader already moved that key
// elsewhere or the change is already in the leader.
std::vector<Change> Rebase(const Recipe& leader, const std::vector<Change>& changes) {
  std::vector<Change> out;
  for (const Change& c : changes) {
    std::optional<std::string> now = GetValue(leader, c.key);
    if (now != c.from) return {};
    out.push_back({c.key, now, c.to});
  }
  return out;
}

// The saving a paired move must bring so that the OOMed change fits: the OOM proves the
// change's peak reached at least the device memory, whatever its prior said.
double NeededSaving(const CampaignView& v, const MoveEstimate& hungry) {
  double capacity = v.cluster.device_memory_gib;
  if (capacity <= 0 || !hungry.predicted_peak_gib) return -0.1;
  double hungry_peak = std::max(*hungry.predicted_peak_gib, capacity);
  return kMemoryLimit * capacity / hungry_peak - 1;
}

// The change that ran out of memory, re-based on the leader and valued as if it fitted.
std::optional<MoveEstimate> HungryEstimate(const ScoringContext& relaxed,
                                           const CandidateRecord& oom, Move* hungry_move) {
  *hungry_move = Move{oom.lever_id, Rebase(relaxed.view->leader, oom.changes), ""};
  if (hungry_move->changes.empty() || relaxed.levers.count(oom.lever_id) == 0) return std::nullopt;
  return EstimateMove(relaxed, *hungry_move, 0);
}

bool IsOom(const CandidateRecord& r) {
  return r.failure && r.failure->kind == FailureKind::kOom;
}

// Half the best gain among changes that ran out of memory: what a memory-saving move may later
// let fit (half, because it still has to be tried after the saver).
double UnlockValue(const ScoringContext& ctx) {
  ScoringContext relaxed = ctx;
  relaxed.oom_at.clear();
  double best = 0;
  for (const CandidateRecord& r : ctx.view->history) {
    Move hungry_move;
    std::optional<MoveEstimate> h = IsOom(r) ? HungryEstimate(relaxed, r, &hungry_move)
                                             : std::nullopt;
    if (h) best = std::max(best, h->gain);
  }
  return 0.5 * best;
}

std::optional<Option> PairOption(const ScoringContext& ctx, const CandidateRecord& oom,
                                 const std::vector<MoveEstimate>& savers) {
  const CampaignView& v = *ctx.view;
  ScoringContext relaxed = ctx;
  relaxed.oom_at.clear();  // because the pair exists to lift exactly that limit
  Move hungry_move;
  std::optional<MoveEstimate> hungry_estimate = HungryEstimate(relaxed, oom, &hungry_move);
  if (!hungry_estimate) return std::nullopt;
  const MoveEstimate& hungry = *hungry_estimate;
  double needed = NeededSaving(v, hungry);
  std::optional<Option> best;
  for (const MoveEstimate& s : savers) {
    if (s.memory > needed || !KeysDisjoint(s.move->changes, hungry_move.changes)) continue;
    std::vector<Change> both = s.move->changes;
    both.insert(both.end(), hungry_move.changes.begin(), hungry_move.changes.end());
    std::optional<Recipe> recipe = Apply(v.leader, both);
    if (!recipe || ctx.tried.recipe_ids.count(RecipeId(*recipe)) > 0) continue;
    double gain = s.speed + hungry.gain;  // the saver's own speed, without its unlock bonus
    if (best && gain <= best->gain) continue;
    Option o;
    o.changes = both;
    o.lever_id = s.move->lever_id;
    o.levers = {s.move->lever_id, oom.lever_id};
    o.gain = gain;
    o.order = s.order;
    o.rationale = DiagnosisText(ctx, "oom") + " → " + s.move->lever_id + " [" +
                  MoveText(*s.move) + "] saves " + Percent(-s.memory) + " memory (needs " +
                  Percent(-needed) + ") so that " + oom.lever_id + " [" +
                  DescribeChanges(hungry_move.changes) + "] fits again: expected " +
                  Percent(gain) + " (" + Percent(s.speed) + " + " + Percent(hungry.gain) + ")";
    o.meta = {{"expected_gain", gain}, {"pair_after_oom", oom.candidate_id},
              {"saver_memory", s.memory}, {"needed_saving", needed}};
    best = o;
  }
  return best;
}

std::optional<Option> BestPair(const ScoringContext& ctx, const std::vector<MoveEstimate>& all) {
  std::vector<MoveEstimate> savers;
  for (const MoveEstimate& e : all) {
    if (e.feasible && e.memory < -0.05) savers.push_back(e);
  }
  std::optional<Option> best;
  std::set<std::string> seen;
  for (auto r = ctx.view->history.rbegin(); r != ctx.view->history.rend(); ++r) {
    if (!IsOom(*r)) continue;
    if (!seen.insert(DescribeChanges(r->changes)).second) continue;
    std::optional<Option> o = PairOption(ctx, *r, savers);
    if (o && (!best || o->gain > best->gain)) best = o;
  }
  return best;
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
    std::optional<Option> pair = BestPair(ctx, all);
    if (pair && (!best || pair->gain > best->gain)) best = pair;
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
