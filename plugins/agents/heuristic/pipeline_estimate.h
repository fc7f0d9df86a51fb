// Copyright attune authors.
//
// What a pipeline-parallel move does to a Megatron recipe's step, computed from both recipes
// instead of the lever's one catalog prior (-8% a doubling).
//
// The compute of a step goes as (L + PP·e)(1 + b): the last stage's L/PP decoder layers plus the
// output layer's e (OutputLayerInLayers) set the time of each micro-batch, and the bubble
// b = (PP-1)/(M·VPP) idles the pipeline; kStageBoundaryCost per doubling of the stages covers the
// extra point-to-point transfers. The data-parallel communication left exposed
// (comm_estimate.h's ExposedDataParallelSeconds) follows the parameters each GPU holds, which PP
// divides. With the leader's measured step S, of which D_before is that communication, the move's
// step is (S - D_before) × compute ratio + D_after.
//
// The one prior cannot tell that, at a fixed global batch, halving PP doubles DP and halves the
// micro-batches each pipeline runs, which leaves the bubble where it was: GPT-3's PP 16 -> 8 on
// 1,024 GPUs was valued at +10% and measured no faster. A 256k vocabulary adds more than a layer
// to the last stage, so at PP 16 the last of six layers per stage runs a fifth longer than the
// rest; and on a recipe whose gradient reduce is not overlapped, more PP halves that reduce.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_PIPELINE_ESTIMATE_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_PIPELINE_ESTIMATE_H_

#include <map>
#include <optional>
#include <string>

#include "scoring.h"

namespace attune::agents {

inline constexpr double kStageBoundaryCost = 0.01;

// The output layer and loss that the last pipeline stage runs besides its decoder layers, in
// decoder layers' worth of work: the logits GEMM (h × V per token) against an average layer's
// active weights (LayerWeights::ActivePerLayer) and its attention core (about s·h per token,
// causal). 0 when the recipe places the layers itself (--decoder-last-pipeline-num-layers,
// --pipeline-model-parallel-layout, --account-for-loss-in-pipeline-split) or lacks the shape.
double OutputLayerInLayers(const Recipe& recipe, const std::map<std::string, std::string>& defaults);

// The same for a MoE recipe, from the leader's measured rate where that says less: a MoE layer's
// time is mostly not its FLOPs (small per-expert GEMMs, the router and permutation, the dispatch
// and its host sync), so its active weights undercount it. The output layer (its logits GEMM and
// loss) is taken to run at kOutputLayerEfficiency of the GPU's BF16 peak; its share of the GPU
// time per token is then tokens/s/GPU × 6hV / that rate, and the rest is the L decoder layers'.
// The smaller of this and OutputLayerInLayers; OutputLayerInLayers for a dense recipe, or without
// a measured rate or a known GPU.
inline constexpr double kOutputLayerEfficiency = 0.6;
double MoeOutputLayerInLayers(const Recipe& recipe, const std::map<std::string, std::string>& defaults,
                              const ClusterInfo& cluster, double tokens_per_s_per_gpu);

// The relative speed change of a move that changes --pipeline-model-parallel-size (see the
// header); std::nullopt for any other move or when the batch does not say how many micro-batches
// each pipeline runs. Without the leader's step time, or the shape or fabric for the
// communication, the compute ratio alone.
std::optional<double> PipelineSpeed(const ScoringContext& ctx, const Move& move);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_PIPELINE_ESTIMATE_H_
