// Copyright attune authors.
//
// The activations a Megatron recipe keeps for the backward pass, from the model's shape and the
// recipe's flags, so that a recomputation or micro-batch move is judged by what it changes in
// this recipe rather than by one catalog prior: recomputing the 4 layers of a rank that keeps 80
// is not worth what recomputing all of them is.
//
// Per decoder layer, micro-batch and token (s/CP tokens of MBS sequences on a GPU), in BF16
// (2 bytes an element), after Korthikanti et al. 2022 (§4) with fused attention, which keeps no
// attention scores; T is TP under sequence parallelism and 1 otherwise:
//   attention  LayerNorm input h/T, its output (the QKV input) h/T, Q, K and V h·(1 + 2g/a)/TP
//              (g query groups of a heads), core-attention output h/TP
//   dense MLP  LayerNorm input h/T, its output (the fc1 input) h/T, fc1 output F·(2 gated, else
//              1)/TP, activation output F/TP
//   MoE MLP    LayerNorm input and output as above; the routed rows a rank holds, ETP/TP per
//              routed copy (top-k of them: its sequence-parallel share gathered over the ETP ranks
//              of its experts), each the permuted input h, fc1 output F_e·(2|1)/ETP and
//              activation F_e/ETP; shared experts as a dense MLP of their width
//   dropout    one byte per element of the two residual dropouts' masks when --hidden-dropout > 0
//              (Megatron's default is 0.1)
//   unfused attention (--attention-backend unfused or local) also keeps 5 bytes per score:
//              a/TP heads × s/CP × s keys.
// Full recomputation keeps only a recomputed layer's input (h/T): every layer under `uniform`
// (one input per --recompute-num-layers group), the first --recompute-num-layers layers of each
// (virtual) stage under `block`. Selective recomputation drops what its --recompute-modules name
// (default core_attn): core_attn the unfused scores, layernorm the LayerNorm outputs, mlp the
// dense MLP's fc1 output and activation, moe the routed experts' (moe_act their activation
// only), shared_experts the shared experts'.
//
// In flight on the first pipeline rank under 1F1B: min(PP, M) micro-batches of its L/PP layers
// (M micro-batches an iteration), or under an interleaved schedule Megatron's warm-up of
// (PP − 1)·2 + (VPP − 1)·PP model chunks plus one, each of L/(PP·VPP) layers, capped at M·VPP.
// The last rank keeps its warm-up, (VPP − 1)·PP chunks plus one (one micro-batch without
// interleaving), and the output layer's logits, V/TP per token in BF16 and again in FP32 for the
// loss (6 bytes). The busier of the two is the recipe's.
//
// Pure functions; std::nullopt where the recipe lacks --num-layers, --hidden-size or
// --seq-length (other stacks, RL recipes whose lengths vary).
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_ACTIVATION_MEMORY_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_ACTIVATION_MEMORY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attune/recipe.h"

namespace attune::agents {

// Bytes of activations the busiest of the first and last pipeline ranks keeps (see above).
std::optional<double> ActivationBytes(const Recipe& recipe,
                                      const std::map<std::string, std::string>& defaults = {});

// The change of the peak, relative to `peak_gib`, of a move that changes only recomputation
// (--recompute-granularity, --recompute-method, --recompute-num-layers, --recompute-activations,
// --recompute-modules) or the micro-batch size: the difference of the two recipes' activations.
// std::nullopt for any other move, or when the shape is unknown.
std::optional<double> ActivationMemoryChange(const Recipe& recipe, const std::vector<Change>& changes,
                                             const std::map<std::string, std::string>& defaults,
                                             double peak_gib);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_ACTIVATION_MEMORY_H_
