// Copyright attune authors.
#include "scoring.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "activation_memory.h"
#include "comm_estimate.h"
#include "comm_speed.h"
#include "param_memory.h"
#include "pipeline_estimate.h"
#include "reading.h"

namespace attune::agents {
namespace {

std::optional<double> Number(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  const char* begin = text->c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end != begin + text->size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

const Change& MainChange(const std::vector<Change>& changes, const Lever* lever) {
  if (lever != nullptr) {
    for (const Change& c : changes) {
      if (std::find(lever->keys.begin(), lever->keys.end(), c.key) != lever->keys.end()) return c;
    }
  }
  return changes.front();
}

// Values that mean "the feature is off / the stack's default".
bool IsOffValue(const std::string& v) {
  return v == "none" || v == "auto" || v == "false" || v == "off" || v == "0";
}

// A categorical value's place in the lever's `order` for its key (Lever::order: least to most of
// the feature, "" for absent), so that, e.g., full -> selective recompute reads as a move back.
std::optional<int> OrderRank(const Lever* lever, const std::string& key,
                             const std::optional<std::string>& value) {
  if (lever == nullptr) return std::nullopt;
  auto it = lever->order.find(key);
  if (it == lever->order.end()) return std::nullopt;
  auto at = std::find(it->second.begin(), it->second.end(), value.value_or(""));
  if (at == it->second.end()) return std::nullopt;
  return static_cast<int>(at - it->second.begin());
}

// The main change with an absent `from` replaced by what the stack says absent means.
Change Effective(const std::vector<Change>& changes, const Lever* lever,
                 const std::map<std::string, std::string>* defaults) {
  Change c = MainChange(changes, lever);
  if (!c.from && defaults) {
    auto known = defaults->find(c.key);
    if (known != defaults->end()) c.from = known->second;
  }
  return c;
}

void AddUnique(std::vector<std::string>* list, const std::string& s) {
  if (std::find(list->begin(), list->end(), s) == list->end()) list->push_back(s);
}

// The catalog's forward prior blended with past campaigns' lessons (forward effects); a reverse
// move is worth its opposite.
double SpeedPrior(const ScoringContext& ctx, const Lever& lever, int direction) {
  double forward = lever.expected_speed;
  auto lesson = ctx.lessons.find(lever.id);
  if (lesson != ctx.lessons.end()) {
    int n = std::min(lesson->second.count, 3);  // because a few lessons should not drown the catalog
    forward = (forward + lesson->second.effect * n) / (1 + n);
  }
  return direction < 0 ? -forward : forward;
}

bool IsMemoryKind(const std::string& kind) {
  return kind == "memory_headroom" || kind == "memory_pressure" || kind == "oom";
}

// Catalogs list the memory kinds a lever addresses in either direction (micro-batch size lists
// headroom and pressure); the move's own memory sign decides which one it addresses.
//
// Free memory is an opening only for a move whose speed comes from spending it: a lever the
// catalog says turns headroom into speed (a larger micro-batch, less recomputation), or the
// undoing of a memory saver (less TP, PP or sharding). A move that merely costs some memory on
// the side (CUDA graphs, virtual pipeline stages) does not address it.
std::vector<std::string> Addresses(const Lever& lever, int direction, double speed,
                                   double memory) {
  std::vector<std::string> out;
  if (direction > 0) {
    for (const std::string& kind : lever.addresses) {
      if (!IsMemoryKind(kind)) out.push_back(kind);
    }
  }
  const bool spends_headroom =
      std::find(lever.addresses.begin(), lever.addresses.end(), "memory_headroom") != lever.addresses.end() ||
      (direction < 0 && lever.expected_memory < 0);
  if (memory > 0.02 && speed > 0 && spends_headroom) AddUnique(&out, "memory_headroom");
  if (memory < -0.02) {
    AddUnique(&out, "memory_pressure");
    AddUnique(&out, "oom");
  }
  return out;
}

// What a larger value of a parallel size costs that the catalog's forward priors cannot say
// (reading.h): more expert-parallel ranks hold fewer experts each (the busiest waits longer) and
// spread the group over more nodes; a larger ETP puts the EP ranks further apart. A move that
// lowers such a key addresses those diagnoses, whatever its lever's direction.
const std::map<std::string, std::vector<std::string>>& CostsOfMore() {
  static const std::map<std::string, std::vector<std::string>> kCosts = {
      {"--expert-model-parallel-size", {"moe_imbalance", "moe_dispatch"}},
      {"--expert-tensor-parallel-size", {"moe_dispatch"}},
  };
  return kCosts;
}

// Keys whose every change addresses a MoE reading: the token dispatcher decides how routed tokens
// cross the network (flex sends one copy per destination node).
const std::map<std::string, std::vector<std::string>>& AnyChangeAddresses() {
  static const std::map<std::string, std::vector<std::string>> kKinds = {
      {"--moe-token-dispatcher-type", {"moe_dispatch"}},
  };
  return kKinds;
}

void AddReliefs(const Move& move, const std::map<std::string, std::string>& defaults,
                std::vector<std::string>* out) {
  for (const Change& c : move.changes) {
    auto any = AnyChangeAddresses().find(c.key);
    if (any != AnyChangeAddresses().end()) {
      for (const std::string& kind : any->second) AddUnique(out, kind);
    }
    auto costs = CostsOfMore().find(c.key);
    if (costs == CostsOfMore().end()) continue;
    std::optional<std::string> from_text = c.from;
    if (!from_text) {
      auto d = defaults.find(c.key);
      if (d != defaults.end()) from_text = d->second;
    }
    std::optional<double> from = Number(from_text), to = Number(c.to);
    if (!from || !to || *to >= *from) continue;
    for (const std::string& kind : costs->second) AddUnique(out, kind);
  }
}

}  // namespace

std::optional<double> MeasuredEffect(const CampaignView& view, const CandidateRecord& r) {
  if (!r.speedup_vs_baseline) return std::nullopt;
  double base = 1;
  if (r.base_id != "baseline") {
    auto it = std::find_if(view.history.begin(), view.history.end(),
                           [&](const CandidateRecord& b) { return b.candidate_id == r.base_id; });
    if (it == view.history.end() || !it->speedup_vs_baseline) return std::nullopt;
    base = *it->speedup_vs_baseline;
  }
  return base > 0 ? std::optional<double>(*r.speedup_vs_baseline / base - 1) : std::nullopt;
}

namespace {

// The prior blended with what this campaign measured for the same lever and direction (each
// measurement counts as much as the prior), scaled per step.
double BlendMeasured(const ScoringContext& ctx, const Lever& lever, int direction,
                     double prior) {
  double sum = prior;
  int n = 1;
  for (const CandidateRecord& r : ctx.view->history) {
    if (r.lever_id != lever.id || r.changes.empty()) continue;
    MoveShape shape = ShapeOf(r.changes, &lever, &ctx.defaults);
    if (shape.direction != direction) continue;
    std::optional<double> effect = MeasuredEffect(*ctx.view, r);
    if (!effect) continue;
    sum += *effect / std::max(1.0, shape.steps);
    ++n;
  }
  return sum / n;
}

// A whole-move estimate from the recipe's shape (pipeline, overlaps, expert TP) blended with what
// this campaign measured for the same change — the lever's key moved from the same value to the
// same value — from any other base: each measurement counts as much as the estimate. The shape
// models miss what they do not model, and a change measured 20% slower three times is not
// proposed a fourth time at -3% (nor taken as a cheap saver for a pair).
double BlendSameChange(const ScoringContext& ctx, const Lever& lever, const Move& move,
                       double estimate) {
  const Change main = Effective(move.changes, &lever, &ctx.defaults);
  double sum = estimate;
  int n = 1;
  for (const CandidateRecord& r : ctx.view->history) {
    if (r.lever_id != lever.id || r.changes.empty()) continue;
    const Change past = Effective(r.changes, &lever, &ctx.defaults);
    if (past.key != main.key || past.from != main.from || past.to != main.to) continue;
    std::optional<double> effect = MeasuredEffect(*ctx.view, r);
    if (!effect) continue;
    sum += *effect;
    ++n;
  }
  return sum / n;
}

// An amortizing size (scoring.h): a numeric lever that spends memory (a positive memory prior)
// against both memory headroom and launch overhead, i.e. spreads a fixed per-step cost over more
// work per step: micro-batch sizes.
bool Amortizes(const Lever& lever) {
  auto addresses = [&](const char* kind) {
    return std::find(lever.addresses.begin(), lever.addresses.end(), kind) != lever.addresses.end();
  };
  return lever.expected_memory > 0 && addresses("memory_headroom") && addresses("launch_overhead");
}

// A forward move of an amortizing size, valued from the latest measured forward move of the same
// lever in this campaign: with a step costing a + c·b for a size b, that move's measured ratio R
// from u to u' gives the fixed share k = a/c = u'(R − 1)/(u'/u − R), and a move from v to w is
// then worth (w/v)·(k + v)/(k + w) − 1. std::nullopt when no such measurement exists or it
// measured no gain (R ≤ 1: nothing to amortize, the catalog's prior and history decide).
std::optional<double> AmortizedSpeed(const ScoringContext& ctx, const Lever& lever,
                                     const Move& move) {
  if (!Amortizes(lever)) return std::nullopt;
  const Change c = Effective(move.changes, &lever, &ctx.defaults);
  std::optional<double> v = Number(c.from), w = Number(c.to);
  if (!v || !w || *v <= 0 || *w <= *v) return std::nullopt;
  for (auto r = ctx.view->history.rbegin(); r != ctx.view->history.rend(); ++r) {
    if (r->lever_id != lever.id || r->changes.empty()) continue;
    const Change past = Effective(r->changes, &lever, &ctx.defaults);
    std::optional<double> u = Number(past.from), u2 = Number(past.to);
    if (past.key != c.key || !u || !u2 || *u <= 0 || *u2 <= *u) continue;
    std::optional<double> effect = MeasuredEffect(*ctx.view, *r);
    if (!effect) continue;
    const double ideal = *u2 / *u;  // a purely fixed cost: the ratio of the sizes
    const double ratio = std::min(1 + *effect, 0.95 * ideal);
    if (ratio <= 1) return std::nullopt;
    const double k = *u2 * (ratio - 1) / (ideal - ratio);
    return (*w / *v) * (k + *v) / (k + *w) - 1;
  }
  return std::nullopt;
}

// How far a move goes on its main key: the distance between ranks for ordered categorical values
// (recompute full -> none is 2, full -> selective 1), the shape's steps otherwise.
double Reach(const std::vector<Change>& changes, const Lever& lever,
             const std::map<std::string, std::string>& defaults) {
  const Change c = Effective(changes, &lever, &defaults);
  std::optional<int> from = OrderRank(&lever, c.key, c.from), to = OrderRank(&lever, c.key, c.to);
  if (from && to) return std::abs(*to - *from);
  return ShapeOf(changes, &lever, &defaults).steps;
}

// The best measured effect of a move of `lever` from the recipe the view's leader is, in
// `direction`, that went at least as far as `move` (the id of its candidate in *by).
std::optional<double> SiblingBound(const ScoringContext& ctx, const Lever& lever, const Move& move,
                                   int direction, std::string* by) {
  const CampaignView& view = *ctx.view;
  const double reach = Reach(move.changes, lever, ctx.defaults);
  std::optional<double> bound;
  for (const CandidateRecord& r : view.history) {
    if (r.base_id != view.leader_id || r.lever_id != lever.id || r.changes.empty()) continue;
    // Ranked on a measurement (a run that failed for the infrastructure and was run again still
    // leaves its failure on the record: the outcome says whether the lever was measured).
    if (r.outcome != Outcome::kNewLeader && r.outcome != Outcome::kWithinNoise &&
        r.outcome != Outcome::kSlower) {
      continue;
    }
    if (ShapeOf(r.changes, &lever, &ctx.defaults).direction != direction) continue;
    if (Reach(r.changes, lever, ctx.defaults) < reach) continue;
    std::optional<double> effect = MeasuredEffect(view, r);
    if (effect && (!bound || *effect > *bound)) {
      bound = effect;
      *by = r.candidate_id;
    }
  }
  return bound;
}

// The peak memory of a record's base (the baseline's or a measured candidate's), when known.
std::optional<double> BasePeak(const CampaignView& view, const CandidateRecord& r) {
  if (r.base_id == "baseline") {
    if (!view.baseline_measurement) return std::nullopt;
    return view.baseline_measurement->peak_memory_gib;
  }
  auto it = std::find_if(view.history.begin(), view.history.end(),
                         [&](const CandidateRecord& b) { return b.candidate_id == r.base_id; });
  if (it == view.history.end() || !it->measurement) return std::nullopt;
  return it->measurement->peak_memory_gib;
}

// The lever's forward memory prior per step blended with what this campaign measured for it
// (each measurement counts as much as the prior, as for speed). Memory is physical, so a reverse
// measurement is read as the inverse of a forward one: EP 4 -> 8 using 79% of the memory says
// EP 8 -> 4 needs 1/0.79. Without this a pessimistic catalog prior keeps a move that fits out for
// the whole campaign (a saver taken for a pair could never be undone).
double BlendMeasuredMemory(const ScoringContext& ctx, const Lever& lever, double prior) {
  double sum = prior;
  int n = 1;
  for (const CandidateRecord& r : ctx.view->history) {
    if (r.lever_id != lever.id || r.changes.empty() || !r.measurement) continue;
    std::optional<double> peak = r.measurement->peak_memory_gib;
    std::optional<double> base = BasePeak(*ctx.view, r);
    if (!peak || !base || *peak <= 0 || *base <= 0) continue;
    MoveShape shape = ShapeOf(r.changes, &lever, &ctx.defaults);
    double ratio = shape.direction > 0 ? *peak / *base : *base / *peak;
    // The inverse of EstimateMove's size rule: growth is linear in 2^steps - 1, savings compound.
    sum += ratio > 1 ? (ratio - 1) / (std::exp2(shape.steps) - 1)
                     : std::pow(ratio, 1 / shape.steps) - 1;
    ++n;
  }
  return sum / n;
}

double HistoryFactor(const ScoringContext& ctx, const Lever& lever, int direction) {
  double factor = 1;
  for (const CandidateRecord& r : ctx.view->history) {
    if (r.lever_id != lever.id || r.changes.empty()) continue;
    if (ShapeOf(r.changes, &lever, &ctx.defaults).direction != direction) continue;
    bool current = r.base_id == ctx.view->leader_id;
    if (r.outcome == Outcome::kSlower) factor *= current ? 0.35 : 0.7;
    if (r.outcome == Outcome::kWithinNoise) factor *= current ? 0.5 : 0.85;
    if (r.outcome == Outcome::kNewLeader) factor *= 1.1;
  }
  return std::min(factor, 1.3);
}

// Expert corrections the catalog priors cannot express: a larger micro-batch under PP grows the
// bubble; TP beyond the NVLink domain pays inter-node all-reduces on every layer.
double ShapeCorrection(const ScoringContext& ctx, const Move& move) {
  const Recipe& leader = ctx.view->leader;
  RecipeShape before = ReadShape(leader);
  double correction = 0;
  for (const Change& c : move.changes) {
    if (c.key == "--micro-batch-size" && before.pp > 1) {
      std::optional<Recipe> after_recipe = Apply(leader, {c});
      if (!after_recipe) continue;
      double after = ReadShape(*after_recipe).Bubble();
      correction -= (1 + after) / (1 + before.Bubble()) - 1;
    }
    if (c.key == "--tensor-model-parallel-size") {
      std::optional<double> to = Number(c.to);
      if (to && *to > NvlinkReach(ctx.view->cluster, leader.topology.gpus_per_node))
        correction -= 0.3;
    }
  }
  return correction;
}

// The speed a smaller expert-parallel size is worth from the imbalance it relieves: every rank
// waits for the busiest at each combine, so the expert layers (about kMoeTimeShare of a MoE
// model's step) speed up by the ratio of the busiest rank's loads before and after. The catalog
// has one prior for every EP move; this grows with how few experts each rank holds.
constexpr double kMoeTimeShare = 0.5;

double ImbalanceRelief(const Recipe& leader, const Move& move) {
  RecipeShape before = ReadShape(leader);
  std::optional<Recipe> after_recipe = Apply(leader, move.changes);
  if (!after_recipe || before.experts <= 0) return 0;
  RecipeShape after = ReadShape(*after_recipe);
  if (after.ep >= before.ep) return 0;
  return kMoeTimeShare * ((1 + MoeBusiestExcess(before.experts, before.ep)) /
                              (1 + MoeBusiestExcess(after.experts, after.ep)) -
                          1);
}

void CheckMemory(const ScoringContext& ctx, MoveEstimate* e) {
  const CampaignView& v = *ctx.view;
  for (const Change& c : e->move->changes) {
    auto floor = ctx.oom_at.find(c.key);
    std::optional<double> to = Number(c.to);
    std::optional<double> from = Number(c.from);
    if (floor != ctx.oom_at.end() && to && from && *to > *from && *to >= floor->second) {
      e->feasible = false;
      e->note = c.key + " = " + *c.to + " is at or above a value that ran out of memory";
      return;
    }
  }
  if (!v.leader_measurement || !v.leader_measurement->peak_memory_gib) {
    if (e->memory > 0.05) e->risk = 0.85;
    return;
  }
  double peak = *v.leader_measurement->peak_memory_gib;
  e->predicted_peak_gib = peak * (1 + e->memory);
  double capacity = v.cluster.device_memory_gib;
  if (capacity > 0 && e->memory > 0 && *e->predicted_peak_gib > 0.75 * capacity) {
    e->risk = 0.8;  // because the memory prior is rough and an OOM costs a whole job
  }
  // A move that uses no more memory than the leader, which ran, is never ruled out by the limit.
  if (capacity > 0 && e->memory > 0 && *e->predicted_peak_gib > kMemoryLimit * capacity) {
    e->feasible = false;
    char buf[128];
    std::snprintf(buf, sizeof buf, "predicted peak %.1f GiB exceeds %.0f%% of %.0f GiB",
                  *e->predicted_peak_gib, kMemoryLimit * 100, capacity);
    e->note = buf;
  }
}

}  // namespace

MoveShape ShapeOf(const std::vector<Change>& changes, const Lever* lever,
                  const std::map<std::string, std::string>* defaults) {
  MoveShape shape;
  if (changes.empty()) return shape;
  // An absent key whose meaning the stack told (Move::defaults): a move from that value.
  const Change c = Effective(changes, lever, defaults);
  // The catalog's order decides first: checkpointing "true" -> "selective" is a move back,
  // where both ends read as "on" to the switch rule below.
  std::optional<int> rank_from = OrderRank(lever, c.key, c.from);
  std::optional<int> rank_to = OrderRank(lever, c.key, c.to);
  if (rank_from && rank_to && *rank_from != *rank_to) {
    shape.direction = *rank_to > *rank_from ? 1 : -1;
    return shape;
  }
  bool from_off = !c.from || IsOffValue(*c.from);
  bool to_off = !c.to || IsOffValue(*c.to);
  std::optional<double> from = Number(c.from), to = Number(c.to);
  if (from && to) {
    shape.direction = *to >= *from ? 1 : -1;
    if (*from > 0 && *to > 0) shape.steps = std::max(1.0, std::fabs(std::log2(*to / *from)));
    return shape;
  }
  if (from_off != to_off) {
    shape.direction = to_off ? -1 : 1;
    return shape;
  }
  shape.strength = 0.7;
  return shape;
}

namespace {

// True when a larger value of `lever_id`'s keys uses more memory (its catalog memory prior is
// positive: a batch size), so that setting one where it was absent is a move up.
bool GrowsWithValue(const ScoringContext& ctx, const std::string& lever_id) {
  auto lever = ctx.levers.find(lever_id);
  return lever != ctx.levers.end() && lever->second->expected_memory > 0;
}

}  // namespace

ScoringContext MakeScoringContext(const CampaignView& view) {
  ScoringContext ctx;
  ctx.view = &view;
  for (const Lever& l : view.levers) ctx.levers[l.id] = &l;
  ctx.diagnoses = ReadDiagnoses(view);
  ctx.tried = CollectTried(view);
  auto add_defaults = [&](const std::vector<Move>& moves) {
    for (const Move& m : moves) {
      for (const auto& [key, value] : m.defaults) ctx.defaults.emplace(key, value);
    }
  };
  add_defaults(view.legal_moves);
  for (const auto& parent : view.parents) add_defaults(parent.legal_moves);
  // Past campaigns' effects, each turned into its lever's forward direction.
  ctx.lessons = ParseLessons(LessonsForStack(view.lessons, view.stack), [&ctx](const std::string& lever_id, const std::vector<Change>& changes) {
    auto lever = ctx.levers.find(lever_id);
    return ShapeOf(changes, lever == ctx.levers.end() ? nullptr : lever->second, &ctx.defaults).direction;
  });
  for (const CandidateRecord& r : view.history) {
    if (!r.failure || r.failure->kind != FailureKind::kOom) continue;
    for (const Change& c : r.changes) {
      // From an absent key: from what the stack says absence means (a config's own batch size).
      // Where no move of the view says it any more (the leader has set the key since), a lever
      // whose larger values use more memory (a batch size) read the failure as a move up.
      std::optional<std::string> from_text = c.from;
      if (!from_text) {
        auto d = ctx.defaults.find(c.key);
        if (d != ctx.defaults.end()) from_text = d->second;
      }
      std::optional<double> from = Number(from_text), to = Number(c.to);
      if (!to) continue;
      if (from_text ? (!from || *to <= *from) : !GrowsWithValue(ctx, r.lever_id)) continue;
      auto it = ctx.oom_at.find(c.key);
      if (it == ctx.oom_at.end() || *to < it->second) ctx.oom_at[c.key] = *to;
    }
  }
  return ctx;
}

MoveEstimate EstimateMove(const ScoringContext& ctx, const Move& move, int order) {
  MoveEstimate e;
  e.move = &move;
  e.order = order;
  auto it = ctx.levers.find(move.lever_id);
  if (it == ctx.levers.end() || move.changes.empty()) {
    e.feasible = false;
    e.note = "lever '" + move.lever_id + "' is not in the catalog";
    return e;
  }
  const Lever& lever = *it->second;
  MoveShape shape = ShapeOf(move.changes, &lever, &move.defaults);
  e.direction = shape.direction;
  e.steps = shape.steps;
  e.speed_modelled = true;
  if (std::optional<double> pipeline = PipelineSpeed(ctx, move)) {
    // Computed for the whole move from both recipes: no per-step prior to scale.
    e.speed = BlendSameChange(ctx, lever, move, *pipeline);
  } else if (std::optional<double> overlap = GradReduceOverlapSpeed(*ctx.view, move, ctx.defaults)) {
    e.speed = BlendSameChange(ctx, lever, move, *overlap);
  } else if (std::optional<double> tp = TpOverlapSpeed(*ctx.view, move, ctx.defaults)) {
    e.speed = BlendSameChange(ctx, lever, move, *tp);
  } else if (std::optional<double> etp = ExpertTpSpeed(*ctx.view, move, ctx.defaults)) {
    e.speed = BlendSameChange(ctx, lever, move, *etp);
  } else if (std::optional<double> ep_overlap = EpOverlapSpeed(*ctx.view, move, ctx.defaults)) {
    e.speed = BlendSameChange(ctx, lever, move, *ep_overlap);
  } else if (std::optional<double> amortized = AmortizedSpeed(ctx, lever, move)) {
    e.speed = BlendSameChange(ctx, lever, move, *amortized);
    e.speed_measured = true;
  } else {
    e.speed_modelled = false;
    double base_speed =
        BlendMeasured(ctx, lever, shape.direction, SpeedPrior(ctx, lever, shape.direction)) *
        shape.strength;
    e.speed = base_speed > 0 ? base_speed * (1 + 0.35 * (shape.steps - 1)) : base_speed * shape.steps;
  }
  const double relief = ImbalanceRelief(ctx.view->leader, move);
  if (relief > 0 && relief > e.speed) {
    e.speed = relief;
    e.speed_modelled = true;
  }
  e.speed += ShapeCorrection(ctx, move);
  // A reverse move undoes the forward factor: if doubling TP keeps 65% of the memory, halving it
  // needs 1/0.65 = 154%, not 135%.
  double forward_memory =
      std::max(-0.9, BlendMeasuredMemory(ctx, lever, lever.expected_memory) * shape.strength);
  double base_memory =
      shape.direction > 0 ? forward_memory : 1 / (1 + forward_memory) - 1;
  // Memory a larger setting uses grows with the value (activations scale with micro-batch);
  // savings compound.
  e.memory = base_memory > 0 ? base_memory * (std::exp2(shape.steps) - 1)
                             : std::pow(std::max(0.05, 1 + base_memory), shape.steps) - 1;
  // Parallel sizes that shard only parameter state: the model's shape says what they change.
  const CampaignView& view = *ctx.view;
  if (view.leader_measurement && view.leader_measurement->peak_memory_gib) {
    std::optional<double> modelled = ParallelMemoryChange(
        view.leader, move.changes, ctx.defaults, *view.leader_measurement->peak_memory_gib);
    // Recomputation and micro-batch moves: the activations they add or drop in this recipe.
    if (!modelled) {
      modelled = ActivationMemoryChange(view.leader, move.changes, ctx.defaults,
                                        *view.leader_measurement->peak_memory_gib);
    }
    if (modelled) {
      e.memory = std::max(-0.9, *modelled);
      e.memory_modelled = true;
    }
  }
  e.addresses = Addresses(lever, shape.direction, e.speed, e.memory);
  AddReliefs(move, ctx.defaults, &e.addresses);
  double best = 0;
  for (const std::string& kind : e.addresses) {
    double s = SeverityOf(ctx.diagnoses, kind);
    if (s > best) {
      best = s;
      e.matched = kind;
    }
  }
  // A speed read from this campaign's own measurement of the lever needs no diagnosis to say
  // that it applies to this recipe.
  e.relevance = e.speed_measured ? 1.0 : std::min(1.5, 0.5 + best);
  e.history = HistoryFactor(ctx, lever, shape.direction);
  CheckMemory(ctx, &e);
  e.gain = e.speed * e.relevance * e.history * e.risk;
  // Priors and diagnoses say nothing the measurement of a sibling move does not say better:
  // recompute full -> selective is not expected to beat full -> none measured from the same recipe.
  std::string by;
  if (std::optional<double> bound = SiblingBound(ctx, lever, move, shape.direction, &by);
      bound && e.gain > *bound) {
    e.gain = *bound;
    e.capped_by = by;
  }
  return e;
}

}  // namespace attune::agents
