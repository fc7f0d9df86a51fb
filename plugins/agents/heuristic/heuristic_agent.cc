// Copyright attune authors.
#include "heuristic_agent.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "history.h"
#include "attune/support/json_schema.h"
#include "options_schema.h"
#include "pairs.h"
#include "reading.h"
#include "reopen.h"
#include "scoring.h"
#include "unlocks.h"

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

// Exploring, each earlier measurement of a lever lowers its moves' rank by this much (a fraction
// of throughput, like the gains).
constexpr double kExploreRepeatCost = 0.01;

// A proposal under consideration: one lever's move from the leader or from another measured
// candidate (base_id).
struct Option {
  std::string base_id;  // "" for the leader
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
  if (!e.capped_by.empty()) {
    o.rationale += "; at most what " + e.capped_by +
                   " measured, a move of the same lever as far or further from the same recipe";
  }
  o.meta = {{"expected_gain", e.gain},  {"speed_prior", e.speed}, {"relevance", e.relevance},
            {"history", e.history},     {"memory", e.memory},     {"direction", e.direction},
            {"diagnosis", e.matched}};
  if (!e.capped_by.empty()) o.meta["capped_by"] = e.capped_by;
  return o;
}

// A pair (pairs.h) is proposed one lever at a time: the saver alone first, measured on its own
// even when it is slower, with the hungry change it makes room for recorded in meta.then; the
// hungry change follows from the saver's candidate (FollowUps).
Option SaverOption(const ScoringContext& ctx, const PairChoice& pair) {
  const MoveEstimate& s = *pair.saver;
  const bool earlier_oom = pair.source == kOomBeforeSource;
  bool oom = pair.source != "predicted" && !earlier_oom;
  Option o;
  o.changes = s.move->changes;
  o.lever_id = s.move->lever_id;
  o.levers = {s.move->lever_id};
  o.gain = pair.gain;
  o.order = s.order;
  std::string why = oom ? DiagnosisText(ctx, "oom")
                        : pair.hungry.lever_id + " [" + DescribeChanges(pair.hungry.changes) +
                              (earlier_oom ? "] ran out of memory from an earlier recipe and is "
                                             "not predicted to need clearly less now"
                                           : "] is predicted not to fit");
  o.rationale = why + " → " + s.move->lever_id + " [" + MoveText(*s.move) + "] saves " +
                Percent(-s.memory) + " memory (needs " + Percent(-pair.needed_saving) +
                ") so that " + pair.hungry.lever_id + " [" +
                DescribeChanges(pair.hungry.changes) +
                "] fits; measured alone first, then that change from it: expected " +
                Percent(pair.gain) + " (" + Percent(s.speed) + " + " + Fixed(pair.confidence) +
                " × " + Percent(pair.beyond_gain) + ", what it gains beyond the best move of " +
                pair.hungry.lever_id + " that fits)";
  o.meta = {{"expected_gain", pair.gain},
            {"pair_source", pair.source},
            {"memory", s.memory},
            {"saver_memory", s.memory},
            {"needed_saving", pair.needed_saving},
            {"then", {{"lever_id", pair.hungry.lever_id},
                      {"changes", ChangesToJson(pair.hungry.changes)},
                      {"gain", pair.hungry_gain}}}};
  return o;
}

// A re-opening (reopen.h) is proposed like a pair: the enabler alone, with the lost change it
// re-opens in meta.then; the lost change follows from the enabler's candidate (FollowUps).
Option ReopenOption(const ScoringContext& ctx, const ReopenChoice& c) {
  const MoveEstimate& e = *c.enabler;
  Option o = SingleOption(ctx, e);
  o.gain = c.gain;
  o.rationale = c.lost.lever_id + " [" + DescribeChanges(c.lost.changes) + "] lost " +
                Percent(c.lost_effect) + " in " + c.lost_id + " under a setting of " +
                e.move->lever_id + " that a kept move introduced → " + e.move->lever_id + " [" +
                MoveText(*e.move) + "] takes it back to an ancestor's value, measured alone first, "
                "then that change from it: expected " + Percent(c.gain) + " (" +
                Percent(e.gain) + " + " + Fixed(kPairConfidence) + " × " +
                Percent(c.reopened_gain) + ", half the larger of its prior and its loss)";
  o.meta["expected_gain"] = c.gain;
  o.meta["reopens"] = c.lost_id;
  o.meta["then"] = {{"lever_id", c.lost.lever_id},
                    {"changes", ChangesToJson(c.lost.changes)},
                    {"gain", c.reopened_gain}};
  return o;
}

// An enabling (unlocks.h) is proposed like a pair: the enabler alone, with the change it makes
// legal in meta.then; that change follows from the enabler's candidate (FollowUps).
Option EnablerOption(const ScoringContext& ctx, const UnlockChoice& c) {
  const MoveEstimate& e = *c.enabler;
  Option o = SingleOption(ctx, e);
  o.gain = c.gain;
  o.rationale = e.move->lever_id + " [" + MoveText(*e.move) + "] makes " + c.unlocked.lever_id +
                " [" + MoveText(c.unlocked) + "] legal, which the stack does not offer from the " +
                "leader; measured alone first, then that change from it: expected " +
                Percent(c.gain) + " (" + Percent(e.gain) + " + " + Fixed(kPairConfidence) + " × " +
                Percent(c.unlocked_gain) + ")";
  o.meta["expected_gain"] = c.gain;
  o.meta["unlocks"] = c.unlocked.lever_id;
  o.meta["then"] = {{"lever_id", c.unlocked.lever_id},
                    {"changes", ChangesToJson(c.unlocked.changes)},
                    {"gain", c.unlocked_gain}};
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

double Throughput(const std::optional<Measurement>& m) {
  return m ? m->tokens_per_s_per_gpu : 0;
}

// The parent's throughput relative to the leader's (1 when either is unknown).
double RatioToLeader(const CampaignView& view, double parent_tps) {
  double leader = Throughput(view.leader_measurement);
  return leader > 0 && parent_tps > 0 ? parent_tps / leader : 1.0;
}

// The ratio a move from a parent is valued with. A parent that leads the leader by less than half
// the noise band counts as exactly as fast: such a lead is what two measurements of one recipe
// differ by, and counting it would value every move a hair higher from that parent than from the
// leader, so the campaign would drift onto the parent's line and carry its change, never shown to
// help, into every later leader (a dispatcher switched by noise then keeps a lever that needs the
// other dispatcher out of reach). The same move from the leader then wins the tie (it comes
// first). A larger lead within the band still counts: two such winners combine.
double ParentRatio(const CampaignView& view, double parent_tps) {
  const double ratio = RatioToLeader(view, parent_tps);
  return ratio - 1 < view.noise_band / 2 ? std::min(ratio, 1.0) : ratio;
}

// The view as seen from another measured candidate: its recipe, numbers and moves in the leader's
// place, so that the scoring reads them exactly as it reads the leader's.
CampaignView ViewFrom(const CampaignView& view, const ParentView& parent) {
  CampaignView sub = view;
  sub.leader = parent.recipe;
  sub.leader_id = parent.id;
  sub.leader_measurement = parent.measurement;
  sub.diagnosis = parent.diagnosis;
  sub.legal_moves = parent.legal_moves;
  sub.parents.clear();
  return sub;
}

// One lever's moves from every other measured candidate, valued against the leader:
// (parent / leader) × (1 + the move's expected gain from the parent) − 1, a parent that leads by
// less than half the noise band counted as fast as the leader (ParentRatio). This is how two
// winners that were each within noise combine, one lever at a time.
void AddParentOptions(const CampaignView& view, const TriedSet& tried, std::vector<Option>* out) {
  for (size_t p = 0; p < view.parents.size(); ++p) {
    const ParentView& parent = view.parents[p];
    CampaignView sub = ViewFrom(view, parent);
    ScoringContext ctx = MakeScoringContext(sub);
    const double measured = RatioToLeader(view, parent.measurement.tokens_per_s_per_gpu);
    const double ratio = ParentRatio(view, parent.measurement.tokens_per_s_per_gpu);
    for (size_t i = 0; i < sub.legal_moves.size(); ++i) {
      const Move& m = sub.legal_moves[i];
      if (AlreadyTried(tried, parent.recipe, m.changes, parent.measurement.peak_memory_gib)) continue;
      MoveEstimate e = EstimateMove(ctx, m, static_cast<int>(i));
      if (!e.feasible) continue;
      Option o = SingleOption(ctx, e);
      o.base_id = parent.id;
      o.gain = ratio * (1 + e.gain) - 1;
      o.order = static_cast<int>((p + 1) * 100000 + i);
      o.rationale =
          "from " + parent.id + " (" + Percent(measured - 1) + " against the leader " +
          view.leader_id +
          (ratio != measured ? ", under half the noise band: counted as " + Percent(ratio - 1)
                             : std::string()) +
          "): " + o.rationale + "; against the leader " + Percent(o.gain);
      o.meta["parent_ratio"] = ratio;
      if (ratio != measured) o.meta["parent_measured_ratio"] = measured;
      o.meta["expected_gain"] = o.gain;
      out->push_back(std::move(o));
    }
  }
}

// The recipe and legal moves of a measured candidate (the leader or one of view.parents).
struct Base {
  const Recipe* recipe = nullptr;
  const std::vector<Move>* moves = nullptr;
  double tps = 0;
};

std::optional<Base> FindBase(const CampaignView& view, const std::string& id) {
  if (id == view.leader_id) {
    return Base{&view.leader, &view.legal_moves, Throughput(view.leader_measurement)};
  }
  for (const ParentView& p : view.parents) {
    if (p.id == id) return Base{&p.recipe, &p.legal_moves, p.measurement.tokens_per_s_per_gpu};
  }
  return std::nullopt;
}

bool Measured(const CandidateRecord& r) {
  return r.outcome == Outcome::kSlower || r.outcome == Outcome::kWithinNoise ||
         r.outcome == Outcome::kNewLeader;
}

bool SameChanges(const std::vector<Change>& a, const std::vector<Change>& b) {
  if (a.size() != b.size()) return false;
  for (const Change& x : a) {
    auto hit = std::find_if(b.begin(), b.end(),
                            [&](const Change& y) { return y.key == x.key && y.to == x.to; });
    if (hit == b.end()) return false;
  }
  return true;
}

// The second half of a pair: the change a measured saver made room for, from the saver's
// candidate, when it is one of that candidate's legal moves and its recipe is untried. The
// change itself ran out of memory (or was predicted to) from a bigger recipe, so the bans that
// keep it out elsewhere do not apply here; pairs.h's limit on failed follow-ups does.
void AddFollowUps(const ScoringContext& ctx, std::vector<Option>* out) {
  const CampaignView& view = *ctx.view;
  for (const CandidateRecord& r : view.history) {
    if (!Measured(r) || !r.agent_meta.is_object() || !r.agent_meta.contains("then")) continue;
    std::optional<Base> base = FindBase(view, r.candidate_id);
    if (!base) continue;
    const nlohmann::json& then = r.agent_meta["then"];
    auto wanted = ChangesFromJson(then.value("changes", nlohmann::json::array()));
    if (!wanted.ok() || wanted->empty()) continue;
    if (FailedFollowUps(view, *wanted) >= 2) continue;
    for (size_t i = 0; i < base->moves->size(); ++i) {
      const Move& m = (*base->moves)[i];
      if (m.lever_id != then.value("lever_id", "") || !SameChanges(m.changes, *wanted)) continue;
      std::optional<Recipe> recipe = Apply(*base->recipe, m.changes);
      if (!recipe || ctx.tried.recipe_ids.count(RecipeId(*recipe)) > 0) continue;
      const double ratio = RatioToLeader(view, base->tps);
      const double hungry_gain = then.value("gain", 0.0);
      Option o;
      o.base_id = r.candidate_id == view.leader_id ? "" : r.candidate_id;
      o.changes = m.changes;
      o.lever_id = m.lever_id;
      o.levers = {m.lever_id};
      o.gain = ratio * (1 + kPairConfidence * hungry_gain) - 1;
      o.order = static_cast<int>(i);
      const bool reopen = r.agent_meta.contains("reopens");
      const bool enabled = r.agent_meta.contains("unlocks");
      o.rationale = r.candidate_id + " (" + r.lever_id + ", " + Percent(ratio - 1) +
                    " against the leader) " +
                    (reopen    ? "re-opened "
                     : enabled ? "made legal "
                               : "made room for ") +
                    m.lever_id + " [" + MoveText(m) + "]: from " + r.candidate_id + " expected " +
                    Percent(o.gain) + " against the leader (" + Fixed(kPairConfidence) + " × " +
                    Percent(hungry_gain) + ")";
      o.meta = {{"expected_gain", o.gain},
                {"follow_up_of", r.candidate_id},
                {"saver_memory", r.agent_meta.value("saver_memory", 0.0)},
                {"parent_ratio", ratio}};
      out->push_back(std::move(o));
      break;
    }
  }
}

Proposal ToProposal(const Option& o, const std::string& prefix = "") {
  Proposal p;
  p.base_id = o.base_id;
  p.changes = o.changes;
  p.lever_id = o.lever_id;
  p.rationale = prefix + o.rationale;
  p.meta = o.meta;
  p.meta["levers"] = o.levers;
  if (!o.base_id.empty()) p.meta["base"] = o.base_id;
  return p;
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
    } else if (key == "explore" && value.is_boolean()) {
      c.explore = value.get<bool>();
    } else {
      return Status::InvalidArgument("agent 'heuristic': with." + key +
                                     ": unknown key or wrong type (expected min_gain: number, "
                                     "pair_after_oom: bool, explore: bool)");
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
    const std::optional<double> peak = view.leader_measurement ? view.leader_measurement->peak_memory_gib
                                                               : std::nullopt;
    if (AlreadyTried(ctx.tried, view.leader, m.changes, peak)) {
      // A change that ran out of memory elsewhere is the memory model's call: open again where it
      // is predicted to need clearly less than it was where it failed.
      if (!BlockedOnlyByOutOfMemory(ctx.tried, view.leader, m.changes)) continue;
      MoveEstimate e = EstimateMove(ctx, m, static_cast<int>(i));
      if (!e.predicted_peak_gib ||
          TouchesBanned(ctx.tried, m.changes, peak, e.predicted_peak_gib)) {
        // Still out of memory by what the model can tell: not proposed alone, but a saver may
        // bring it back (pairs.h).
        e.feasible = false;
        e.oom_banned = true;
        e.note = "ran out of memory before, and is not predicted to need clearly less now";
      }
      all.push_back(e);
      continue;
    }
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
  std::vector<Option> options;
  for (const MoveEstimate& e : all) {
    if (e.feasible) options.push_back(SingleOption(ctx, e));
  }
  if (config_.pair_after_oom) {
    if (std::optional<PairChoice> pair = BestPair(ctx, all)) {
      // A saver's unlock bonus stands for the pair it leads to; the saver proposed for a pair
      // carries the pair's value and the change to try after it instead.
      for (Option& o : options) {
        if (o.lever_id == pair->saver->move->lever_id && o.changes == pair->saver->move->changes) {
          o = SaverOption(ctx, *pair);
        }
      }
    }
  }
  if (std::optional<ReopenChoice> reopen = BestReopen(ctx, all)) {
    for (Option& o : options) {
      if (o.base_id.empty() && o.lever_id == reopen->enabler->move->lever_id &&
          o.changes == reopen->enabler->move->changes && reopen->gain > o.gain) {
        o = ReopenOption(ctx, *reopen);
      }
    }
  }
  if (std::optional<UnlockChoice> unlock = BestUnlock(ctx, all)) {
    for (Option& o : options) {
      if (o.base_id.empty() && o.lever_id == unlock->enabler->move->lever_id &&
          o.changes == unlock->enabler->move->changes && unlock->gain > o.gain) {
        o = EnablerOption(ctx, *unlock);
      }
    }
  }
  // Follow-ups of pairs, re-openings and enablings alike (only a pair's meta.then is about
  // memory).
  AddFollowUps(ctx, &options);
  AddParentOptions(view, ctx.tried, &options);
  std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
    if (a.gain != b.gain) return a.gain > b.gain;
    return a.order < b.order;
  });
  if (options.empty()) {
    return Done("no untried legal move is left from the leader or any measured candidate");
  }
  // A saver is measured alone for the change it makes room for: when the last candidate measured
  // is such a saver and the change from it is still worth something against the leader, it comes
  // at once, before the saver's recipe drifts away from the leader's line (a better move taken
  // first leaves the pair half done, its saver's job spent for nothing). A saver or enabler that
  // became the leader has no line to drift from: the change after it is a move from the leader
  // like any other and waits for its estimate to rank first (a +0.4% overlap that PP 2 -> 1 made
  // legal does not go before a +6% TP move).
  if (!view.history.empty() && Measured(view.history.back()) &&
      view.history.back().candidate_id != view.leader_id) {
    const std::string& saver = view.history.back().candidate_id;
    for (const Option& o : options) {
      if (o.gain > 0 && o.meta.is_object() && o.meta.value("follow_up_of", "") == saver) {
        return ToProposal(o, "following up " + saver + " at once: ");
      }
    }
  }
  const Option& best = options.front();
  double threshold = config_.min_gain.value_or(view.noise_band);
  if (best.gain > threshold) return ToProposal(best);
  if (!config_.explore) return Done(DoneText(ctx, all, threshold));
  // Never idle while budget and moves remain: the priors promise nothing above the noise band, so
  // measure what they rank highest, a measurement replacing the prior. What has been measured
  // least comes first: each earlier measurement of the same lever (any value, from any base)
  // costs kExploreRepeatCost, so that one lever is not re-tried from every parent whose noise
  // happened to lift it while other levers were never measured.
  std::map<std::string, int> measured;
  for (const CandidateRecord& r : view.history) {
    if (r.measurement) ++measured[r.lever_id];
  }
  auto score = [&](const Option& o) {
    // The second half of a pair whose saver was measured for it: the saver's job bought this
    // measurement, which no earlier one of its lever made (a new base), so it pays no repeat cost.
    if (o.meta.contains("follow_up_of")) return o.gain;
    auto it = measured.find(o.lever_id);
    return o.gain - kExploreRepeatCost * (it == measured.end() ? 0 : it->second);
  };
  const Option* pick = &options.front();
  for (const Option& o : options) {
    if (score(o) > score(*pick)) pick = &o;
  }
  Proposal p = ToProposal(*pick, "exploring (no move is expected to beat the noise band of " +
                                     Percent(threshold) + "; this is the best of " +
                                     std::to_string(options.size()) +
                                     " untried moves, the levers measured least first): ");
  p.meta["explore"] = true;
  p.meta["lever_measurements"] = measured.count(pick->lever_id) ? measured[pick->lever_id] : 0;
  return p;
}

Result<std::unique_ptr<Plugin>> CreateHeuristicAgent(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(HeuristicConfig config, ParseHeuristicConfig(context.config));
  return std::unique_ptr<Plugin>(std::make_unique<HeuristicAgent>(config));
}

}  // namespace attune::agents
