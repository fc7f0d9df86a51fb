// Copyright attune authors.
//
// TrainingSetup: what the simulator needs to know about a Megatron-LM run, read from the recipe's
// arguments (Megatron's flag spellings, reference §1) or from a calibration row.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_SETUP_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_SETUP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attune/recipe.h"
#include "attune/status.h"

namespace attune::sim {

enum class Recompute { kNone, kSelective, kFull };
enum class RecomputeMethod { kUniform, kBlock };
enum class Dispatcher { kAllgather, kAlltoall, kFlex };
// Transformer Engine's FP8 scaling recipes (--fp8-recipe; Megatron's default is delayed).
enum class Fp8Recipe { kDelayed, kTensorwise, kBlockwise, kMxfp8 };

// The network and its size.
struct ModelShape {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t ffn_hidden = 0;      // dense MLP width
  int64_t heads = 0;
  int64_t query_groups = 0;    // = heads without GQA
  int64_t kv_channels = 0;     // head dim
  int64_t vocab = 0;           // padded
  int64_t vocab_unpadded = 0;
  int64_t seq_length = 0;
  bool swiglu = false;
  bool untied_embeddings = false;
  bool learned_positions = false;
  // MoE (experts == 0 for dense models).
  int64_t experts = 0;
  int64_t topk = 2;
  int64_t moe_ffn_hidden = 0;
  int64_t shared_expert_hidden = 0;
  int64_t moe_layer_freq = 1;  // every Nth layer is MoE
  double moe_aux_loss_coeff = 0;
  // --- Issue 24: a list --moe-layer-freq such as "([0]*3+[1]*58)" (DeepSeek's leading dense
  // layers); read by ReadPrecisionAndMoe. The number of MoE layers it names, -1 when not a list.
  int64_t moe_layers_from_pattern = -1;
  // --- Issue 24: multi-latent attention (--multi-latent-attention, DeepSeek-V2/V3), read by
  // ReadPrecisionAndMoe. Ranks of the low-rank Q and KV projections (q 0: no Q compression) and
  // the head dims: query/key = qk + qk_pos_emb (RoPE part), value = v.
  bool mla = false;
  int64_t q_lora_rank = 0, kv_lora_rank = 512, qk_head_dim = 128, qk_pos_emb_head_dim = 64;
  int64_t v_head_dim = 128;

  int64_t MoeLayers() const;
  int64_t DenseLayers() const { return layers - MoeLayers(); }
};

// Parallel layout and batch.
struct Parallelism {
  int tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1, dp = 1;
  int64_t micro_batch = 1;
  int64_t global_batch = 1;
  int64_t layers_per_virtual_stage = 0;  // --num-layers-per-virtual-pipeline-stage, 0 if absent
  int world = 1;

  int64_t MicroBatches() const { return global_batch / (micro_batch * dp); }
};

// Speed and memory switches.
struct Features {
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;
  bool overlap_p2p = true;          // interleaved-schedule p2p overlap (default on with VPP)
  bool fp8 = false;
  bool fp8_param_gather = false;    // parameters kept in FP8 (--fp8-param-gather)
  bool fp16 = false;
  bool grad_reduce_in_bf16 = false;
  bool cuda_graphs = false;
  bool flash_attention = true;      // TE fused/flash attention (false: unfused softmax)
  bool grouped_gemm = false;
  bool overlap_moe_comm = false;
  bool cross_entropy_fusion = false;
  bool attention_dropout = true;    // --attention-dropout > 0
  Dispatcher dispatcher = Dispatcher::kAllgather;
  Recompute recompute = Recompute::kNone;
  RecomputeMethod recompute_method = RecomputeMethod::kUniform;
  int recompute_layers = 0;         // --recompute-num-layers
  int cuda_graph_warmup_steps = 3;

  // --- Low precision and MoE details (issue 24; read by ReadPrecisionAndMoe in setup.cc) ---
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;  // --fp8-recipe (meaningful when fp8)
  bool fp4 = false;                 // --fp4-format e2m1 (TE's NVFP4BlockScaling, --fp4-recipe nvfp4)
  bool fp4_param_gather = false;    // --fp4-param-gather
  int bf16_layers_at_start = 0;     // --first-last-layers-bf16 with --num-layers-at-start-in-bf16
  int bf16_layers_at_end = 0;       //   and --num-layers-at-end-in-bf16 (Megatron default 1 each)
  bool add_bias_linear = true;      // false with --disable-bias-linear
  bool moe_shared_expert_overlap = false;  // --moe-shared-expert-overlap
  double moe_capacity_factor = 0;   // --moe-expert-capacity-factor (0: no token dropping)
  bool moe_permute_fusion = false;  // --moe-permute-fusion
  bool moe_force_balance = false;   // --moe-router-force-load-balancing (benchmarks)
  bool moe_pad_to_capacity = false; // --moe-pad-expert-input-to-capacity
  // --recompute-modules with selective granularity (Megatron's default: core_attn).
  bool recompute_core_attn = false, recompute_layernorm = false, recompute_moe_act = false;
  bool recompute_moe = false, recompute_mlp = false;
  // Any low-precision GEMM recipe.
  bool LowPrecision() const { return fp8 || fp4; }
};

// Logging and run length.
struct RunControl {
  int64_t train_iters = 0;
  int64_t exit_interval = 0;   // 0: none
  int64_t log_interval = 100;
  bool log_throughput = false;
  double distributed_timeout_min = 10;
  int64_t seed = 1234;
  double lr = 0;
  double min_lr = 0;
  int64_t lr_warmup_iters = 0;
  std::string lr_decay_style = "linear";
  int64_t IterationsToRun() const;
};

struct TrainingSetup {
  ModelShape model;
  Parallelism par;
  Features feat;
  RunControl run;
  // Flags as given (flag -> joined values, "" for a switch) and the environment.
  std::map<std::string, std::string> flags;
  std::map<std::string, std::string> env;
  // Problems found while reading that Megatron would report at start-up (first one wins).
  std::vector<std::string> read_errors;

  bool Has(const std::string& flag) const { return flags.count(flag) > 0; }
};

// Reads a Megatron recipe. `world` is the number of GPUs the job runs on. Never fails on
// Megatron-level problems (those are for ValidateSetup to report as Megatron would); fails only
// when the recipe is not a Megatron recipe at all (no --num-layers/--hidden-size...).
Result<TrainingSetup> SetupFromRecipe(const Recipe& recipe, int world);

// Padded vocabulary, as Megatron computes it: ceil(V / (divisible_by·TP))·(divisible_by·TP).
int64_t PaddedVocab(int64_t vocab, int64_t divisible_by, int tp);

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_SETUP_H_
