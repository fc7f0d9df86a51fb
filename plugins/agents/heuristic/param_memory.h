// Copyright attune authors.
//
// What a parallel-size move does to the memory of a Megatron recipe's parameter state, computed
// from the model's shape instead of the lever's catalog prior.
//
// A catalog prior ("EP doubling saves 30%") is one number for every recipe, but the share of
// memory a parallel size shards is not: at EP 64 each halving adds the weights of a few experts,
// at EP 2 it doubles most of the model. Pipeline, expert and expert-tensor parallelism shard only
// parameters, their gradients and optimizer state (the activations in flight per GPU stay about
// the same under 1F1B), so for them the change is the difference of two parameter-state
// estimates, which this computes per GPU from the recipe's flags:
//   dense  (L/PP) × (attention + dense or shared-expert MLP + router) / TP, over DP = world/(TP·PP)
//   expert (L/PP) × E/EP × (2|3)·h·f_moe / ETP,                       over world/(ETP·EP·PP)
//   bytes per parameter: 2 (BF16 weights) + 4 (FP32 gradients; 2 with --grad-reduce-in-bf16)
//   + 12 (Adam state and master weights), the last divided by the data-parallel size under
//   --use-distributed-optimizer. That is why a smaller parallel size costs less than its prior
//   says: the ranks it frees join data parallelism and shard the optimizer state further.
// Embeddings are left out: no move here changes them. Recipes without the model's shape (other
// stacks, missing flags) get std::nullopt and the catalog prior stands.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_PARAM_MEMORY_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_PARAM_MEMORY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attune/recipe.h"

namespace attune::agents {

// One decoder layer's weights by part, unsharded, from the recipe's flags (the header's
// formulas): attention h·(2q + 2kv) with q = heads·d and kv = groups·d for a head dim d
// (--kv-channels, else h/heads: 2h² + 2h²·groups/heads), or multi-latent attention's down- and
// up-projections and output, the dense MLP (2|3)·h·ffn, a MoE layer's dense part
// (shared expert and router) and one routed expert, and the share of layers that are MoE (every
// layer unless --moe-layer-freq is a plain N). std::nullopt without --num-layers and --hidden-size.
struct LayerWeights {
  double layers = 0, hidden = 0;
  // The shape they come from (absent flags as Megatron's defaults): attention heads and KV groups,
  // the MLP widths, and whether the MLP is gated (SwiGLU).
  double heads = 1, groups = 1, ffn = 0, expert_ffn = 0, shared_ffn = 0;
  bool gated = false;
  // What attention keeps per token for the backward, unsharded: the queries (and the core
  // attention's output, as wide) and the keys (and the values, as wide). heads·d and groups·d; with
  // multi-latent attention heads·(qk + rope + v)/2 each (the simulator's reading), plus the
  // latents the up-projections read.
  double query_width = 0, kv_width = 0, latent_width = 0;
  double attention = 0, dense_mlp = 0;
  double moe_dense = 0, expert = 0, experts = 0, topk = 0, moe_share = 0;
  // The weights a token passes through in an average layer: a MoE layer's top-k routed experts,
  // not all of them.
  double ActivePerLayer() const {
    return attention + (1 - moe_share) * dense_mlp + moe_share * (moe_dense + topk * expert);
  }
};
std::optional<LayerWeights> ReadLayerWeights(const Recipe& recipe,
                                             const std::map<std::string, std::string>& defaults = {});

// The parameters one GPU of `recipe`'s busiest pipeline stage holds in its transformer layers
// (embeddings left out, as above), and the data-parallel groups that reduce their gradients and
// shard their optimizer state: dense parameters over world/(TP·PP) ranks TP apart (the data- and
// context-parallel ranks together, as Megatron reduces them), expert parameters over
// world/(ETP·EP·PP) ranks ETP·EP apart (Megatron's default rank order).
struct ParameterCounts {
  double dense = 0;
  double expert = 0;
  double dense_dp = 1;
  double dense_dp_stride = 1;
  double expert_dp = 1;
  double expert_dp_stride = 1;
  double grad_bytes = 4;  // FP32 gradients; 2 with --grad-reduce-in-bf16
  bool distributed_optimizer = false;
};
std::optional<ParameterCounts> CountParameters(const Recipe& recipe,
                                               const std::map<std::string, std::string>& defaults = {});

// Per-GPU bytes of the parameter state (weights, gradients, optimizer) of the transformer
// layers of `recipe`'s busiest pipeline stage; std::nullopt without --num-layers and
// --hidden-size. `defaults`: what absent keys mean (Move::defaults), e.g. ETP absent = TP.
std::optional<double> ParameterStateBytes(const Recipe& recipe,
                                          const std::map<std::string, std::string>& defaults = {});

// The change of the peak, relative to `peak_gib`, when `changes` move only pipeline, expert or
// expert-tensor parallel sizes (and the virtual-pipeline, uneven-split and layout keys that follow
// PP), or only the context-parallel size (which scales the activations: the peak less the
// parameter state); std::nullopt for any other move or when the shape is unknown.
std::optional<double> ParallelMemoryChange(const Recipe& recipe, const std::vector<Change>& changes,
                                           const std::map<std::string, std::string>& defaults,
                                           double peak_gib);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_PARAM_MEMORY_H_
