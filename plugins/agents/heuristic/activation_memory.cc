// Copyright attune authors.
#include "activation_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "history.h"
#include "param_memory.h"
#include "reading.h"

namespace attune::agents {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kBf16 = 2.0;

// The keys whose moves change only what the backward keeps.
const std::set<std::string>& ActivationKeys() {
  static const std::set<std::string> kKeys = {
      "--recompute-granularity", "--recompute-method",  "--recompute-num-layers",
      "--recompute-activations", "--recompute-modules", "--micro-batch-size"};
  return kKeys;
}

double NumberOr(const Recipe& r, const std::string& key, double fallback) {
  std::optional<std::string> v = GetValue(r, key);
  if (!v || v->empty()) return fallback;
  char* end = nullptr;
  double x = std::strtod(v->c_str(), &end);
  return end != v->c_str() && *end == '\0' ? x : fallback;
}

// What is recomputed, from the recipe's flags (Megatron's argument rules: --recompute-activations
// is selective; --recompute-modules applies to selective only, default core_attn).
struct Recompute {
  bool full = false, uniform = true;
  double num_layers = 1;
  std::set<std::string> modules;  // selective
};

Recompute ReadRecompute(const Recipe& r) {
  Recompute out;
  std::optional<std::string> granularity = GetValue(r, "--recompute-granularity");
  if (!granularity && GetValue(r, "--recompute-activations")) granularity = "selective";
  if (granularity == "full") {
    out.full = true;
    out.uniform = GetValue(r, "--recompute-method").value_or("uniform") != "block";
    out.num_layers = std::max(1.0, NumberOr(r, "--recompute-num-layers", 1));
  } else if (granularity == "selective") {
    std::istringstream words(GetValue(r, "--recompute-modules").value_or("core_attn"));
    for (std::string w; words >> w;) out.modules.insert(w);
  }
  return out;
}

// One layer's activations per token, in bytes, kept (`recomputed` false) or recomputed in full.
struct LayerBytes {
  double kept = 0;        // nothing recomputed
  double full_input = 0;  // what a fully recomputed layer keeps: its input
};

LayerBytes PerToken(const Recipe& r, const LayerWeights& w, const RecipeShape& s, const Recompute& rc,
                    double seq) {
  const double h = w.hidden, tp = std::max(1, s.tp), etp = std::max(1, s.etp);
  const double sp = GetValue(r, "--sequence-parallel") ? tp : 1.0;
  const double heads = w.heads, gated = w.gated ? 2.0 : 1.0;
  const double ffn = w.ffn, expert_ffn = w.expert_ffn, shared_ffn = w.shared_ffn;
  const bool norms_dropped = rc.modules.count("layernorm") > 0;
  const double norm_inputs = h / sp, norm_outputs = norms_dropped ? 0.0 : h / sp;

  // The QKV input (the norm's output) and the latents, queries, keys, values and the core
  // attention's output (the projection's input); a rank holds at least one KV head when TP
  // exceeds the KV groups.
  const double head_dim = w.query_width / std::max(1.0, heads);
  double attention = norm_inputs + norm_outputs + w.latent_width + 2 * w.query_width / tp +
                     2 * std::max(w.kv_width / tp, head_dim);
  const std::string backend = GetValue(r, "--attention-backend").value_or("auto");
  if ((backend == "unfused" || backend == "local") && rc.modules.count("core_attn") == 0) {
    attention += 5.0 / kBf16 * heads / tp * seq;  // scores, softmax and mask: per query, every key
  }
  double dense = norm_inputs + norm_outputs;
  if (rc.modules.count("mlp") == 0) dense += ffn * (gated + 1) / tp;
  double moe = norm_inputs + norm_outputs;
  if (w.experts > 0) {
    // A rank holds m·k·ETP/TP routed rows (its sequence-parallel share of the tokens, gathered
    // over the ETP ranks of its experts), each of width h in and F/ETP out.
    double routed = h * etp / tp + (rc.modules.count("moe") ? 0.0 : expert_ffn * gated / tp) +
                    (rc.modules.count("moe") || rc.modules.count("moe_act") ? 0.0 : expert_ffn / tp);
    moe += w.topk * routed;
    if (shared_ffn > 0 && rc.modules.count("shared_experts") == 0) moe += shared_ffn * (gated + 1) / tp;
  }
  const double masks = NumberOr(r, "--hidden-dropout", 0.1) > 0 ? 2 * h / sp / kBf16 : 0.0;
  LayerBytes out;
  out.kept = kBf16 * (attention + (1 - w.moe_share) * dense + w.moe_share * moe + masks);
  out.full_input = kBf16 * h / sp;
  return out;
}

// Kept bytes per token of one model chunk of `layers` layers.
double ChunkBytes(const LayerBytes& b, const Recompute& rc, double layers) {
  if (!rc.full) return layers * b.kept;
  if (rc.uniform) return std::ceil(layers / rc.num_layers) * b.full_input;
  const double recomputed = std::min(layers, rc.num_layers);
  return recomputed * b.full_input + (layers - recomputed) * b.kept;
}

}  // namespace

std::optional<double> ActivationBytes(const Recipe& r, const std::map<std::string, std::string>& defaults) {
  std::optional<LayerWeights> w = ReadLayerWeights(r, defaults);
  const double seq = NumberOr(r, "--seq-length", 0);
  if (!w || seq <= 0) return std::nullopt;
  const RecipeShape s = ReadShape(r);
  const Recompute rc = ReadRecompute(r);
  const LayerBytes per_token = PerToken(r, *w, s, rc, seq);
  const double tokens = seq / std::max(1, s.cp) * std::max(1, s.mbs);
  const double pp = std::max(1, s.pp), vpp = std::max(1, s.vpp);
  const double micro_batches = s.MicroBatches().value_or(static_cast<int>(pp));
  const double even = w->layers / pp;
  const double first_layers = NumberOr(r, "--decoder-first-pipeline-num-layers", even);
  const double last_layers = NumberOr(r, "--decoder-last-pipeline-num-layers", even);
  // First rank: its warm-up micro-batches (model chunks under an interleaved schedule).
  double first = 0;
  if (vpp > 1) {
    const double chunks = std::min((pp - 1) * 2 + (vpp - 1) * pp + 1, micro_batches * vpp);
    first = chunks * ChunkBytes(per_token, rc, first_layers / vpp);
  } else {
    first = std::min(pp, micro_batches) * ChunkBytes(per_token, rc, first_layers);
  }
  // Last rank: its warm-up, (VPP − 1)·PP model chunks plus one (one micro-batch without
  // interleaving), and the logits (BF16 and FP32).
  double last = first;
  if (pp > 1) {
    const double chunks = std::min((vpp - 1) * pp + 1, micro_batches * vpp);
    last = chunks * ChunkBytes(per_token, rc, last_layers / vpp);
  }
  const double vocab = VocabSize(r, defaults).value_or(0);
  last += vocab / std::max(1, s.tp) * 6.0;
  return tokens * std::max(first, last);
}

std::optional<double> ActivationMemoryChange(const Recipe& recipe, const std::vector<Change>& changes,
                                             const std::map<std::string, std::string>& defaults,
                                             double peak_gib) {
  if (changes.empty() || peak_gib <= 0) return std::nullopt;
  for (const Change& c : changes) {
    if (ActivationKeys().count(c.key) == 0) return std::nullopt;
  }
  std::optional<Recipe> after = Apply(recipe, changes);
  if (!after) return std::nullopt;
  std::optional<double> before_bytes = ActivationBytes(recipe, defaults);
  std::optional<double> after_bytes = ActivationBytes(*after, defaults);
  if (!before_bytes || !after_bytes) return std::nullopt;
  return (*after_bytes - *before_bytes) / kGiB / peak_gib;
}

}  // namespace attune::agents
