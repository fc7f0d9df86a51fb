// Copyright attune authors.
//
// Dry runs on the simulated cluster (docs/sim.md): the contract between a stack and the sim
// launcher.
//
//  - A stack maps its recipe to a ParallelPlan (Stack::SimulationPlan): the network's shape, the
//    parallel layout (TP/PP/VPP/CP/EP/ETP and data parallel or FSDP sharding), precision,
//    recompute, batch and the overlaps, the run's length and schedule, and a key of what defines
//    the training objective. A plan the stack's framework would refuse carries that refusal.
//  - The sim launcher models the plan on its cluster in virtual time (step time, memory, noise,
//    injected failures) and hands the outcome back as a SimulatedRun.
//  - The stack renders the SimulatedRun as the job's log in its own format
//    (Stack::RenderSimulatedLog), so its own log parser, measurement and triage read it as they
//    read a real job.
//
// So a new stack gets dry runs by writing its mapping and its renderer; the simulator does not
// change. Plain data; no behaviour beyond small derived values.
#ifndef ATTUNE_SIM_PLAN_H_
#define ATTUNE_SIM_PLAN_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attune::sim {

enum class Recompute { kNone, kSelective, kFull };
enum class RecomputeMethod { kUniform, kBlock };
enum class Dispatcher { kAllgather, kAlltoall, kFlex };
// Transformer Engine's FP8 scaling recipes (Megatron's --fp8-recipe; its default is delayed).
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
  // The number of MoE layers an explicit layer pattern names (DeepSeek's leading dense layers,
  // Megatron's list form of --moe-layer-freq); -1 when the pattern is "every Nth".
  int64_t moe_layers_from_pattern = -1;
  // Multi-latent attention (DeepSeek-V2/V3): ranks of the low-rank Q and KV projections (q 0: no Q
  // compression) and the head dims: query/key = qk + qk_pos_emb (the RoPE part), value = v.
  bool mla = false;
  int64_t q_lora_rank = 0, kv_lora_rank = 512, qk_head_dim = 128, qk_pos_emb_head_dim = 64;
  int64_t v_head_dim = 128;
  // Sliding-window attention (Mistral, Gemma, gpt-oss): in `windowed_layers` of the layers a query
  // attends to at most `attention_window` earlier tokens; the other layers attend to the whole
  // sequence. attention_window 0: full attention in every layer.
  int64_t attention_window = 0;
  int64_t windowed_layers = 0;
  // Multi-token prediction (DeepSeek-V3, Megatron's --mtp-num-layers): depths after the last
  // layer, each one more layer of the last layer's kind, a 2h→h projection and one more pass of
  // the output layer and loss.
  int64_t mtp_layers = 0;

  int64_t MoeLayers() const {
    if (experts <= 0) return 0;
    if (moe_layers_from_pattern >= 0) return std::min(layers, moe_layers_from_pattern);
    return (layers + moe_layer_freq - 1) / moe_layer_freq;
  }
  int64_t DenseLayers() const { return layers - MoeLayers(); }
  // Whether decoder layer `i` (0-based) is MoE: every moe_layer_freq-th from the first, or, for a
  // listed pattern, the last MoeLayers() of them (DeepSeek's leading dense layers; a list that
  // interleaves differently is counted right and placed approximately).
  bool IsMoeLayer(int64_t i) const {
    if (experts <= 0) return false;
    if (moe_layers_from_pattern >= 0) return i >= layers - MoeLayers();
    return i % std::max<int64_t>(1, moe_layer_freq) == 0;
  }
};

// What one pipeline rank holds, over all its virtual stages, when the recipe places the layers
// itself (Megatron's --pipeline-model-parallel-layout or --decoder-first/last-pipeline-num-layers).
struct PipelineRankLoad {
  int64_t layers = 0;      // decoder layers
  int64_t moe_layers = 0;  // of which MoE
  int64_t mtp_layers = 0;  // multi-token-prediction depths
  bool embedding = false;  // the input embedding
  bool loss = false;       // the output layer and the loss
};

// Parallel layout and batch. Fully sharded data parallelism (FSDP2, Megatron-FSDP) is `dp` with
// Features::fsdp set.
struct Parallelism {
  int tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1, dp = 1;
  int64_t micro_batch = 1;
  int64_t global_batch = 1;
  int64_t layers_per_virtual_stage = 0;  // --num-layers-per-virtual-pipeline-stage, 0 if absent
  int world = 1;
  // One entry per pipeline rank when the recipe places the layers itself; empty: layers/PP on
  // each rank, the embedding on the first, the output layer, loss and MTP depths on the last.
  std::vector<PipelineRankLoad> rank_loads;

  int64_t MicroBatches() const { return global_batch / (micro_batch * dp); }
};

// Speed and memory switches.
struct Features {
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  bool fsdp = false;                // parameters, gradients and optimizer state sharded over DP
  // Fully sharded data parallelism over the micro-batches of a step. Every micro-batch gathers
  // each layer's parameters for its forward and, when the layer is resharded after the forward
  // (FSDP2's and Megatron-FSDP's default), again for its backward. Its gradients are
  // reduce-scattered after every micro-batch's backward (Megatron-FSDP; FSDP2's default) unless
  // the sync is deferred to the last micro-batch (AutoModel's defer_fsdp_grad_sync, on by
  // default), which keeps the unsharded gradients, in the reduce precision, until then.
  bool fsdp_reshard_after_forward = true;
  bool fsdp_defer_grad_sync = false;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool tp_comm_overlap = false;
  bool overlap_p2p = true;          // interleaved-schedule p2p overlap (default on with VPP)
  bool fp8 = false;
  bool fp8_param_gather = false;    // parameters kept in FP8 (--fp8-param-gather)
  bool fp16 = false;
  bool grad_reduce_in_bf16 = false;
  bool cuda_graphs = false;
  bool flash_attention = true;      // fused/flash attention (false: unfused softmax)
  bool grouped_gemm = false;
  bool overlap_moe_comm = false;
  bool cross_entropy_fusion = false;
  // The output layer and the loss fused and computed in chunks (AutoModel's
  // FusedLinearCrossEntropy, a cut-cross-entropy kernel): the full logits are never held, and the
  // backward computes each chunk's logits again.
  bool fused_linear_loss = false;
  // Parameters, gradients and Adam's moments all kept in BF16, 8 bytes a parameter, with no FP32
  // master copy: PyTorch-native training of a model loaded in BF16 (AutoModel; FSDP2 keeps the
  // sharded parameters in their loaded dtype and computes in BF16). false: Megatron's mixed
  // precision (BF16 weights, FP32 gradients, FP32 master weights and moments: 18 bytes).
  bool bf16_training_state = false;
  // Parameter-efficient fine-tuning (LoRA and its kin): the base model's weights are frozen, so
  // they have no gradients, no optimizer state, no gradient reduction and no weight-gradient
  // GEMMs in the backward. The small adapters that do train are not modelled.
  bool frozen_base = false;
  bool attention_dropout = true;    // attention dropout > 0
  Dispatcher dispatcher = Dispatcher::kAllgather;
  Recompute recompute = Recompute::kNone;
  RecomputeMethod recompute_method = RecomputeMethod::kUniform;
  int recompute_layers = 0;         // layers per recompute group (Megatron's --recompute-num-layers)
  int cuda_graph_warmup_steps = 3;
  bool compiled = false;            // torch.compile of the model (fused elementwise, fewer launches)

  // Low precision.
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;  // meaningful when fp8
  bool fp4 = false;                 // NVFP4 GEMMs (Transformer Engine's NVFP4BlockScaling)
  bool fp4_param_gather = false;    // parameters gathered in FP4
  int bf16_layers_at_start = 0;     // layers kept in BF16 at the start and end of the network
  int bf16_layers_at_end = 0;
  // MoE.
  bool add_bias_linear = true;
  bool moe_shared_expert_overlap = false;
  double moe_capacity_factor = 0;   // 0: no token dropping
  bool moe_permute_fusion = false;
  bool moe_force_balance = false;   // forced balanced routing (benchmarks)
  bool moe_pad_to_capacity = false;
  // Selective recompute by module (Megatron's --recompute-modules; its default is core_attn).
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

  // train_iters (100 when unset), cut at exit_interval.
  int64_t IterationsToRun() const {
    int64_t n = train_iters > 0 ? train_iters : 100;
    if (exit_interval > 0) n = std::min(n, exit_interval);
    return std::max<int64_t>(1, n);
  }
};

// Where a framework refuses a recipe.
enum class RaisedAt {
  kArgparse,       // the argument parser refused a value (usage + "error:", exit 2)
  kStartup,        // argument validation or initialisation, before training starts
  kFirstIteration  // inside the first step (a schedule or a tensor split)
};

// A refusal the stack's framework would raise, with the Python exception it raises.
struct PlanRefusal {
  std::string exception;  // "AssertionError", "ValueError", "RuntimeError", "SystemExit"
  std::string message;
  std::string file;       // "megatron/training/arguments.py"
  std::string function;   // "validate_args"
  RaisedAt raised_at = RaisedAt::kStartup;
};

// Generation before training, as RL post-training runs it (slime: SGLang engines generate the
// rollout, Megatron trains on it, the new weights go back to the engines). One iteration of such a
// plan is one rollout: generate, train `train_steps` optimizer steps on what was generated, update
// the engines' weights. `prompts` 0: no generation phase (pre-training, fine-tuning).
struct RolloutPlan {
  int64_t prompts = 0;              // prompts per rollout
  int64_t samples_per_prompt = 1;
  int64_t prompt_tokens = 0;        // mean prompt length
  int64_t response_tokens = 0;      // mean generated length
  int64_t max_response_tokens = 0;  // the cap; the longest response bounds the phase
  int gpus = 0;                     // GPUs serving generation (the training GPUs when colocated)
  int gpus_per_engine = 1;          // one engine's tensor-parallel size
  double mem_fraction = 0.9;        // share of GPU memory an engine takes for weights + KV cache
  int64_t max_concurrency = 0;      // requests in flight per engine (0: as many as the KV cache holds)
  bool colocated = false;           // generation and training take turns on the same GPUs
  bool overlapped = false;          // the next rollout generates while this one trains (async)
  int64_t train_steps = 1;          // optimizer steps per rollout
  // Forward-only passes over the rollout's samples before its optimizer steps, each as long as
  // the steps' forwards: the reference model's log-probabilities (a KL term) and the old
  // policy's (unless the rollout engine's are used or the loss can reuse its own).
  bool reference_logprobs = false;
  bool actor_logprobs = false;
  double update_buffer_bytes = 512.0 * 1024 * 1024;  // the weight update's bucket (slime's default)

  bool enabled() const { return prompts > 0; }
  int LogProbPasses() const { return (reference_logprobs ? 1 : 0) + (actor_logprobs ? 1 : 0); }
  int64_t Samples() const { return prompts * samples_per_prompt; }
};

struct ParallelPlan {
  ModelShape model;
  Parallelism par;
  Features feat;
  RunControl run;
  RolloutPlan rollout;
  // A canonical string of everything that defines the training objective (seed, data, batch,
  // schedule, model, precision recipe; never a parallel size or a speed switch). The simulated
  // loss curve is a function of it, so a throughput lever leaves the losses bit-identical and
  // an objective change moves them, as on real hardware.
  std::string objective_key;
  std::optional<PlanRefusal> refusal;  // set: the job fails where the framework would
};

// Device memory of one pipeline stage on one GPU, in bytes.
struct SimStageMemory {
  int stage = 0;
  double weight_optimizer_b = 0;  // parameters, gradients, optimizer state
  double activation_b = 0;        // activations kept for backward at the peak
  double max_allocated_b = 0;
  double max_reserved_b = 0;
};

// What the model says about memory, and the facts of an out-of-memory failure.
struct SimMemory {
  std::vector<SimStageMemory> stages;  // one per pipeline stage
  SimStageMemory worst;                // the stage with the highest peak
  double capacity_b = 0;               // what the driver reports as the GPU's total
  bool fits = true;
  // When it does not fit: the failing allocation and the device's state at that moment.
  double tried_to_allocate_b = 0;
  double in_use_b = 0;                 // including non-PyTorch memory
  double allocated_b = 0;              // by PyTorch
  double reserved_unallocated_b = 0;
  double free_b = 0;
};

struct SimIteration {
  double seconds = 0;          // wall time of this iteration
  double loss = 0;
  double aux_loss = 0;         // MoE load-balancing loss (0 when not logged)
  double grad_norm = 0;
  double learning_rate = 0;
  // Plans with a rollout phase: seconds = rollout_s (0 when overlapped and hidden) + log_probs_s
  // + train_s + weight_update_s.
  double rollout_s = 0;        // generation, as the trainer waits for it
  double train_s = 0;          // the optimizer steps of this rollout
  double log_probs_s = 0;      // the log-probability passes before them (RolloutPlan)
  double weight_update_s = 0;  // new weights to the engines (and the memory hand-over if colocated)
};

// The generation phase of a plan with a rollout: one engine's view.
struct SimRollout {
  int engines = 0;
  double weights_per_gpu_b = 0;      // an engine's weights on one of its GPUs
  double kv_cache_tokens = 0;        // tokens its KV cache holds
  int64_t concurrency = 0;           // requests in flight
  double decode_tokens_per_s = 0;    // generated tokens per second, all requests together
  bool fits = true;                  // the weights fit in the engine's memory share
  double generated_tokens = 0;       // per rollout, all engines
};

enum class SimEnd {
  kFinished,       // ran its iterations; training done
  kExitInterval,   // stopped at the exit interval
  kRefused,        // plan.refusal
  kOutOfMemory,
  kNcclTimeout,    // a collective timed out after the last iteration listed
  kHang,           // the log stops; the job reaches its time limit
  kNodeFailure,
  kTimeLimit,      // the time limit cut the run
};

// A simulated job from start to end. Virtual seconds; virtual 0 is 2026-01-01 00:00:00 UTC.
struct SimulatedRun {
  ParallelPlan plan;
  std::string gpu;             // "H100"
  double gpu_memory_gib = 0;
  int nodes = 1;
  int gpus_per_node = 8;
  double start_s = 0;          // the job starts
  double startup_s = 0;        // start to the first iteration (or to a start-up refusal)
  std::vector<SimIteration> iterations;  // iterations 1..N that ran
  double model_flops_per_iteration = 0;  // the stack's own FLOP convention is its business
  // Parameters per GPU, for the start-up report.
  double params_first_stage_per_gpu = 0;
  double params_last_stage_per_gpu = 0;
  double params_expert_per_gpu = 0;
  SimMemory memory;
  SimRollout rollout;          // plan.rollout.enabled() only
  SimEnd end = SimEnd::kFinished;
  double failure_s = 0;        // when the failure text appears (kRefused, kOutOfMemory,
                               // kNcclTimeout, kNodeFailure)
  double end_s = 0;            // the job ends
};

// "2026-01-01 00:01:30.000000": the wall clock of a virtual second, for simulated log lines.
std::string VirtualTimestamp(double virtual_s);

}  // namespace attune::sim

#endif  // ATTUNE_SIM_PLAN_H_
