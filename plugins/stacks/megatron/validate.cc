#include "validate.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>

#include "devices.h"
#include "recipe_view.h"
#include "sim_mapping.h"
#include "value_types.h"

namespace attune::megatron {
namespace {

using Check = std::function<std::optional<std::string>(const Recipe&, const RecipeView&,
                                                       const ClusterInfo&)>;
struct Rule {
  ConstraintInfo info;
  Check check;
};

std::string S(long v) { return std::to_string(v); }
using Found = std::optional<std::string>;

Found WorldDivisible(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  long model = v.tp * v.pp * v.cp;
  if (model > 0 && v.world % model == 0) return std::nullopt;
  return "world size " + S(v.world) + " (the recipe's topology: " + S(v.nodes) + " node(s) x " +
         S(v.gpus_per_node) + " GPUs) is not divisible by TP*PP*CP = " + S(v.tp) + "*" + S(v.pp) + "*" +
         S(v.cp) + " = " + S(model) + "; choose sizes whose product divides the world size, or set the "
         "recipe's topology to the nodes the job runs on";
}

Found ExpertGrid(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  // Without experts the grid is TP*PP, which par.world_divisible already covers.
  if (!v.experts || *v.experts <= 0) return std::nullopt;
  long grid = v.etp * v.ep * v.pp;
  if (grid > 0 && v.world % grid == 0) return std::nullopt;
  return "world size " + S(v.world) + " is not divisible by ETP*EP*PP = " + S(v.etp) + "*" + S(v.ep) +
         "*" + S(v.pp) + " = " + S(grid) + "; lower EP or ETP";
}

Found ValueTypes(const Recipe& r, const RecipeView&, const ClusterInfo&) { return MalformedValue(r); }

Found PositiveSizes(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  for (long s : {v.tp, v.pp, v.cp, v.ep, v.etp}) {
    if (s < 1) return "parallel sizes must be >= 1 (TP=" + S(v.tp) + " PP=" + S(v.pp) + " CP=" + S(v.cp) +
                      " EP=" + S(v.ep) + " ETP=" + S(v.etp) + "); fix the malformed size";
  }
  return std::nullopt;
}

Found HeadsTp(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (!v.heads || *v.heads % v.tp == 0) return std::nullopt;
  return "--num-attention-heads " + S(*v.heads) + " is not a multiple of TP " + S(v.tp) +
         "; use a TP that divides the head count";
}

Found QueryGroupsTp(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (!v.query_groups || *v.query_groups % v.tp == 0 || v.tp % *v.query_groups == 0) {
    return std::nullopt;
  }
  return "--num-query-groups " + S(*v.query_groups) + " and TP " + S(v.tp) +
         " do not divide one another; use a TP that divides the groups or is a multiple of them";
}

Found FfnTp(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (!v.ffn || *v.ffn % v.tp == 0) return std::nullopt;
  return "FFN hidden size " + S(*v.ffn) + " is not divisible by TP " + S(v.tp) + "; use a TP that divides it";
}

Found MoeFfnEtp(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (!v.experts || !v.moe_ffn || *v.moe_ffn % v.etp == 0) return std::nullopt;
  return "MoE FFN hidden size " + S(*v.moe_ffn) + " is not divisible by ETP " + S(v.etp) +
         "; use an ETP that divides it";
}

Found LayersPp(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  bool uneven = Has(r, "--decoder-first-pipeline-num-layers") ||
                Has(r, "--decoder-last-pipeline-num-layers") ||
                Has(r, "--pipeline-model-parallel-layout");
  // A hybrid (Mamba) model's layers come from its pattern; Megatron ignores --num-layers there.
  bool hybrid = Has(r, "--hybrid-layer-pattern") || Has(r, "--hybrid-override-pattern");
  if (!v.layers || uneven || hybrid || v.vpp_layers || v.vpp_stages) return std::nullopt;
  if (*v.split_units % v.pp == 0) return std::nullopt;
  return "number of layers " + S(*v.split_units) + " is not divisible by PP " + S(v.pp) +
         "; use a PP that divides the layers (or an uneven split)";
}

Found UnevenSplit(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  auto first = IntArg(r, "--decoder-first-pipeline-num-layers");
  auto last = IntArg(r, "--decoder-last-pipeline-num-layers");
  if ((!first && !last) || !v.layers) return std::nullopt;
  long middle_stages = v.pp - (first ? 1 : 0) - (last ? 1 : 0);
  long rest = *v.layers - first.value_or(0) - last.value_or(0);
  bool ok = middle_stages > 0 ? rest >= 0 && rest % middle_stages == 0 : rest == 0;
  if (ok) return std::nullopt;
  return "with first/last stage layers the remaining " + S(rest) + " layers do not divide over " +
         S(middle_stages) + " middle stages (PP " + S(v.pp) + "); adjust the split or PP";
}

Found PipelineLayout(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  auto layout = GetValue(r, "--pipeline-model-parallel-layout");
  if (!layout) return std::nullopt;
  auto stages = UnrollPipelineLayout(*layout);
  if (!stages) {
    return "--pipeline-model-parallel-layout '" + *layout + "' is not a layout: use E, t, m, L, '|' "
           "between stages, 'x*n' and '(...)*n' (commas are ignored)";
  }
  long decoder = 0;
  for (const auto& stage : *stages) decoder += static_cast<long>(std::count(stage.begin(), stage.end(), 't'));
  if (v.pp > 0 && stages->size() % static_cast<size_t>(v.pp) != 0) {
    return "--pipeline-model-parallel-layout has " + S(static_cast<long>(stages->size())) +
           " stages, not a multiple of PP " + S(v.pp) + "; give each pipeline rank the same number of stages";
  }
  if (v.layers && decoder != *v.layers) {
    return "--pipeline-model-parallel-layout places " + S(decoder) + " decoder layers ('t') but --num-layers is " +
           S(*v.layers) + "; make them agree";
  }
  return std::nullopt;
}

Found VppAtMostOne(const Recipe& r, const RecipeView&, const ClusterInfo&) {
  int n = Has(r, "--num-layers-per-virtual-pipeline-stage") +
          Has(r, "--num-virtual-stages-per-pipeline-rank") +
          Has(r, "--pipeline-model-parallel-layout");
  if (n <= 1) return std::nullopt;
  return "give at most one of --num-layers-per-virtual-pipeline-stage, "
         "--num-virtual-stages-per-pipeline-rank, --pipeline-model-parallel-layout";
}

Found VppRequiresPp(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  // Megatron takes a virtual pipeline of one stage (a flag or a layout that works out to VPP 1) as
  // none, and checks PP only for an interleaved schedule.
  if (v.vpp <= 1) return std::nullopt;
  long min_pp = Has(r, "--no-overlap-p2p-communication") ? 3 : 2;
  if (v.pp >= min_pp) return std::nullopt;
  return "interleaved schedule (VPP " + S(v.vpp) + ") needs PP >= " + S(min_pp) + ", found PP " + S(v.pp) +
         "; raise PP or remove the virtual-pipeline flag";
}

Found VppLayers(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!v.layers || (!v.vpp_layers && !v.vpp_stages) || Has(r, "--pipeline-model-parallel-layout")) {
    return std::nullopt;
  }
  bool uneven = Has(r, "--decoder-first-pipeline-num-layers") || Has(r, "--decoder-last-pipeline-num-layers");
  if (uneven && v.vpp_layers) {
    return "an uneven pipeline split (--decoder-first/last-pipeline-num-layers) takes the virtual pipeline as "
           "--num-virtual-stages-per-pipeline-rank; replace --num-layers-per-virtual-pipeline-stage";
  }
  auto counts = PipelineRankLayers(r, v);
  if (!counts) {
    if (uneven) return std::nullopt;  // the uneven-split rule says why
    return "with a virtual pipeline the layers " + S(*v.split_units) + " must divide by PP " + S(v.pp);
  }
  const char* what = uneven ? "layers of a pipeline stage " : "layers per PP rank ";
  for (long per_rank : *counts) {
    if (v.vpp_layers && (*v.vpp_layers < 1 || per_rank % *v.vpp_layers != 0)) {
      return what + S(per_rank) + " is not divisible by --num-layers-per-virtual-pipeline-stage " +
             S(*v.vpp_layers) + "; choose a divisor";
    }
    if (v.vpp_stages && (*v.vpp_stages < 1 || per_rank % *v.vpp_stages != 0)) {
      return what + S(per_rank) + " is not divisible by VPP " + S(*v.vpp_stages) + "; choose a divisor";
    }
  }
  return std::nullopt;
}

Found VppMicroBatches(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (v.vpp <= 1 || v.pp <= 1 || v.micro_batches <= 0) return std::nullopt;
  long g = IntArg(r, "--microbatch-group-size-per-virtual-pipeline-stage").value_or(v.pp);
  long m = v.micro_batches;
  if (g >= v.pp && g <= m && (m % g == 0 || m % g >= v.pp)) return std::nullopt;
  return "interleaved schedule needs micro-batches M >= group " + S(g) + " (default PP) and M % group == 0 "
         "(or >= PP); found M = " + S(m) + ", PP = " + S(v.pp) + "; change MBS or PP";
}

Found CpSeq(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (v.cp <= 1 || !v.seq || *v.seq % (2 * v.cp) == 0) return std::nullopt;
  return "--seq-length " + S(*v.seq) + " is not a multiple of 2*CP = " + S(2 * v.cp) + "; lower CP";
}

Found SpSeqTp(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (!v.sp || v.tp <= 1 || !v.seq || v.cp < 1) return std::nullopt;
  if ((*v.seq / v.cp) % v.tp == 0) return std::nullopt;
  return "with sequence parallelism seq/CP = " + S(*v.seq / v.cp) + " must divide by TP " + S(v.tp) +
         "; choose another TP or CP";
}

Found MbsRequired(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  // slime batches by tokens (--use-dynamic-batch-size) and sets no micro-batch size.
  if ((v.mbs && *v.mbs > 0) || Has(r, "--use-dynamic-batch-size")) return std::nullopt;
  return "--micro-batch-size must be set to a positive integer";
}

Found GbsDivisible(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!v.mbs || *v.mbs <= 0 || !v.gbs || v.dp <= 0) return std::nullopt;
  if (Has(r, "--decrease-batch-size-if-needed")) return std::nullopt;
  long unit = *v.mbs * v.dp;
  if (*v.gbs % unit == 0 && *v.gbs >= unit) return std::nullopt;
  return "global batch size " + S(*v.gbs) + " is not a positive multiple of MBS*DP = " + S(*v.mbs) +
         "*" + S(v.dp) + " = " + S(unit) + "; choose an MBS (or DP) that divides it";
}

// Megatron-LM's step batch-size schedule ("0:16 2.4B:320 ... 12B:1536") sets the global batch
// itself; since it replaced --rampup-batch-size, parse_args refuses an explicit one beside it.
Found ScheduleOrGbs(const Recipe& r, const RecipeView&, const ClusterInfo&) {
  if (!Has(r, "--step-batch-size-schedule") || !Has(r, "--global-batch-size")) return std::nullopt;
  return "--step-batch-size-schedule and --global-batch-size are both set: Megatron-LM stops with "
         "\"Cannot specify both --step-batch-size-schedule and --global-batch-size\"; remove one "
         "of them";
}

Found ExpertsEp(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (v.ep <= 1 && v.etp <= 1) return std::nullopt;
  if (v.ep > 1 && !v.experts) return "EP " + S(v.ep) + " needs --num-experts; remove EP";
  if (v.ep > 1 && *v.experts % v.ep != 0) {
    return "--num-experts " + S(*v.experts) + " is not a multiple of EP " + S(v.ep) + "; choose a divisor";
  }
  return std::nullopt;
}

Found MoeFlagsNeedExperts(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (v.experts) return std::nullopt;
  // Megatron ignores the other MoE settings on a dense model; this one it refuses.
  if (Has(r, "--overlap-moe-expert-parallel-comm")) {
    return "--overlap-moe-expert-parallel-comm needs an MoE model (--num-experts) with EP > 1; remove it";
  }
  return std::nullopt;
}

Found MoeBiasEtp(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!v.experts || Has(r, "--disable-bias-linear") || v.etp <= 1) return std::nullopt;
  return "MoE with bias (no --disable-bias-linear) needs ETP == 1, found ETP " + S(v.etp) +
         " (ETP defaults to TP); set --expert-tensor-parallel-size 1";
}

Found GroupedGemmCc(const Recipe& r, const RecipeView&, const ClusterInfo& c) {
  if (!Has(r, "--moe-grouped-gemm") || c.compute_capability_major == 0 ||
      c.compute_capability_major >= 8) {
    return std::nullopt;
  }
  return "--moe-grouped-gemm needs compute capability >= 8, the cluster has " +
         S(c.compute_capability_major) + "; remove it";
}

bool AllToAllOrFlex(const Recipe& r) {
  auto d = StrArg(r, "--moe-token-dispatcher-type").value_or("allgather");
  return d == "alltoall" || d == "flex";
}

Found MoeDispatcherDeps(const Recipe& r, const RecipeView&, const ClusterInfo&) {
  // Only the NCCL EP backend is refused outside the flex dispatcher; the others are ignored there.
  if (StrArg(r, "--moe-flex-dispatcher-backend").value_or("") == "ncclep" &&
      StrArg(r, "--moe-token-dispatcher-type").value_or("") != "flex") {
    return "--moe-flex-dispatcher-backend ncclep needs --moe-token-dispatcher-type flex";
  }
  // Megatron checks the overlap only when there is a shared expert to overlap.
  if (Has(r, "--moe-shared-expert-overlap") && Has(r, "--moe-shared-expert-intermediate-size") &&
      !AllToAllOrFlex(r)) {
    return "--moe-shared-expert-overlap needs the alltoall or flex dispatcher";
  }
  return std::nullopt;
}

Found EpOverlap(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!Has(r, "--overlap-moe-expert-parallel-comm")) return std::nullopt;
  if (v.ep <= 1) return "--overlap-moe-expert-parallel-comm needs EP > 1, found EP " + S(v.ep);
  if (!AllToAllOrFlex(r)) return "--overlap-moe-expert-parallel-comm needs the alltoall or flex dispatcher";
  if (v.recompute_granularity == "full") return "--overlap-moe-expert-parallel-comm is incompatible with full recompute";
  if (v.pp > 1 && v.vpp <= 1) return "--overlap-moe-expert-parallel-comm with PP > 1 needs a virtual pipeline";
  return std::nullopt;
}

Found TpCommOverlapSp(const Recipe&, const RecipeView& v, const ClusterInfo&) {
  if (!v.tp_comm_overlap || v.sp) return std::nullopt;
  if (v.tp <= 1) {
    return "--tp-comm-overlap needs sequence parallelism, which Megatron turns off at TP 1; remove "
           "--tp-comm-overlap or raise TP";
  }
  return "--tp-comm-overlap needs --sequence-parallel; add --sequence-parallel";
}

Found DeterministicForbids(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!Has(r, "--deterministic-mode")) return std::nullopt;
  if (v.tp_comm_overlap) return "--deterministic-mode forbids --tp-comm-overlap";
  if (Has(r, "--cross-entropy-loss-fusion")) return "--deterministic-mode forbids --cross-entropy-loss-fusion";
  return std::nullopt;
}

Found ParamGather(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!v.overlap_param) return std::nullopt;
  bool sharded = v.dist_opt || Has(r, "--use-megatron-fsdp") || StrArg(r, "--optimizer").value_or("") == "dist_muon";
  if (sharded && v.overlap_grad) return std::nullopt;
  return std::string("--overlap-param-gather needs --use-distributed-optimizer and --overlap-grad-reduce (found ") +
         (v.dist_opt ? "" : "no ") + "distributed optimizer, " + (v.overlap_grad ? "" : "no ") +
         "overlap-grad-reduce); add them";
}

Found ParamGatherWithOptStep(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!Has(r, "--overlap-param-gather-with-optimizer-step")) return std::nullopt;
  if (v.dist_opt && v.overlap_param && v.vpp > 1 && StrArg(r, "--ckpt-format").value_or("") == "torch") {
    return std::nullopt;
  }
  return "--overlap-param-gather-with-optimizer-step needs the distributed optimizer, "
         "--overlap-param-gather, a virtual pipeline and --ckpt-format torch";
}

Found MaxConnections(const Recipe& r, const RecipeView&, const ClusterInfo& c) {
  if (!NeedsMaxConnectionsOne(r, c)) return std::nullopt;
  auto env = GetValue(r, "env:CUDA_DEVICE_MAX_CONNECTIONS");
  if (env && *env == "1") return std::nullopt;
  return "TP or CP > 1 before Blackwell (compute capability " + S(c.compute_capability_major) +
         " < 10) needs CUDA_DEVICE_MAX_CONNECTIONS=1, found " + (env ? "'" + *env + "'" : "unset") +
         "; export CUDA_DEVICE_MAX_CONNECTIONS=1";
}

Found FsdpMaxConnections(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!v.fsdp) return std::nullopt;
  auto env = GetValue(r, "env:CUDA_DEVICE_MAX_CONNECTIONS");
  if (!env || *env != "1") return std::nullopt;
  return "FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or != 1; unset it";
}

Found TorchFsdp2(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!Has(r, "--use-torch-fsdp2")) return std::nullopt;
  if (v.pp != 1 || v.ep != 1) return "--use-torch-fsdp2 needs PP == 1 and EP == 1";
  if (v.dist_opt) return "--use-torch-fsdp2 is incompatible with --use-distributed-optimizer";
  if (!Has(r, "--no-gradient-accumulation-fusion")) return "--use-torch-fsdp2 needs --no-gradient-accumulation-fusion";
  return std::nullopt;
}

Found RecomputeFull(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  auto method = StrArg(r, "--recompute-method");
  auto n = IntArg(r, "--recompute-num-layers");
  if (v.recompute_granularity == "full") {
    if (!method || (*method != "uniform" && *method != "block")) {
      return "--recompute-granularity full needs --recompute-method uniform|block";
    }
    // Megatron needs a count of at least 1 and caps a larger one at the layers a stage holds.
    if (!n || *n < 1) return "--recompute-granularity full needs --recompute-num-layers of at least 1";
    return std::nullopt;
  }
  // Without a granularity Megatron ignores both (scripts often keep them with the granularity
  // commented out); with selective it refuses them.
  if (v.recompute_granularity == "selective" && (method || n)) {
    return "--recompute-method / --recompute-num-layers do not apply to --recompute-granularity selective; "
           "remove them or use full";
  }
  return std::nullopt;
}

Found DistributeSaved(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!Has(r, "--distribute-saved-activations")) return std::nullopt;
  if (v.tp > 1 && v.recompute_granularity == "full" && !v.sp) return std::nullopt;
  return "--distribute-saved-activations needs TP > 1, full recompute and no sequence parallelism";
}

Found CpuOffload(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  auto n = IntArg(r, "--cpu-offloading-num-layers").value_or(0);
  if (n <= 0) return std::nullopt;
  // Whole-iteration graphs are the one CUDA graph kind Megatron allows with offloading.
  bool graphs = v.cuda_graphs && StrArg(r, "--cuda-graph-impl").value_or("") != "full_iteration";
  if (v.pp == 1 && v.recompute_granularity.empty() && !graphs) return std::nullopt;
  return "--cpu-offloading-num-layers needs PP == 1, no recompute and no CUDA graphs other than full_iteration";
}

Found CudaGraphs(const Recipe& r, const RecipeView&, const ClusterInfo&) {
  auto impl = StrArg(r, "--cuda-graph-impl");
  if (impl && *impl != "none" && (Has(r, "--enable-cuda-graph") || Has(r, "--external-cuda-graph"))) {
    return "--cuda-graph-impl cannot be combined with --enable-cuda-graph / --external-cuda-graph";
  }
  // FP16 with a dynamic loss scale turns the NaN check off by itself.
  bool nan_check_off = Has(r, "--no-check-for-nan-in-loss-and-grad") || (Has(r, "--fp16") && !Has(r, "--loss-scale"));
  if (impl && *impl == "full_iteration" && !nan_check_off) {
    return "--cuda-graph-impl full_iteration needs --no-check-for-nan-in-loss-and-grad";
  }
  auto alloc = GetValue(r, "env:PYTORCH_CUDA_ALLOC_CONF").value_or("");
  bool te = (impl && *impl == "transformer_engine") || Has(r, "--external-cuda-graph");
  if (te && alloc.find("expandable_segments:True") != std::string::npos &&
      GetValue(r, "env:NCCL_GRAPH_REGISTER").value_or("") != "0") {
    return "Transformer Engine CUDA graphs with expandable segments need NCCL_GRAPH_REGISTER=0";
  }
  return std::nullopt;
}

Found AttentionLocal(const Recipe& r, const RecipeView&, const ClusterInfo&) {
  if (StrArg(r, "--attention-backend").value_or("") != "local") return std::nullopt;
  if (StrArg(r, "--spec").value_or("") == "local") return std::nullopt;
  return "--attention-backend local needs --spec local";
}

Found CrossEntropyTe(const Recipe& r, const RecipeView&, const ClusterInfo&) {
  if (Has(r, "--cross-entropy-loss-fusion") &&
      StrArg(r, "--cross-entropy-fusion-impl").value_or("native") == "te") {
    return "--cross-entropy-loss-fusion with --cross-entropy-fusion-impl te is rejected by Megatron";
  }
  return std::nullopt;
}

Found CpCommType(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  auto type = StrArg(r, "--cp-comm-type").value_or("p2p");
  if (type.find("a2a+p2p") == std::string::npos) return std::nullopt;
  auto sizes = StrArg(r, "--hierarchical-context-parallel-sizes");
  long product = 1;
  if (sizes) {
    size_t pos = 0;
    while (pos < sizes->size()) {
      size_t end = sizes->find(' ', pos);
      if (end == std::string::npos) end = sizes->size();
      product *= std::atol(sizes->substr(pos, end - pos).c_str());
      pos = end + 1;
    }
  }
  if (sizes && product == v.cp) return std::nullopt;
  return "--cp-comm-type a2a+p2p needs --hierarchical-context-parallel-sizes whose product is CP " + S(v.cp);
}

// The recipe's data declaration (docs/recipes.md#the-data-declaration): fixed_length true|false, loss_mask
// none|eod|varying. Anything else would be read by nobody, and a typo would silently keep the
// micro-batch lever locked (or worse, look like a declaration that is not there).
Found DataDeclaration(const Recipe& r, const RecipeView&, const ClusterInfo&) {
  static const std::map<std::string, std::vector<std::string>> kAllowed = {
      {"fixed_length", {"true", "false"}}, {"loss_mask", {"none", "eod", "varying"}}};
  for (const auto& [name, value] : r.data) {
    auto allowed = kAllowed.find(name);
    if (allowed == kAllowed.end()) {
      return "data." + name + " is not a declaration the Megatron stack reads (it reads "
             "data.fixed_length and data.loss_mask)";
    }
    if (std::find(allowed->second.begin(), allowed->second.end(), value) == allowed->second.end()) {
      std::string choices;
      for (const auto& c : allowed->second) choices += (choices.empty() ? "" : ", ") + c;
      return "data." + name + " is '" + value + "'; expected one of " + choices;
    }
  }
  return std::nullopt;
}

Found DeferEmbedding(const Recipe& r, const RecipeView& v, const ClusterInfo&) {
  if (!Has(r, "--defer-embedding-wgrad-compute") || v.pp > 1) return std::nullopt;
  return "--defer-embedding-wgrad-compute needs PP > 1";
}

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = {
      {{"values.types", "integer and number flags hold exactly an integer or a number"}, ValueTypes},
      {{"data.declaration", "data: declares fixed_length true|false and loss_mask none|eod|varying"}, DataDeclaration},
      {{"par.positive_sizes", "parallel sizes are integers >= 1"}, PositiveSizes},
      {{"par.world_divisible", "world % (TP*PP*CP) == 0"}, WorldDivisible},
      {{"par.expert_grid", "world % (ETP*EP*PP) == 0"}, ExpertGrid},
      {{"par.heads_tp", "num_attention_heads % TP == 0"}, HeadsTp},
      {{"par.query_groups_tp", "num_query_groups % TP == 0 or TP % num_query_groups == 0"}, QueryGroupsTp},
      {{"par.ffn_tp", "ffn_hidden_size % TP == 0"}, FfnTp},
      {{"par.moe_ffn_etp", "moe_ffn_hidden_size % ETP == 0"}, MoeFfnEtp},
      {{"par.layers_pp", "num_layers (+embedding/loss stages) % PP == 0 without uneven split or VPP"}, LayersPp},
      {{"par.uneven_split", "layers left after first/last stages divide over the middle stages"}, UnevenSplit},
      {{"par.layout", "a pipeline layout parses, has a multiple of PP stages and --num-layers decoder layers"}, PipelineLayout},
      {{"vpp.at_most_one", "at most one of the three virtual-pipeline flags"}, VppAtMostOne},
      {{"vpp.requires_pp", "VPP above 1 needs PP > 1 (PP > 2 with --no-overlap-p2p-communication)"}, VppRequiresPp},
      {{"vpp.layers_divisible", "layers of each pipeline stage % VPP (or layers per virtual stage) == 0"}, VppLayers},
      {{"vpp.micro_batches", "interleaving: group G (default PP) with PP <= G <= M and M % G == 0 or >= PP"}, VppMicroBatches},
      {{"cp.seq_divisible", "seq_length % (2*CP) == 0 when CP > 1"}, CpSeq},
      {{"cp.comm_type", "a2a+p2p needs hierarchical CP sizes whose product is CP"}, CpCommType},
      {{"sp.seq_divisible_tp", "with SP, (seq/CP) % TP == 0"}, SpSeqTp},
      {{"batch.mbs_required", "--micro-batch-size is set and positive"}, MbsRequired},
      {{"batch.gbs_divisible", "GBS % (MBS*DP) == 0 and GBS >= MBS*DP"}, GbsDivisible},
      {{"batch.schedule_or_gbs", "--step-batch-size-schedule and --global-batch-size are not both set"}, ScheduleOrGbs},
      {{"moe.experts_ep", "EP needs --num-experts and num_experts % EP == 0"}, ExpertsEp},
      {{"moe.requires_experts", "EP communication overlap needs --num-experts"}, MoeFlagsNeedExperts},
      {{"moe.bias_etp", "MoE with bias needs ETP == 1"}, MoeBiasEtp},
      {{"moe.grouped_gemm_cc", "grouped GEMM needs compute capability >= 8"}, GroupedGemmCc},
      {{"moe.dispatcher_deps", "the ncclep backend needs flex; shared-expert overlap (with a shared expert) needs alltoall/flex"}, MoeDispatcherDeps},
      {{"moe.ep_overlap", "EP comm overlap needs EP > 1, alltoall/flex, no full recompute, VPP with PP > 1"}, EpOverlap},
      {{"tpov.requires_sp", "--tp-comm-overlap needs --sequence-parallel"}, TpCommOverlapSp},
      {{"det.forbids", "--deterministic-mode forbids tp-comm-overlap and cross-entropy fusion"}, DeterministicForbids},
      {{"dp.param_gather_prereqs", "--overlap-param-gather needs distributed optimizer and overlap-grad-reduce"}, ParamGather},
      {{"dp.param_gather_with_opt_step", "param gather with optimizer step needs dist-opt, param gather, VPP, torch ckpt"}, ParamGatherWithOptStep},
      {{"env.cuda_device_max_connections", "TP/CP > 1 before Blackwell needs CUDA_DEVICE_MAX_CONNECTIONS=1 (unless FSDP / EP overlap; GPU clusters only)"}, MaxConnections},
      {{"env.fsdp_max_connections", "FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or != 1"}, FsdpMaxConnections},
      {{"fsdp2.prereqs", "torch FSDP2: PP == EP == 1, no distributed optimizer, no grad-accumulation fusion"}, TorchFsdp2},
      {{"rc.method_layers", "full recompute needs a method and num_layers >= 1; selective forbids them; none ignores them"}, RecomputeFull},
      {{"rc.distribute_saved", "distribute-saved-activations needs TP > 1, full recompute, no SP"}, DistributeSaved},
      {{"rc.cpu_offload", "CPU offloading needs PP == 1, no recompute, no CUDA graphs but full_iteration"}, CpuOffload},
      {{"cg.combination", "CUDA graph flag combinations (exclusive flags, full_iteration, TE + expandable segments)"}, CudaGraphs},
      {{"attn.local_spec", "--attention-backend local needs --spec local"}, AttentionLocal},
      {{"ce.te_fusion", "cross-entropy fusion with the te implementation is rejected"}, CrossEntropyTe},
      {{"pp.defer_embedding", "--defer-embedding-wgrad-compute needs PP > 1"}, DeferEmbedding},
  };
  return rules;
}

}  // namespace

bool NeedsMaxConnectionsOne(const Recipe& recipe, const ClusterInfo& cluster) {
  if (cluster.compute_capability_major >= 10) return false;
  if (ClusterDeviceKind(cluster) == DeviceKind::kCpu) return false;
  RecipeView v = ReadView(recipe);
  if (v.tp <= 1 && v.cp <= 1) return false;
  return !v.fsdp && !Has(recipe, "--overlap-moe-expert-parallel-comm");
}

std::vector<Violation> Violations(const Recipe& recipe, const ClusterInfo& cluster) {
  RecipeView view = ReadView(recipe);
  std::vector<Violation> out;
  for (const auto& rule : Rules()) {
    // Sizes below 1 would divide by zero in the rules that follow.
    if (auto found = rule.check(recipe, view, cluster)) {
      out.push_back({rule.info.id, *found});
      if (rule.info.id == "par.positive_sizes") break;
    }
  }
  return out;
}

Status ValidateRecipe(const Recipe& recipe, const ClusterInfo& cluster) {
  return ViolationsToStatus(Violations(recipe, cluster));
}

Status ViolationsToStatus(const std::vector<Violation>& violations) {
  if (violations.empty()) return Status::Ok();
  std::string message = "recipe violates Megatron's combination rules: ";
  for (size_t i = 0; i < violations.size(); ++i) {
    if (i) message += "; ";
    message += violations[i].rule_id + ": " + violations[i].message;
  }
  return Status::InvalidArgument(message);
}

const std::vector<ConstraintInfo>& ConstraintCatalog() {
  static const std::vector<ConstraintInfo> catalog = [] {
    std::vector<ConstraintInfo> out;
    for (const auto& rule : Rules()) out.push_back(rule.info);
    return out;
  }();
  return catalog;
}

}  // namespace attune::megatron
