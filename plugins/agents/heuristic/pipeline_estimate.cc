// Copyright attune authors.
#include "pipeline_estimate.h"

#include <algorithm>
#include <cmath>

#include "comm_estimate.h"
#include "param_memory.h"
#include "reading.h"

namespace attune::agents {

namespace {

// Whether the recipe places its layers itself, so that the last stage's output layer is not on
// top of an even share of decoder layers.
bool PlacesLayers(const Recipe& recipe) {
  for (const char* placed : {"--decoder-last-pipeline-num-layers", "--pipeline-model-parallel-layout",
                             "--account-for-loss-in-pipeline-split"}) {
    if (GetValue(recipe, placed)) return true;
  }
  return false;
}

}  // namespace

double OutputLayerInLayers(const Recipe& recipe, const std::map<std::string, std::string>& defaults) {
  if (PlacesLayers(recipe)) return 0;
  std::optional<LayerWeights> w = ReadLayerWeights(recipe, defaults);
  std::optional<double> vocab = VocabSize(recipe, defaults);
  if (!w || !vocab) return 0;
  const double seq = PositiveFlag(recipe, defaults, "--seq-length").value_or(0);
  return w->hidden * *vocab / (w->ActivePerLayer() + seq * w->hidden);
}

double MoeOutputLayerInLayers(const Recipe& recipe, const std::map<std::string, std::string>& defaults,
                              const ClusterInfo& cluster, double tokens_per_s_per_gpu) {
  const double flops_ratio = OutputLayerInLayers(recipe, defaults);
  std::optional<LayerWeights> w = ReadLayerWeights(recipe, defaults);
  std::optional<double> vocab = VocabSize(recipe, defaults);
  std::optional<double> peak = AssumedBf16Peak(cluster);
  if (flops_ratio <= 0 || !w || w->experts <= 0 || !vocab || !peak || tokens_per_s_per_gpu <= 0) {
    return flops_ratio;
  }
  const double share = tokens_per_s_per_gpu * 6 * w->hidden * *vocab / (kOutputLayerEfficiency * *peak);
  if (share >= 0.5) return flops_ratio;  // the rate does not fit the assumption; keep the FLOPs
  return std::min(flops_ratio, share / (1 - share) * w->layers);
}

std::optional<double> PipelineSpeed(const ScoringContext& ctx, const Move& move) {
  if (std::none_of(move.changes.begin(), move.changes.end(),
                   [](const Change& c) { return c.key == "--pipeline-model-parallel-size"; })) {
    return std::nullopt;
  }
  const CampaignView& view = *ctx.view;
  const Recipe& leader = view.leader;
  std::optional<Recipe> after_recipe = Apply(leader, move.changes);
  if (!after_recipe) return std::nullopt;
  RecipeShape before = ReadShape(leader);
  RecipeShape after = ReadShape(*after_recipe);
  if (before.pp == after.pp || !before.MicroBatches() || !after.MicroBatches()) return std::nullopt;
  const double stages = std::log2(static_cast<double>(after.pp) / before.pp);
  const std::optional<double> layers = PositiveFlag(leader, move.defaults, "--num-layers");
  double last_before = 1, last_after = 1;  // (L + PP·e) / L of each recipe
  if (layers) {
    const double rate = view.leader_measurement ? view.leader_measurement->tokens_per_s_per_gpu : 0;
    // The after recipe's rate is unknown; its output layer weighs what the leader's does, in
    // layers, unless it places its layers itself.
    const double e = MoeOutputLayerInLayers(leader, move.defaults, view.cluster, rate);
    const double e_after = PlacesLayers(*after_recipe) ? 0.0 : e;
    last_before = 1 + before.pp * e / *layers;
    last_after = 1 + after.pp * e_after / *layers;
  }
  const double compute = (last_after * (1 + after.Bubble())) / (last_before * (1 + before.Bubble())) *
                         (1 + kStageBoundaryCost * stages);
  const double step = view.leader_measurement ? view.leader_measurement->step_time_s : 0;
  std::optional<double> dp_before = ExposedDataParallelSeconds(leader, view.cluster, move.defaults);
  std::optional<double> dp_after = ExposedDataParallelSeconds(*after_recipe, view.cluster, move.defaults);
  if (step <= 0 || !dp_before || !dp_after) return 1 / compute - 1;
  // At most half the step is communication: the estimate assumes the datasheet's links, and both
  // recipes' estimates are scaled alike when the leader's would exceed that.
  const double scale = *dp_before > 0.5 * step ? 0.5 * step / *dp_before : 1.0;
  const double d_before = *dp_before * scale, d_after = *dp_after * scale;
  return step / ((step - d_before) * compute + d_after) - 1;
}

}  // namespace attune::agents
