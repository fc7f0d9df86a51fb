// Copyright attune authors.
//
// RecipeView: the sizes of a Megatron recipe with Megatron's defaults filled in (TP=1, ETP=TP,
// ffn=4h, ...), read once so that validation, the gate, moves and diagnosis agree on them.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_RECIPE_VIEW_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_RECIPE_VIEW_H_

#include <optional>
#include <string>
#include <vector>

#include "attune/recipe.h"

namespace attune::megatron {

struct RecipeView {
  long world = 1, nodes = 1, gpus_per_node = 1;
  // The GPUs one NVLink fabric joins: a GB200 or GB300 system is an NVL72 rack (72 GPUs over
  // NVLink switches, 4 to a compute tray; at most the job's), any other system its node.
  long nvlink_gpus = 1;
  long tp = 1, pp = 1, cp = 1, ep = 1, etp = 1, dp = 1;
  long vpp = 1;                          // virtual stages per PP rank (1 = not interleaved)
  std::optional<long> vpp_layers;        // --num-layers-per-virtual-pipeline-stage
  std::optional<long> vpp_stages;        // --num-virtual-stages-per-pipeline-rank
  std::optional<long> mbs, gbs;          // as given
  long micro_batches = 0;                // M = GBS / (MBS * DP), 0 when unknown
  std::optional<long> seq;
  std::optional<long> layers, heads, hidden, ffn, query_groups, experts, moe_ffn;
  // The units Megatron splits over pipeline stages: the layers, and the embedding and the loss
  // where --account-for-embedding/loss-in-pipeline-split count them as one layer each.
  std::optional<long> split_units;
  bool sp = false;                       // --sequence-parallel as Megatron runs it: off at TP 1
  bool dist_opt = false, overlap_grad = false, overlap_param = false;
  bool tp_comm_overlap = false, cuda_graphs = false, fsdp = false;
  std::string recompute_granularity;     // "", "selective", "full"
};

// Reads the recipe. Malformed integers read as absent (Validate reports them).
RecipeView ReadView(const Recipe& recipe);

// The decoder layers a pipeline rank holds, one entry per distinct count, as Megatron splits them:
// {per rank} for an even split, where --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split count one layer each, and the given first, the middle and the
// given last count for an uneven one. std::nullopt when the layers are unknown, the split does not
// divide, or a --pipeline-model-parallel-layout places them.
std::optional<std::vector<long>> PipelineRankLayers(const Recipe& recipe, const RecipeView& view);

// A number as Python's int() and float() read it, which allow an underscore between two digits
// (1_000): the text without them, or std::nullopt for an underscore elsewhere.
std::optional<std::string> WithoutDigitUnderscores(const std::string& text);

// Argument helpers (keys are "--flag").
bool Has(const Recipe& recipe, const std::string& flag);
std::optional<long> IntArg(const Recipe& recipe, const std::string& flag);
std::optional<std::string> StrArg(const Recipe& recipe, const std::string& flag);

// The padded vocabulary Megatron computes: ceil(V / (divisor * TP)) * divisor * TP, or the pinned
// --padded-vocab-size. std::nullopt when neither --padded-vocab-size nor --vocab-size is given.
std::optional<long> PaddedVocab(const Recipe& recipe);

// Megatron's default FFN size when --ffn-hidden-size is absent (4h, or the SwiGLU rule).
std::optional<long> DefaultFfn(const Recipe& recipe);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_RECIPE_VIEW_H_
