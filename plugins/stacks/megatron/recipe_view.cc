#include "recipe_view.h"

#include <algorithm>

#include "attune/support/nvlink.h"
#include "sim_mapping.h"

namespace attune::megatron {

bool Has(const Recipe& recipe, const std::string& flag) {
  return GetValue(recipe, flag).has_value();
}

std::optional<std::string> StrArg(const Recipe& recipe, const std::string& flag) {
  return GetValue(recipe, flag);
}

std::optional<std::string> WithoutDigitUnderscores(const std::string& s) {
  std::string out;
  auto digit = [&](size_t j) { return j < s.size() && s[j] >= '0' && s[j] <= '9'; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '_') {
      out += s[i];
    } else if (i == 0 || !digit(i - 1) || !digit(i + 1)) {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<long> IntArg(const Recipe& recipe, const std::string& flag) {
  auto given = GetValue(recipe, flag);
  if (!given || given->empty()) return std::nullopt;
  auto v = WithoutDigitUnderscores(*given);
  if (!v) return std::nullopt;
  try {
    size_t used = 0;
    long n = std::stol(*v, &used);
    if (used == v->size()) return n;
  } catch (...) {
    // Not an integer: reported as absent; Validate names malformed sizes.
  }
  return std::nullopt;
}

std::optional<long> DefaultFfn(const Recipe& recipe) {
  auto h = IntArg(recipe, "--hidden-size");
  if (!h) return std::nullopt;
  if (Has(recipe, "--swiglu")) return (4 * *h * 2 / 3) / 64 * 64;
  return 4 * *h;
}

std::optional<long> PaddedVocab(const Recipe& recipe) {
  if (auto pinned = IntArg(recipe, "--padded-vocab-size")) return pinned;
  auto vocab = IntArg(recipe, "--vocab-size");
  if (!vocab) return std::nullopt;
  long divisor = IntArg(recipe, "--make-vocab-size-divisible-by").value_or(128) *
                 IntArg(recipe, "--tensor-model-parallel-size").value_or(1);
  if (divisor <= 0) return std::nullopt;
  return (*vocab + divisor - 1) / divisor * divisor;
}

namespace {

void ReadParallel(const Recipe& r, RecipeView* v) {
  v->nodes = r.topology.nodes;
  v->gpus_per_node = r.topology.gpus_per_node;
  v->world = static_cast<long>(r.topology.nodes) * r.topology.gpus_per_node;
  const long rack = support::NvlinkRackGpus(r.topology.gpu_type);
  v->nvlink_gpus = std::max(v->gpus_per_node, std::min(rack, v->world));
  v->tp = IntArg(r, "--tensor-model-parallel-size").value_or(1);
  v->pp = IntArg(r, "--pipeline-model-parallel-size").value_or(1);
  v->cp = IntArg(r, "--context-parallel-size").value_or(1);
  v->ep = IntArg(r, "--expert-model-parallel-size").value_or(1);
  v->etp = IntArg(r, "--expert-tensor-parallel-size").value_or(v->tp);
  long model = v->tp * v->pp * v->cp;
  v->dp = model > 0 && v->world % model == 0 ? v->world / model : 0;
}

void ReadPipeline(const Recipe& r, RecipeView* v) {
  v->vpp_layers = IntArg(r, "--num-layers-per-virtual-pipeline-stage");
  v->vpp_stages = IntArg(r, "--num-virtual-stages-per-pipeline-rank");
  v->layers = IntArg(r, "--num-layers");
  if (v->layers) {
    v->split_units = *v->layers + (Has(r, "--account-for-embedding-in-pipeline-split") ? 1 : 0) +
                     (Has(r, "--account-for-loss-in-pipeline-split") ? 1 : 0);
  }
  auto layout = GetValue(r, "--pipeline-model-parallel-layout");
  auto stages = layout ? UnrollPipelineLayout(*layout) : std::nullopt;
  if (stages && v->pp > 0 && stages->size() % static_cast<size_t>(v->pp) == 0) {
    v->vpp = static_cast<long>(stages->size()) / v->pp;  // a layout's stages beyond PP are virtual
  } else if (v->vpp_stages) {
    v->vpp = *v->vpp_stages;
  } else if (v->vpp_layers && *v->vpp_layers > 0) {
    auto per_rank = PipelineRankLayers(r, *v);
    if (per_rank && per_rank->size() == 1) v->vpp = per_rank->front() / *v->vpp_layers;
  }
  if (v->vpp < 1) v->vpp = 1;
}

void ReadModel(const Recipe& r, RecipeView* v) {
  v->heads = IntArg(r, "--num-attention-heads");
  v->hidden = IntArg(r, "--hidden-size");
  v->ffn = IntArg(r, "--ffn-hidden-size");
  if (!v->ffn) v->ffn = DefaultFfn(r);
  // Megatron reads --num-query-groups only with --group-query-attention (default 1 group then).
  if (Has(r, "--group-query-attention")) v->query_groups = IntArg(r, "--num-query-groups").value_or(1);
  v->experts = IntArg(r, "--num-experts");
  if (v->experts && *v->experts == 0) v->experts.reset();  // Megatron: 0 experts is a dense model
  v->moe_ffn = IntArg(r, "--moe-ffn-hidden-size");
  if (!v->moe_ffn && v->experts) v->moe_ffn = v->ffn;
  v->seq = IntArg(r, "--seq-length");
  if (!v->seq) v->seq = IntArg(r, "--encoder-seq-length");
}

void ReadBatchAndFeatures(const Recipe& r, RecipeView* v) {
  v->mbs = IntArg(r, "--micro-batch-size");
  v->gbs = IntArg(r, "--global-batch-size");
  long gbs = v->gbs.value_or(v->mbs.value_or(0) * v->dp);
  long denominator = v->mbs.value_or(0) * v->dp;
  v->micro_batches = denominator > 0 ? gbs / denominator : 0;
  // Megatron turns sequence parallelism off at TP 1 (with a warning): the flag then means nothing.
  v->sp = Has(r, "--sequence-parallel") && v->tp > 1;
  v->dist_opt = Has(r, "--use-distributed-optimizer");
  v->overlap_grad = Has(r, "--overlap-grad-reduce");
  v->overlap_param = Has(r, "--overlap-param-gather");
  v->tp_comm_overlap = Has(r, "--tp-comm-overlap");
  auto impl = StrArg(r, "--cuda-graph-impl");
  v->cuda_graphs = (impl && *impl != "none") || Has(r, "--enable-cuda-graph") ||
                   Has(r, "--external-cuda-graph");
  v->fsdp = Has(r, "--use-megatron-fsdp") || Has(r, "--use-torch-fsdp2");
  v->recompute_granularity = StrArg(r, "--recompute-granularity").value_or("");
  if (v->recompute_granularity.empty() && Has(r, "--recompute-activations")) {
    v->recompute_granularity = "selective";
  }
}

}  // namespace

std::optional<std::vector<long>> PipelineRankLayers(const Recipe& r, const RecipeView& v) {
  if (!v.layers || v.pp < 1 || Has(r, "--pipeline-model-parallel-layout")) return std::nullopt;
  auto first = IntArg(r, "--decoder-first-pipeline-num-layers");
  auto last = IntArg(r, "--decoder-last-pipeline-num-layers");
  if (!first && !last) {
    if (*v.split_units % v.pp != 0) return std::nullopt;
    return std::vector<long>{*v.split_units / v.pp};
  }
  long middle_stages = v.pp - (first ? 1 : 0) - (last ? 1 : 0);
  long rest = *v.layers - first.value_or(0) - last.value_or(0);
  if (middle_stages < 0 || rest < 0 || (middle_stages == 0 && rest != 0)) return std::nullopt;
  if (middle_stages > 0 && rest % middle_stages != 0) return std::nullopt;
  std::vector<long> counts;
  if (first) counts.push_back(*first);
  if (middle_stages > 0) counts.push_back(rest / middle_stages);
  if (last) counts.push_back(*last);
  return counts;
}

RecipeView ReadView(const Recipe& recipe) {
  RecipeView v;
  ReadParallel(recipe, &v);
  ReadPipeline(recipe, &v);
  ReadModel(recipe, &v);
  ReadBatchAndFeatures(recipe, &v);
  return v;
}

}  // namespace attune::megatron
