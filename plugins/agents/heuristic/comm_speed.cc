// Copyright attune authors.
#include "comm_speed.h"

#include <algorithm>
#include <functional>

#include "comm_estimate.h"
#include "history.h"
#include "reading.h"

namespace attune::agents {
namespace {

// The leader's measured step time, when known.
std::optional<double> LeaderStep(const CampaignView& view) {
  if (!view.leader_measurement || view.leader_measurement->step_time_s <= 0) return std::nullopt;
  return view.leader_measurement->step_time_s;
}

// True when one of `move`'s changes sets the switch `key` that was absent.
bool TurnsOn(const Move& move, const char* key) {
  return std::any_of(move.changes.begin(), move.changes.end(),
                     [&](const Change& c) { return c.key == key && !c.from && c.to; });
}

// The speed of turning on the overlap switch `key` (one of `move`'s changes): `hidden(step)` is the
// seconds of the leader's measured step it hides, or empty when the model's shape does not say.
// Empty for any other move, or without the leader's step time.
std::optional<double> HidingSwitchSpeed(
    const CampaignView& view, const Move& move, const char* key,
    const std::function<std::optional<double>(double)>& hidden) {
  if (!TurnsOn(move, key)) return std::nullopt;
  const std::optional<double> step = LeaderStep(view);
  if (!step) return std::nullopt;
  const std::optional<double> seconds = hidden(*step);
  if (!seconds) return std::nullopt;
  return *seconds / (*step - *seconds);
}

}  // namespace

// Turning on --overlap-grad-reduce hides the gradient reduce behind the backward of the last
// micro-batch of each stage (Megatron reduces the buckets as that backward fills them), so it
// saves the reduce's time up to that backward's, about 2/3 of the step over the micro-batches
// each stage runs, and kOverlapHidden of it. The reduce's time comes from the model's shape and
// the fabric assumed for the GPU type (comm_estimate.h): an 8B model's reduce over two nodes is
// about 1% of a 6 s step, and the catalog's one prior (+5%) ranked it above moves worth more.
// Empty for any other move, or without the leader's step time or the model's shape.
constexpr double kOverlapHidden = 0.9;

std::optional<double> GradReduceOverlapSpeed(const CampaignView& view, const Move& move,
                                             const std::map<std::string, std::string>& defaults) {
  if (move.changes.size() != 1 || move.changes.front().key != "--overlap-grad-reduce" ||
      move.changes.front().from || !move.changes.front().to) {
    return std::nullopt;
  }
  const std::optional<double> step = LeaderStep(view);
  if (!step) return std::nullopt;
  std::optional<double> reduce = GradReduceSeconds(view.leader, view.cluster, defaults);
  RecipeShape shape = ReadShape(view.leader);
  std::optional<int> m = shape.MicroBatches();
  if (!reduce || !m) return std::nullopt;
  const double last_backward = 2.0 / 3.0 * *step / (*m + shape.pp - 1);
  const double hidden = kOverlapHidden * std::min(*reduce, last_backward);
  return hidden / std::max(*step - hidden, 1e-9);
}

// Turning on --tp-comm-overlap splits each TP GEMM into chunks and runs the chunks' collectives
// (Transformer Engine's userbuffers) while the next chunk computes, hiding about kTpOverlapHidden
// of the TP collectives' time (the first and last chunk stay exposed, and the chunked GEMMs run a
// little slower). The collectives' time comes from the model's shape and the fabric assumed for
// the GPU type (comm_estimate.h): at TP 8 a 70B model's sequence of 8,192 tokens spends about a
// quarter of an H100 step in them, and the catalog's one prior (+6%) ranked the overlap behind
// moves worth less. Empty for any other move, or without the leader's step time or the shape.
constexpr double kTpOverlapHidden = 0.7;

std::optional<double> TpOverlapSpeed(const CampaignView& view, const Move& move,
                                     const std::map<std::string, std::string>& defaults) {
  auto hidden = [&](double step) -> std::optional<double> {
    std::optional<double> collectives = TpCollectiveSeconds(view.leader, view.cluster, defaults);
    if (!collectives) return std::nullopt;
    // At most half the step: the estimate assumes the datasheet's links, which a slower fabric or
    // a latency-bound small model do not reach.
    return std::min(kTpOverlapHidden * *collectives, 0.5 * step);
  };
  return HidingSwitchSpeed(view, move, "--tp-comm-overlap", hidden);
}

// The speed an expert tensor-parallel move is worth from the dispatch traffic it adds or removes
// (ExpertDispatchSeconds before and after): ETP 2 -> 1 drops the all-gather of every routed row
// over the ETP pair, ETP 1 -> 8 under the allgather dispatcher gathers 8 times the tokens. The
// catalog has one prior for every ETP move; this reads the recipe's dispatcher, top-k, shape and
// fabric.
std::optional<double> ExpertTpSpeed(const CampaignView& view, const Move& move,
                                    const std::map<std::string, std::string>& defaults) {
  const bool moves_etp = std::any_of(move.changes.begin(), move.changes.end(), [](const Change& c) {
    return c.key == "--expert-tensor-parallel-size";
  });
  if (!moves_etp) return std::nullopt;
  const std::optional<double> step = LeaderStep(view);
  if (!step) return std::nullopt;
  std::optional<Recipe> after_recipe = Apply(view.leader, move.changes);
  if (!after_recipe) return std::nullopt;
  std::optional<double> before = ExpertDispatchSeconds(view.leader, view.cluster, defaults);
  std::optional<double> after = ExpertDispatchSeconds(*after_recipe, view.cluster, defaults);
  if (!before || !after) return std::nullopt;
  // At most half the step either way, as for the TP overlap: the links are the datasheet's.
  const double saved = std::clamp(*before - *after, -0.5 * *step, 0.5 * *step);
  return saved / (*step - saved);
}

// Turning on --overlap-moe-expert-parallel-comm runs one micro-batch's expert-parallel dispatch
// and combine while another computes (Megatron's combined 1F1B schedule), hiding kEpOverlapHidden
// of the all-to-all (ExpertAllToAllSeconds) up to the compute it runs under, taken as half the
// step. The catalog's one prior (+5%) is a tenth of what it is worth where the all-to-all crosses
// the network at EP 8 and more. Empty for any other move, or without the leader's step time or
// the model's shape.
constexpr double kEpOverlapHidden = 0.7;

std::optional<double> EpOverlapSpeed(const CampaignView& view, const Move& move,
                                     const std::map<std::string, std::string>& defaults) {
  auto hidden = [&](double step) -> std::optional<double> {
    std::optional<double> a2a = ExpertAllToAllSeconds(view.leader, view.cluster, defaults);
    if (!a2a || *a2a <= 0) return std::nullopt;
    return kEpOverlapHidden * std::min(*a2a, 0.5 * step);
  };
  return HidingSwitchSpeed(view, move, "--overlap-moe-expert-parallel-comm", hidden);
}

}  // namespace attune::agents
