#include "sim_rules.h"

#include <functional>
#include <vector>

namespace attune::megatron {
namespace {

using sim::Dispatcher;
using sim::Features;
using sim::Fp8Recipe;
using sim::ModelShape;
using sim::Parallelism;
using sim::RaisedAt;
using sim::Recompute;
using sim::RecomputeMethod;
using ArgumentError = sim::PlanRefusal;

using Check = std::function<std::optional<ArgumentError>(const SimSetup&, const ClusterInfo&)>;

constexpr const char* kArgs = "megatron/training/arguments.py";
constexpr const char* kTc = "megatron/core/transformer/transformer_config.py";
constexpr const char* kPs = "megatron/core/parallel_state.py";

std::string S(int64_t v) { return std::to_string(v); }

ArgumentError Assert(const std::string& message, const char* file = kArgs,
                     const char* function = "validate_args") {
  return {"AssertionError", message, file, function, RaisedAt::kStartup};
}
ArgumentError ValueErr(const std::string& message, const char* file = kTc,
                       const char* function = "__post_init__") {
  return {"ValueError", message, file, function, RaisedAt::kStartup};
}

std::optional<ArgumentError> Argparse(const SimSetup& s, const ClusterInfo&) {
  if (s.read_errors.empty()) return std::nullopt;
  return ArgumentError{"SystemExit", s.read_errors.front(), "argparse.py", "error",
                       RaisedAt::kArgparse};
}

std::optional<ArgumentError> Removed(const SimSetup& s, const ClusterInfo&) {
  if (!s.Has("--checkpoint-activations")) return std::nullopt;
  return ArgumentError{"SystemExit",
                       "--checkpoint-activations is no longer valid, use --recompute-activations, "
                       "or, for more control, --recompute-granularity and --recompute-method.",
                       kArgs, "validate_args", RaisedAt::kStartup};
}

std::optional<ArgumentError> WorldSize(const SimSetup& s, const ClusterInfo&) {
  const Parallelism& p = s.par;
  int64_t model = int64_t{p.tp} * p.pp * p.cp;
  if (model > 0 && p.world % model == 0) return std::nullopt;
  return Assert("world size (" + S(p.world) + ") is not divisible by total_model_size (" +
                S(model) + ")");
}

std::optional<ArgumentError> MicroBatch(const SimSetup& s, const ClusterInfo&) {
  if (s.par.micro_batch > 0) return std::nullopt;
  return Assert("micro_batch_size must be set and greater than 0 (found " +
                S(s.par.micro_batch) + ")");
}

std::optional<ArgumentError> SeqLength(const SimSetup& s, const ClusterInfo&) {
  if (s.model.seq_length <= 0) return Assert("seq_length must be set (found none)");
  if (s.par.cp > 1 && s.model.seq_length % (2 * s.par.cp) != 0) {
    return Assert("seq-length should be a multiple of 2 * context-parallel-size if "
                  "context-parallel-size > 1.");
  }
  return std::nullopt;
}

std::optional<ArgumentError> PipelineLayers(const SimSetup& s, const ClusterInfo&) {
  const Parallelism& p = s.par;
  bool layout = s.Has("--pipeline-model-parallel-layout");
  bool uneven = s.Has("--decoder-first-pipeline-num-layers") || s.Has("--decoder-last-pipeline-num-layers") || layout;
  // The mapping places a layout's stages only when Megatron would accept it: a multiple of PP
  // stages holding exactly --num-layers decoder layers.
  if (layout && p.pp > 1 && p.rank_loads.empty()) {
    return Assert("the pipeline layout '" + s.flags.at("--pipeline-model-parallel-layout") +
                      "' must have a multiple of PP (" + S(p.pp) + ") stages holding num_layers (" +
                      S(s.model.layers) + ") decoder layers 't', written with E, t, m, L, '|', '*n' and '(...)*n'",
                  "megatron/core/transformer/pipeline_parallel_layer_layout.py", "validate_layer_layout");
  }
  int64_t split_units = s.model.layers + (s.Has("--account-for-embedding-in-pipeline-split") ? 1 : 0) +
                        (s.Has("--account-for-loss-in-pipeline-split") ? 1 : 0);
  if (p.pp > 1 && !uneven && split_units % p.pp != 0) {
    return Assert("Number of layers should be divisible by the pipeline-model-parallel size");
  }
  const bool per_stage_flag = s.Has("--num-layers-per-virtual-pipeline-stage");
  if (per_stage_flag || s.Has("--num-virtual-stages-per-pipeline-rank")) {
    if (per_stage_flag && (s.Has("--decoder-first-pipeline-num-layers") || s.Has("--decoder-last-pipeline-num-layers"))) {
      return Assert("please use --num-virtual-stages-per-pipeline-rank to specify virtual pipeline parallel "
                    "degree when enable uneven pipeline parallelism");
    }
    if (!uneven) {
      int64_t pp = std::max(1, p.pp);
      if (per_stage_flag && split_units % pp != 0) {
        return Assert("number of layers of the model must be divisible pipeline model parallel size");
      }
      int64_t per_rank = split_units / pp;
      int64_t per_vp = p.layers_per_virtual_stage;
      bool bad = per_vp > 0 ? per_rank % per_vp != 0 : per_rank % p.vpp != 0;
      if (bad) {
        return Assert("num_layers_per_pipeline_rank (" + S(per_rank) +
                      ") should be divisible by vp_size (" + S(per_vp > 0 ? per_vp : p.vpp) + ")",
                      "megatron/core/transformer/transformer_block.py", "get_num_layers_to_build");
      }
    }
  }
  // A virtual pipeline of one stage is none; an interleaved one needs the pipeline stages.
  int64_t vpp = p.vpp;
  if (layout && p.pp <= 1) {
    auto stages = UnrollPipelineLayout(s.flags.at("--pipeline-model-parallel-layout"));
    vpp = stages ? static_cast<int64_t>(stages->size()) : 1;
  }
  if (vpp > 1 && (p.pp <= 1 || (!s.feat.overlap_p2p && p.pp <= 2))) {
    return Assert("pipeline-model-parallel size should be greater than 1 with interleaved schedule",
                  kPs, "initialize_model_parallel");
  }
  return std::nullopt;
}

std::optional<ArgumentError> Batch(const SimSetup& s, const ClusterInfo&) {
  const Parallelism& p = s.par;
  if (p.global_batch % (p.micro_batch * p.dp) == 0 && p.global_batch > 0) return std::nullopt;
  return Assert("global batch size (" + S(p.global_batch) +
                    ") is not divisible by micro batch size (" + S(p.micro_batch) +
                    ") times data parallel size (" + S(p.dp) + ")",
                "megatron/core/num_microbatches_calculator.py", "__init__");
}

std::optional<ArgumentError> DeviceConnections(const SimSetup& s, const ClusterInfo& c) {
  if (c.compute_capability_major >= 10) return std::nullopt;
  if (s.par.tp <= 1 && s.par.cp <= 1) return std::nullopt;
  if (s.feat.overlap_moe_comm || s.Has("--use-megatron-fsdp") || s.Has("--use-torch-fsdp2")) {
    return std::nullopt;
  }
  auto it = s.env.find("CUDA_DEVICE_MAX_CONNECTIONS");
  if (it != s.env.end() && it->second == "1") return std::nullopt;
  return Assert("Using tensor model parallelism or context parallelism require setting the "
                "environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1");
}

std::optional<ArgumentError> Overlaps(const SimSetup& s, const ClusterInfo&) {
  const Features& f = s.feat;
  if (f.overlap_param_gather && !f.distributed_optimizer) {
    return Assert("--overlap-param-gather only supported with distributed optimizer");
  }
  if (f.overlap_param_gather && !f.overlap_grad_reduce) {
    return Assert("Must use --overlap-param-gather with --overlap-grad-reduce");
  }
  if (f.tp_comm_overlap && !f.sequence_parallel) {
    return Assert("Tensor parallel communication/GEMM overlap can happen only when sequence "
                  "parallelism is enabled");
  }
  return std::nullopt;
}

std::optional<ArgumentError> Recomputation(const SimSetup& s, const ClusterInfo&) {
  const Features& f = s.feat;
  if (f.recompute == Recompute::kSelective &&
      (s.Has("--recompute-method") || s.Has("--recompute-num-layers"))) {
    return Assert("recompute method is not yet supported for selective recomputing granularity");
  }
  if (f.recompute != Recompute::kFull) return std::nullopt;
  if (!s.Has("--recompute-method")) {
    return ValueErr("Using recompute_granularity: full but recompute_method is None. "
                    "recompute_method must be \"block\" or \"uniform\"");
  }
  // Megatron refuses a missing count and caps one above a stage's layers.
  if (f.recompute_layers < 1) {
    int64_t per_rank = s.model.layers / std::max(1, s.par.pp);
    return ValueErr("num_layers_per_pipeline_rank: " + S(per_rank) +
                    " recompute_num_layers: " + S(f.recompute_layers) +
                    ". recompute_num_layers must be between 1 and num_layers_per_pipeline_rank");
  }
  return std::nullopt;
}

std::optional<ArgumentError> TensorSplits(const SimSetup& s, const ClusterInfo&) {
  const ModelShape& m = s.model;
  int tp = s.par.tp;
  if (m.heads % tp != 0) {
    return ValueErr("num_attention_heads (" + S(m.heads) +
                    ") must be a multiple of tensor_model_parallel_size (" + S(tp) + ").");
  }
  if (m.query_groups % tp != 0 && tp % m.query_groups != 0) {
    return ValueErr("num_query_groups (" + S(m.query_groups) +
                    ") must be a multiple of tensor_model_parallel_size (" + S(tp) + ").");
  }
  int64_t fc1 = m.swiglu ? 2 * m.ffn_hidden : m.ffn_hidden;
  if (fc1 % tp != 0) {
    return Assert(S(fc1) + " is not divisible by " + S(tp), "megatron/core/utils.py",
                  "ensure_divisibility");
  }
  return std::nullopt;
}

std::optional<ArgumentError> Experts(const SimSetup& s, const ClusterInfo&) {
  const Parallelism& p = s.par;
  if (p.ep > 1 && s.model.experts <= 0) {
    return ValueErr("num_moe_experts must be non None to use expert-parallel.");
  }
  if (s.model.experts <= 0) return std::nullopt;
  if (s.model.experts % p.ep != 0) {
    return Assert("Number of experts should be a multiple of expert model parallel_size.");
  }
  if (p.etp > 1 && !s.Has("--disable-bias-linear")) {
    return Assert("Bias in Moe is only supported when ETP==1");
  }
  int64_t grid = int64_t{p.etp} * p.ep * p.pp;
  if (p.world % grid != 0) {
    return ArgumentError{"RuntimeError",
                         "world_size (" + S(p.world) +
                             ") is not divisible by expert_tensor_model_pipeline_parallel size (" +
                             S(grid) + ")",
                         kPs, "initialize_model_parallel", RaisedAt::kStartup};
  }
  if (s.feat.overlap_moe_comm && (p.ep <= 1 || s.feat.dispatcher == Dispatcher::kAllgather ||
                                  s.feat.recompute == Recompute::kFull)) {
    return ValueErr("overlap_moe_expert_parallel_comm requires expert_model_parallel_size > 1, "
                    "the alltoall or flex token dispatcher and no full recompute");
  }
  return std::nullopt;
}

std::optional<ArgumentError> Fp8Support(const SimSetup& s, const ClusterInfo& c) {
  // MXFP8 and NVFP4 need Blackwell's block-scaled tensor cores (Transformer Engine's
  // _compute_mxfp8_support / _compute_nvfp4_support).
  bool blackwell = c.compute_capability_major >= 10;
  if (s.feat.fp8 && s.feat.fp8_recipe == Fp8Recipe::kMxfp8 && !blackwell) {
    return ArgumentError{"RuntimeError",
                         "Device compute capability 10.0 or higher required for MXFP8 execution.",
                         "transformer_engine/pytorch/quantization.py", "check_recipe_support",
                         RaisedAt::kStartup};
  }
  if (s.feat.fp4 && !blackwell) {
    return ArgumentError{"RuntimeError",
                         "Device compute capability 10.0 or higher required for NVFP4 execution.",
                         "transformer_engine/pytorch/quantization.py", "check_nvfp4_support",
                         RaisedAt::kStartup};
  }
  if (!s.feat.fp8 || c.compute_capability_major >= 9) return std::nullopt;
  return ArgumentError{"AssertionError",
                       "Device compute capability 8.9 or higher required for FP8 execution.",
                       "transformer_engine/pytorch/fp8.py", "check_fp8_support",
                       RaisedAt::kStartup};
}

std::optional<ArgumentError> InterleavedGroups(const SimSetup& s, const ClusterInfo&) {
  const Parallelism& p = s.par;
  if (p.vpp <= 1) return std::nullopt;
  int64_t m = p.MicroBatches();
  if (m < p.pp) {
    return ArgumentError{"ValueError",
                         "The number of contiguous micro-batches in a virtual pipeline stage "
                         "should range in [PP, num_microbatches], but got "
                         "microbatch_group_size_per_vp_stage=" + S(p.pp) +
                             ", pipeline_parallel_size=" + S(p.pp) +
                             ", num_microbatches=" + S(m),
                         "megatron/core/pipeline_parallel/schedules.py",
                         "forward_backward_pipelining_with_interleaving", RaisedAt::kFirstIteration};
  }
  if (m % p.pp != 0) {
    return ArgumentError{"RuntimeError",
                         "The remainder of M (the total micro-batches) divided by N (number of "
                         "contiguous micro-batches in a virtual pipeline stage) should be 0, or "
                         "larger than or equal to the pipeline-parallel size, but it is " +
                             S(m % p.pp) + ". Otherwise, it introduces dependency bubbles in the "
                             "pipeline and reduces throughput.",
                         "megatron/core/pipeline_parallel/schedules.py",
                         "forward_backward_pipelining_with_interleaving", RaisedAt::kFirstIteration};
  }
  return std::nullopt;
}

std::optional<ArgumentError> SequenceSplit(const SimSetup& s, const ClusterInfo&) {
  if (!s.feat.sequence_parallel) return std::nullopt;
  if ((s.model.seq_length / s.par.cp) % s.par.tp == 0) return std::nullopt;
  return ArgumentError{"AssertionError",
                       "First dimension of the tensor should be divisible by tensor parallel size",
                       "megatron/core/tensor_parallel/mappings.py", "_split_along_first_dim",
                       RaisedAt::kFirstIteration};
}

const std::vector<Check>& Checks() {
  static const std::vector<Check> checks = {
      Argparse,       Removed,      WorldSize, MicroBatch,    SeqLength,
      PipelineLayers, Batch,        DeviceConnections, Overlaps, Recomputation,
      TensorSplits,   Experts,      Fp8Support, InterleavedGroups, SequenceSplit};
  return checks;
}

}  // namespace

std::optional<ArgumentError> CheckMegatronArguments(const SimSetup& setup,
                                                    const ClusterInfo& cluster) {
  for (const auto& check : Checks()) {
    if (auto error = check(setup, cluster)) return error;
  }
  return std::nullopt;
}

}  // namespace attune::megatron
