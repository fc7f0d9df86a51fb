// Copyright attune authors.
#include "param_memory.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "history.h"
#include "reading.h"

namespace attune::agents {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The keys whose moves only re-shard parameter state (see the header).
const std::set<std::string>& ParameterShardingKeys() {
  static const std::set<std::string> kKeys = {
      "--pipeline-model-parallel-size", "--expert-model-parallel-size",
      "--expert-tensor-parallel-size"};
  return kKeys;
}

// Keys that move together with PP (the stack refits a virtual pipeline, an uneven split or a
// layout to the new PP) and change no parameter state of their own.
bool FollowsPipeline(const std::string& key) {
  return key == "--num-layers-per-virtual-pipeline-stage" ||
         key == "--num-virtual-stages-per-pipeline-rank" || key == "--decoder-first-pipeline-num-layers" ||
         key == "--decoder-last-pipeline-num-layers" || key == "--pipeline-model-parallel-layout";
}

class Flags {
 public:
  Flags(const Recipe& r, const std::map<std::string, std::string>& defaults)
      : recipe_(r), defaults_(defaults) {}

  std::optional<double> Get(const std::string& key) const {
    return PositiveFlag(recipe_, defaults_, key);
  }
  double Or(const std::string& key, double fallback) const { return Get(key).value_or(fallback); }
  bool Set(const std::string& key) const { return GetValue(recipe_, key).has_value(); }

 private:
  const Recipe& recipe_;
  const std::map<std::string, std::string>& defaults_;
};

// Bytes per parameter over `dp` data-parallel ranks (see the header).
double BytesPerParameter(const ParameterCounts& c, double dp) {
  double optimizer = c.distributed_optimizer ? 12 / std::max(1.0, dp) : 12;
  return 2 + c.grad_bytes + optimizer;
}

}  // namespace

std::optional<LayerWeights> ReadLayerWeights(const Recipe& recipe,
                                             const std::map<std::string, std::string>& defaults) {
  Flags f(recipe, defaults);
  std::optional<double> layers = f.Get("--num-layers"), h = f.Get("--hidden-size");
  if (!layers || !h) return std::nullopt;
  const double heads = f.Or("--num-attention-heads", 1);
  const double groups = f.Set("--group-query-attention") ? f.Or("--num-query-groups", heads) : heads;
  const double ffn = f.Or("--ffn-hidden-size", 4 * *h);
  const double mlp = f.Set("--swiglu") ? 3 : 2;
  LayerWeights w;
  w.layers = *layers;
  w.hidden = *h;
  w.heads = heads;
  w.groups = groups;
  w.ffn = ffn;
  w.expert_ffn = f.Or("--moe-ffn-hidden-size", ffn);
  w.shared_ffn = f.Or("--moe-shared-expert-intermediate-size", 0);
  w.gated = f.Set("--swiglu");
  w.experts = f.Or("--num-experts", 0);
  w.topk = f.Or("--moe-router-topk", 2);
  // Every layer is a MoE layer unless --moe-layer-freq is a plain N (every N-th layer).
  w.moe_share = w.experts > 0 ? 1 / f.Or("--moe-layer-freq", 1) : 0;
  if (f.Set("--multi-latent-attention")) {
    // Megatron's MLA defaults: no query compression, a 32-wide KV latent, heads of 128 + 64 RoPE
    // for queries and keys and 128 for values.
    const double qk = f.Or("--qk-head-dim", 128), rope = f.Or("--qk-pos-emb-head-dim", 64);
    const double v = f.Or("--v-head-dim", 128), kv_rank = f.Or("--kv-lora-rank", 32);
    const std::optional<double> q_rank = f.Get("--q-lora-rank");
    const double q =
        q_rank ? *h * *q_rank + *q_rank * heads * (qk + rope) : *h * heads * (qk + rope);
    w.attention = q + *h * (kv_rank + rope) + kv_rank * heads * (qk + v) + heads * v * *h;
    w.query_width = w.kv_width = heads * (qk + rope + v) / 2;
    w.latent_width = q_rank.value_or(0) + kv_rank + rope;
  } else {
    const double d = f.Or("--kv-channels", *h / heads);
    w.query_width = heads * d;
    w.kv_width = groups * d;
    w.attention = 2 * *h * w.query_width + 2 * *h * w.kv_width;
  }
  w.dense_mlp = mlp * *h * ffn;
  w.moe_dense = mlp * *h * w.shared_ffn + *h * w.experts;  // shared experts and the router
  w.expert = mlp * *h * w.expert_ffn;
  return w;
}

std::optional<ParameterCounts> CountParameters(const Recipe& recipe,
                                               const std::map<std::string, std::string>& defaults) {
  std::optional<LayerWeights> w = ReadLayerWeights(recipe, defaults);
  if (!w) return std::nullopt;
  Flags f(recipe, defaults);
  const double world = std::max(1, recipe.topology.WorldSize());
  const double tp = f.Or("--tensor-model-parallel-size", 1);
  const double pp = f.Or("--pipeline-model-parallel-size", 1);
  const double ep = f.Or("--expert-model-parallel-size", 1);
  const double etp = f.Or("--expert-tensor-parallel-size", tp);
  // The busiest stage's layers: an even share, or under an uneven split the most of the first,
  // the last and a middle stage.
  double per_stage = w->layers / pp;
  const std::optional<double> first = f.Get("--decoder-first-pipeline-num-layers");
  const std::optional<double> last = f.Get("--decoder-last-pipeline-num-layers");
  const double middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
  if ((first || last) && middle_stages >= 1) {
    per_stage = std::max({(w->layers - first.value_or(0) - last.value_or(0)) / middle_stages, first.value_or(0),
                          last.value_or(0)});
  }
  ParameterCounts c;
  c.dense = per_stage * (w->attention + (1 - w->moe_share) * w->dense_mlp + w->moe_share * w->moe_dense) / tp;
  c.expert = per_stage * w->moe_share * w->experts / ep * w->expert / etp;
  c.dense_dp = std::max(1.0, world / (tp * pp));
  c.dense_dp_stride = tp;
  c.expert_dp = std::max(1.0, world / (etp * ep * pp));
  c.expert_dp_stride = etp * ep;
  c.grad_bytes = f.Set("--grad-reduce-in-bf16") ? 2 : 4;
  c.distributed_optimizer = f.Set("--use-distributed-optimizer");
  return c;
}

std::optional<double> ParameterStateBytes(const Recipe& recipe,
                                          const std::map<std::string, std::string>& defaults) {
  std::optional<ParameterCounts> c = CountParameters(recipe, defaults);
  if (!c) return std::nullopt;
  return c->dense * BytesPerParameter(*c, c->dense_dp) + c->expert * BytesPerParameter(*c, c->expert_dp);
}

// Context parallelism shards the activations along the sequence and nothing else: the parameter
// state is replicated over CP ranks and the distributed optimizer shards over DP×CP, which a CP
// move at a fixed world size leaves unchanged. What is not parameter state in the measured peak
// (activations and transient buffers: an upper bound of the activations) scales by CP before /
// CP after.
std::optional<double> ContextParallelMemoryChange(const Recipe& recipe, const Change& change,
                                                  const std::map<std::string, std::string>& defaults,
                                                  double peak_gib) {
  Flags f(recipe, defaults);
  std::optional<long long> to = ParseInt(change.to);
  const double before = f.Or("--context-parallel-size", 1);
  std::optional<double> state = ParameterStateBytes(recipe, defaults);
  if (!to || *to <= 0 || !state) return std::nullopt;
  const double activations = std::max(0.0, peak_gib - *state / kGiB);
  return activations * (before / static_cast<double>(*to) - 1) / peak_gib;
}

std::optional<double> ParallelMemoryChange(const Recipe& recipe, const std::vector<Change>& changes,
                                           const std::map<std::string, std::string>& defaults,
                                           double peak_gib) {
  if (changes.empty() || peak_gib <= 0) return std::nullopt;
  if (changes.size() == 1 && changes.front().key == "--context-parallel-size") {
    return ContextParallelMemoryChange(recipe, changes.front(), defaults, peak_gib);
  }
  bool shards = false;
  for (const Change& c : changes) {
    if (ParameterShardingKeys().count(c.key) > 0) {
      shards = true;
    } else if (!FollowsPipeline(c.key)) {
      return std::nullopt;
    }
  }
  if (!shards) return std::nullopt;
  std::optional<Recipe> after = Apply(recipe, changes);
  if (!after) return std::nullopt;
  std::optional<double> before_bytes = ParameterStateBytes(recipe, defaults);
  std::optional<double> after_bytes = ParameterStateBytes(*after, defaults);
  if (!before_bytes || !after_bytes) return std::nullopt;
  return (*after_bytes - *before_bytes) / kGiB / peak_gib;
}

}  // namespace attune::agents
