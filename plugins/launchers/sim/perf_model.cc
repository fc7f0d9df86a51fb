// Copyright attune authors.
//
// The step-time model (docs/sim.md): one layer's forward cost, forward + backward + recompute of
// a stage's layers, the pipeline schedule and the optimizer. The MoE terms are in moe_model.cc,
// data-parallel communication in dp_comm.cc; the shared terms in perf_terms.h.
#include "perf_model.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "perf_terms.h"

namespace attune::sim {
// The step model's own terms (perf_terms.h), used unqualified in its two files.
using namespace step_internal;  // NOLINT(build/namespaces)

namespace {

// HBM bytes per element to quantize a GEMM operand (forward; backward quantizes the gradients
// likewise): delayed scaling fuses the amax into the cast (read 2, write 1); tensorwise current
// scaling reads once more for the amax first; blockwise and MXFP8 write a row-wise and a
// column-wise copy (the scales run along K); NVFP4 adds the per-tensor amax pass and writes two
// half-byte copies with FP8 block scales (the Hadamard transform of wgrad operands is fused).
double CastBytesPerElement(const Features& f, GemmPrecision p) {
  if (p == GemmPrecision::kFp4) return 2 + 2 + 0.5 + 0.5 + 2.0 / 16;
  if (p != GemmPrecision::kFp8) return 0;
  switch (f.fp8_recipe) {
    case Fp8Recipe::kDelayed: return 3;
    case Fp8Recipe::kTensorwise: return 5;
    case Fp8Recipe::kBlockwise: return 4 + 2.0 / 128 * 4;
    case Fp8Recipe::kMxfp8: return 4 + 2.0 / 32;
  }
  return 3;
}

// Multi-latent attention's projections [DeepSeek-V2 §2.1; Megatron's MLASelfAttention]: Q down
// (replicated over TP) and up, KV down with the shared RoPE key (replicated), KV up to per-head
// keys and values, and the output projection.
double MlaProjections(const Ctx& x) {
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden), n = static_cast<double>(m.heads);
  double dq = static_cast<double>(m.qk_head_dim + m.qk_pos_emb_head_dim);
  double dv = static_cast<double>(m.v_head_dim);
  double q_lora = static_cast<double>(m.q_lora_rank), kv_lora = static_cast<double>(m.kv_lora_rank);
  double t = q_lora > 0 ? GemmTime(x, x.tokens, q_lora, h) + GemmTime(x, x.tokens, n * dq / x.tp, q_lora)
                        : GemmTime(x, x.tokens, n * dq / x.tp, h);
  t += GemmTime(x, x.tokens, kv_lora + static_cast<double>(m.qk_pos_emb_head_dim), h);
  t += GemmTime(x, x.tokens, n * (static_cast<double>(m.qk_head_dim) + dv) / x.tp, kv_lora);
  return t + GemmTime(x, x.tokens, h, n * dv / x.tp);
}

// Flash kernels visit keys in tiles of this many; a sliding window also computes the partly
// masked tile at its edge.
constexpr double kFlashKeyTile = 128;

// Query-key pairs the flash kernels compute, averaged over the layers, relative to causal
// attention over the whole sequence: a windowed layer's query attends to at most `window` earlier
// keys (s·w − w²/2 pairs of the causal s²/2).
double AttentionSpan(const ModelShape& m) {
  if (m.attention_window <= 0 || m.windowed_layers <= 0 || m.layers <= 0 || m.seq_length <= 0) {
    return 1.0;
  }
  double s = static_cast<double>(m.seq_length);
  double w = std::min(s, static_cast<double>(m.attention_window) + kFlashKeyTile);
  double windowed = (s * w - w * w / 2) / (s * s / 2);
  double share = static_cast<double>(std::min(m.windowed_layers, m.layers)) / static_cast<double>(m.layers);
  return share * windowed + (1 - share);
}

void AddAttention(const Ctx& x, LayerCost* cost) {
  const ModelShape& m = x.s.model;
  double nd = static_cast<double>(m.heads * m.kv_channels);
  double gd = static_cast<double>(m.query_groups * m.kv_channels);
  double h = static_cast<double>(m.hidden);
  // QKᵀ and AV per query-key pair: the query-key and value head dims (MLA: 192 and 128).
  double d_pair = 2.0 * static_cast<double>(m.kv_channels);
  if (m.mla) {
    cost->gemm += MlaProjections(x);
    d_pair = static_cast<double>(m.qk_head_dim + m.qk_pos_emb_head_dim + m.v_head_dim);
  } else {
    cost->gemm += GemmTime(x, x.tokens, (nd + 2 * gd) / x.tp, h);
    cost->gemm += GemmTime(x, x.tokens, h, nd / x.tp);
  }
  // Core attention: QKᵀ and AV over the local queries against the whole sequence.
  double heads_local = std::max(1.0, static_cast<double>(m.heads) / x.tp);
  double d = d_pair / 2;
  double full = 2.0 * x.b * (x.seq / x.cp) * x.seq * d_pair * heads_local;
  if (x.s.feat.flash_attention) {
    // BF16 whatever the GEMM recipe. The softmax needs one exponential per (causal) score; on
    // Blackwell the SFU's exponential rate rivals the tensor cores (FlashAttention-4's reason to
    // emulate some of them), so the slower of the two bounds the kernel.
    double frac = GemmPeakFraction(x.c.gpu, x.f) * x.f.attention_fraction;
    double span = AttentionSpan(m);
    double mma = 0.5 * span * full / (x.peak * frac);
    double exps = 0.5 * span * x.b * heads_local * (x.seq / x.cp) * x.seq;
    double exp_s = x.c.gpu.exp_tera_per_s > 0 ? exps / (x.c.gpu.exp_tera_per_s * 1e12) : 0.0;
    cost->attention += std::max(mma, exp_s);
  } else {
    // Unfused: the full score matrix is computed, then masked, softmaxed and dropped out in
    // separate kernels that stream it through HBM (~8 bytes per score forward).
    cost->attention += full / (x.peak * GemmPeakFraction(x.c.gpu, x.f) * Sat(d, x.f.gemm_half_dim));
    double scores = x.b * heads_local * (x.seq / x.cp) * x.seq;
    cost->scores = scores * 8.0 / x.hbm;
    cost->elementwise += cost->scores;
  }
}

void AddMlp(const Ctx& x, bool moe, LayerCost* cost) {
  if (moe) {
    AddExperts(x, cost);
    return;
  }
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden);
  double f = static_cast<double>(m.ffn_hidden);
  double e = MlpFactor(m);
  cost->mlp = GemmTime(x, x.tokens, f * (e - 1) / x.tp, h) + GemmTime(x, x.tokens, h, f / x.tp);
  cost->gemm += cost->mlp;
}

// Bytes that LayerNorm, dropout, residual adds, bias and activation kernels stream (forward).
void AddElementwise(const Ctx& x, bool moe, LayerCost* cost) {
  const ModelShape& m = x.s.model;
  double h = static_cast<double>(m.hidden);
  double sp = x.s.feat.sequence_parallel ? x.tp : 1.0;
  double f = moe ? static_cast<double>(m.moe_ffn_hidden) * m.topk : static_cast<double>(m.ffn_hidden);
  double act = f * (m.swiglu ? 3.0 : 2.0) / x.tp;   // read fc1 output, write activation
  double norms = 12.0 * h / sp;                      // 2 norms, 2 dropout+residual, bias adds
  double bytes = x.tokens * (norms + act) * kBytesBf16;
  cost->norms = x.tokens * 8.0 * h / sp * kBytesBf16 * x.ew / x.hbm;
  cost->act = x.tokens * act * kBytesBf16 * x.ew / x.hbm;
  // Quantization of the GEMM inputs (QKV, projection, fc1, fc2) to FP8/FP4.
  bytes += x.tokens * (2 * h + f / x.tp + h) * CastBytesPerElement(x.s.feat, x.prec);
  cost->elementwise += bytes * x.ew / x.hbm;
}

void AddTensorParallelComm(const Ctx& x, bool moe, LayerCost* cost) {
  if (x.tp <= 1) return;
  Link l = GroupLink(x, 1, x.tp);
  double bytes = x.tokens * static_cast<double>(x.s.model.hidden) * kBytesBf16;
  // One all-reduce (or all-gather + reduce-scatter with SP: same volume) per block per pass;
  // a MoE block exchanges tokens through the dispatcher instead.
  double collectives = moe ? 1.0 : 2.0;
  double t = collectives * AllReduce(l, x.tp, bytes);
  if (x.s.feat.tp_comm_overlap) t *= 1.0 - x.f.comm_overlap_hidden;
  cost->tp += t;
}

void AddContextParallelComm(const Ctx& x, LayerCost* cost) {
  if (x.cp <= 1) return;
  const ModelShape& m = x.s.model;
  Link l = GroupLink(x, x.tp, x.cp);
  double kv_heads = std::max(1.0, static_cast<double>(m.query_groups) / x.tp);
  double kv = x.b * (x.seq / x.cp) * 2 * kv_heads * m.kv_channels * kBytesBf16;
  double comm = (x.cp - 1) * (kv / l.bw + l.latency);
  // Ring attention overlaps each KV exchange with the attention of the previous chunk.
  cost->cp += std::max(0.0, comm - cost->attention) + (x.cp - 1) * l.latency;
}

LayerCost LayerForward(const Ctx& x, bool moe) {
  LayerCost cost;
  AddAttention(x, &cost);
  AddMlp(x, moe, &cost);
  AddElementwise(x, moe, &cost);
  AddTensorParallelComm(x, moe, &cost);
  if (moe) {
    AddRouterAndPermutation(x, &cost);
    AddExpertComm(x, &cost);
  }
  AddContextParallelComm(x, &cost);
  return cost;
}

double ForwardTime(const LayerCost& c) {
  return c.gemm + c.attention + c.elementwise + c.tp + c.cp + c.ep + c.moe;
}

// Forward + backward (+ recompute) of `layers` layers of one kind for one micro-batch.
struct MicroBatchCost {
  double gemm = 0, attention = 0, elementwise = 0, tp = 0, cp = 0, ep = 0, recompute = 0, moe = 0;
  double Gpu() const { return gemm + attention + elementwise + tp + cp + ep + recompute + moe; }
};

double RecomputedShare(const TrainingSetup& s, double layers_on_stage) {
  if (s.feat.recompute != Recompute::kFull) return 0;
  if (s.feat.recompute_method == RecomputeMethod::kUniform) return 1.0;
  return std::min(1.0, s.feat.recompute_layers * static_cast<double>(s.par.vpp) / layers_on_stage);
}

// A GEMM's forward, its backward for the input's gradient and, unless the weights are frozen,
// its backward for the weight's gradient, in forward-GEMM units.
double GemmPasses(const Features& f) { return f.frozen_base ? 2.0 : 3.0; }

void AddLayers(const Ctx& x, bool moe, double layers, double stage_layers, MicroBatchCost* mb) {
  if (layers <= 0) return;
  LayerCost f = LayerForward(x, moe);
  double attn_bwd = x.s.feat.flash_attention ? 2.5 : 2.0;
  mb->gemm += layers * GemmPasses(x.s.feat) * f.gemm;
  mb->attention += layers * (1 + attn_bwd) * f.attention;
  mb->elementwise += layers * 3 * f.elementwise;
  mb->tp += layers * 2 * f.tp;
  mb->cp += layers * 3 * f.cp;
  mb->ep += layers * 2 * f.ep;
  mb->moe += layers * 3 * f.moe;
  double share = RecomputedShare(x.s, stage_layers);
  mb->recompute += layers * share * ForwardTime(f);
  if (x.s.feat.recompute == Recompute::kSelective) {
    // --recompute-modules: each named module's forward runs again in the backward.
    const Features& ft = x.s.feat;
    if (ft.recompute_core_attn) mb->recompute += layers * (f.attention + f.scores);
    if (ft.recompute_layernorm) mb->recompute += layers * f.norms;
    if (ft.recompute_moe_act && moe) mb->recompute += layers * f.act;
    if (ft.recompute_moe && moe) mb->recompute += layers * (f.mlp + f.moe + f.ep);
    if (ft.recompute_mlp && !moe) mb->recompute += layers * (f.mlp + f.act);
  }
}

// The output layer and loss, `heads` times: the main head and one more per MTP depth.
void AddLogits(const Ctx& x, double heads, MicroBatchCost* mb) {
  const ModelShape& m = x.s.model;
  double v = static_cast<double>(m.vocab) / x.tp;
  // Megatron's output layer is a plain ColumnParallelLinear, not a Transformer Engine module:
  // BF16 whatever the recipe.
  Ctx bf16 = x;
  bf16.prec = GemmPrecision::kBf16;
  // A fused, chunked output layer and loss computes each chunk's logits again in the backward
  // and keeps them in on-chip tiles: one more forward GEMM, one pass of elementwise traffic.
  const bool fused_linear = x.s.feat.fused_linear_loss;
  mb->gemm += heads * (GemmPasses(x.s.feat) + (fused_linear ? 1 : 0)) *
              GemmTime(bf16, x.tokens, v, static_cast<double>(m.hidden));
  // Passes over the FP32 logits: six, two with Megatron's fused cross entropy, one fused into the
  // output layer.
  double passes = 6.0;
  if (x.s.feat.cross_entropy_fusion) passes = 2.0;
  if (fused_linear) passes = 1.0;
  mb->elementwise += heads * x.tokens * v * 4.0 * passes / x.hbm;
}

// What an MTP depth adds to its transformer layer: the 2h→h projection of the concatenated hidden
// state and next-token embedding, and the embedding lookup, the two RMSNorms and the
// concatenation (about six BF16 passes over the tokens' hidden states), forward and backward.
void AddMtpExtras(const Ctx& x, double depths, MicroBatchCost* mb) {
  if (depths <= 0) return;
  double h = static_cast<double>(x.s.model.hidden);
  double sp = x.s.feat.sequence_parallel ? x.tp : 1.0;
  mb->gemm += depths * GemmPasses(x.s.feat) * GemmTime(x, x.tokens, h / x.tp, 2 * h);
  mb->elementwise += depths * 3 * 6 * x.tokens / sp * h * kBytesBf16 / x.hbm;
}

double OptimizerTime(const Ctx& x, const ParamCounts& pc) {
  const Parallelism& p = x.s.par;
  double local = pc.dense_per_gpu + pc.expert_per_gpu;
  double shard = x.s.feat.distributed_optimizer || x.s.feat.fsdp ? local / (static_cast<double>(p.dp) * p.cp) : local;
  // Adam: read master, m, v, grad (16 B), write master, m, v (12 B) and the bf16 param (2 B);
  // grad-norm and unscale passes read the local grads twice. With BF16 state: read param, m, v,
  // grad (8 B), write param, m, v (6 B), and the grads are BF16.
  const bool bf16_state = x.s.feat.bf16_training_state;
  double bytes = shard * (bf16_state ? 14.0 : 30.0) + local * (bf16_state ? 4.0 : 8.0);
  if (x.s.feat.frozen_base) bytes = 0;  // no update of frozen weights
  // Transformer Engine quantizes each weight once per iteration (cached across micro-batches);
  // FP8/FP4 parameters skip the cast but MXFP8/NVFP4 still write the transposed copy.
  double cast = CastBytesPerElement(x.s.feat, x.prec);
  if (x.s.feat.fp8_param_gather || x.s.feat.fp4_param_gather) cast *= 0.5;
  bytes += local * cast;
  return bytes / x.hbm;
}

}  // namespace

namespace {

// Parameters of one multi-latent attention block (Megatron's MLA FLOP formula uses the same).
double MlaParams(const ModelShape& m) {
  double h = static_cast<double>(m.hidden), n = static_cast<double>(m.heads);
  double dq = static_cast<double>(m.qk_head_dim + m.qk_pos_emb_head_dim);
  double q_lora = static_cast<double>(m.q_lora_rank), kv_lora = static_cast<double>(m.kv_lora_rank);
  double q = q_lora > 0 ? q_lora * (h + n * dq + 1) : h * n * dq;
  double kv = kv_lora * (h + n * static_cast<double>(m.qk_head_dim + m.v_head_dim) + 1) +
              h * static_cast<double>(m.qk_pos_emb_head_dim);
  return q + kv + n * static_cast<double>(m.v_head_dim) * h;
}

}  // namespace

namespace {

// One layer's parameters by part, unsharded.
struct LayerParts {
  double attn = 0, dense_mlp = 0, experts = 0, shared = 0, router = 0, norms = 0;
  double Dense() const { return attn + dense_mlp + norms; }
  double Moe() const { return attn + experts + shared + router + norms; }
};

LayerParts PartsOf(const ModelShape& m) {
  double h = static_cast<double>(m.hidden);
  double nd = static_cast<double>(m.heads * m.kv_channels);
  double gd = static_cast<double>(m.query_groups * m.kv_channels);
  double e = MlpFactor(m);
  LayerParts l;
  l.attn = m.mla ? MlaParams(m) : h * (nd + 2 * gd) + nd * h;
  l.dense_mlp = h * static_cast<double>(m.ffn_hidden) * e;
  l.experts = static_cast<double>(m.experts) * h * static_cast<double>(m.moe_ffn_hidden) * e;
  l.shared = h * static_cast<double>(m.shared_expert_hidden) * e;
  l.router = h * static_cast<double>(m.experts);
  l.norms = 2 * h;
  return l;
}

// An MTP depth's own parameters beside its layer: the 2h→h projection and three RMSNorms.
double MtpExtraParams(const ModelShape& m) {
  double h = static_cast<double>(m.hidden);
  return 2 * h * h + 3 * h;
}

}  // namespace

RankShare ShareOfRank(const TrainingSetup& setup, int rank) {
  const Parallelism& p = setup.par;
  const ModelShape& m = setup.model;
  RankShare out;
  if (!p.rank_loads.empty() && rank >= 0 && rank < static_cast<int>(p.rank_loads.size())) {
    const PipelineRankLoad& l = p.rank_loads[static_cast<size_t>(rank)];
    out.dense_layers = static_cast<double>(l.layers - l.moe_layers);
    out.moe_layers = static_cast<double>(l.moe_layers);
    out.mtp_layers = static_cast<double>(l.mtp_layers);
    out.mtp_moe = MtpIsMoe(m);
    out.embedding = l.embedding;
    out.loss = l.loss;
    return out;
  }
  double pp = std::max(1, p.pp);
  out.dense_layers = static_cast<double>(m.DenseLayers()) / pp;
  out.moe_layers = static_cast<double>(m.MoeLayers()) / pp;
  // An even split gives rank r the chunks r, r + PP, ... of layers/(PP·VPP) consecutive layers,
  // so leading dense layers (DeepSeek's) all sit on the first rank.
  int64_t chunks = int64_t{std::max(1, p.pp)} * std::max(1, p.vpp);
  if (m.layers > 0 && m.layers % chunks == 0 && m.experts > 0) {
    int64_t size = m.layers / chunks, moe = 0, layers = 0;
    for (int64_t chunk = rank; chunk < chunks; chunk += std::max(1, p.pp)) {
      for (int64_t i = chunk * size; i < (chunk + 1) * size; ++i, ++layers) moe += m.IsMoeLayer(i) ? 1 : 0;
    }
    out.moe_layers = static_cast<double>(moe);
    out.dense_layers = static_cast<double>(layers - moe);
  }
  out.embedding = rank == 0;
  out.loss = rank == p.pp - 1;
  out.mtp_layers = out.loss ? static_cast<double>(m.mtp_layers) : 0.0;
  out.mtp_moe = MtpIsMoe(m);
  return out;
}

std::vector<int> RanksToCheck(const TrainingSetup& setup) {
  const int pp = std::max(1, setup.par.pp);
  std::vector<int> out = {pp - 1};
  if (pp == 1) return out;
  out.push_back(0);
  if (setup.par.rank_loads.empty() && setup.model.MoeLayers() == 0) return out;
  for (int rank = 1; rank + 1 < pp; ++rank) out.push_back(rank);
  return out;
}

RankParams CountRankParams(const TrainingSetup& setup, int rank) {
  const ModelShape& m = setup.model;
  const Parallelism& p = setup.par;
  LayerParts l = PartsOf(m);
  RankShare r = ShareOfRank(setup, rank);
  double tp = p.tp;
  double dense_kind = r.DenseKind(), moe_kind = r.MoeKind();
  RankParams out;
  out.dense = (dense_kind * (l.attn + l.dense_mlp) + moe_kind * (l.attn + l.shared)) / tp +
              (dense_kind + moe_kind) * l.norms + moe_kind * l.router +
              r.mtp_layers * MtpExtraParams(m) / tp;
  double vocab_shard = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / tp;
  if (r.embedding) out.dense += vocab_shard;
  // The output layer: its own weights when untied, or the embedding's copy on a later stage.
  if (r.loss && (m.untied_embeddings || !r.embedding)) out.dense += vocab_shard;
  // MTP depths look up the next tokens' embeddings: a rank without the input embedding keeps a
  // table, shared with the output layer's copy only when the embeddings are tied.
  if (r.mtp_layers > 0 && !r.embedding && !(r.loss && !m.untied_embeddings)) out.dense += vocab_shard;
  out.expert = moe_kind * l.experts / (static_cast<double>(p.ep) * p.etp);
  return out;
}

ParamCounts CountParams(const TrainingSetup& setup) {
  const ModelShape& m = setup.model;
  const Parallelism& p = setup.par;
  LayerParts l = PartsOf(m);
  double h = static_cast<double>(m.hidden);
  double embed = static_cast<double>(m.vocab) * h + (m.learned_positions ? m.seq_length * h : 0.0);
  double output = m.untied_embeddings ? static_cast<double>(m.vocab) * h : 0.0;
  double dl = static_cast<double>(m.DenseLayers()), ml = static_cast<double>(m.MoeLayers());
  double mtp = static_cast<double>(m.mtp_layers);
  double mtp_layer = MtpIsMoe(m) ? l.Moe() : l.Dense();
  ParamCounts pc;
  pc.total = dl * l.Dense() + ml * l.Moe() + embed + output + mtp * (mtp_layer + MtpExtraParams(m));
  pc.first_stage_per_gpu = CountRankParams(setup, 0).dense;
  pc.last_stage_per_gpu = CountRankParams(setup, p.pp - 1).dense;
  for (int rank : RanksToCheck(setup)) {
    RankParams r = CountRankParams(setup, rank);
    pc.dense_per_gpu = std::max(pc.dense_per_gpu, r.dense);
    pc.expert_per_gpu = std::max(pc.expert_per_gpu, r.expert);
  }
  return pc;
}

double MegatronModelFlops(const ModelShape& m, int64_t global_batch, bool causal_half) {
  double h = static_cast<double>(m.hidden);
  double T = static_cast<double>(global_batch) * static_cast<double>(m.seq_length);
  double S2 = T * static_cast<double>(m.seq_length);
  double e = MlpFactor(m);
  double nd = static_cast<double>(m.heads * m.kv_channels);
  double gd = static_cast<double>(m.query_groups * m.kv_channels);
  // MTP depths count as layers of the last layer's kind, with their projection and one more
  // output-layer pass each (reference §3.4).
  double mtp = static_cast<double>(m.mtp_layers);
  bool mtp_moe = MtpIsMoe(m);
  double dense_layers = static_cast<double>(m.DenseLayers()) + (mtp_moe ? 0.0 : mtp);
  double moe_layers = static_cast<double>(m.MoeLayers()) + (mtp_moe ? mtp : 0.0);
  double att_layers = static_cast<double>(m.layers) + mtp;
  double mlp = 6 * h *
               (static_cast<double>(m.ffn_hidden) * e * dense_layers +
                (static_cast<double>(m.moe_ffn_hidden) * m.topk * e +
                 static_cast<double>(m.shared_expert_hidden) * e) * moe_layers);
  double proj = 6 * (h * (nd + 2 * gd) + nd * h) * att_layers + 6 * mtp * (3 * h + 2 * h * h);
  double logits = 6 * h * static_cast<double>(m.vocab) * (mtp + 1);
  double core = (causal_half ? 6.0 : 12.0) * nd * att_layers;
  if (m.mla) {
    // Megatron's MLA branch: the projections' parameters, and QKᵀ/AV over 192- and 128-wide heads.
    proj = 6 * MlaParams(m) * att_layers + 6 * mtp * (3 * h + 2 * h * h);
    double pair = static_cast<double>(m.heads) *
                  static_cast<double>(m.qk_head_dim + m.qk_pos_emb_head_dim + m.v_head_dim);
    core = (causal_half ? 3.0 : 6.0) * pair * att_layers;
  }
  // Windowed layers count the keys their queries attend to (Megatron-Bridge's convention: the
  // window, capped at the sequence).
  double windowed = m.attention_window > 0 ? static_cast<double>(std::min(m.windowed_layers, m.layers)) : 0.0;
  if (windowed > 0 && m.layers > 0) {
    double span = std::min(static_cast<double>(m.seq_length), static_cast<double>(m.attention_window + 1));
    // `core` counts s² pairs per sequence (halved by causal_half); a window's w keys per query
    // are already causal, so under the halving convention they count twice to match.
    double per_layer = core / att_layers;
    double window_pairs = T * span * (causal_half ? 2.0 : 1.0);
    return T * (mlp + proj + logits) + per_layer * ((att_layers - windowed) * S2 + windowed * window_pairs);
  }
  return T * (mlp + proj + logits) + S2 * core;
}

double NarayananFlops(const ModelShape& m, int64_t global_batch) {
  double B = static_cast<double>(global_batch), s = static_cast<double>(m.seq_length);
  double l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden);
  double V = static_cast<double>(m.vocab);
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

StepBreakdown EstimateStep(const TrainingSetup& setup, const ClusterSpec& cluster,
                           const ModelFactors& factors) {
  Ctx x(setup, cluster, factors);
  Ctx x_bf16 = x;  // layers a low-precision recipe keeps in BF16 (--first-last-layers-bf16)
  x_bf16.prec = GemmPrecision::kBf16;
  const Parallelism& p = setup.par;
  double bf16_share = 0;
  if (x.prec != GemmPrecision::kBf16 && setup.model.layers > 0) {
    bf16_share = std::min(1.0, static_cast<double>(setup.feat.bf16_layers_at_start +
                                                   setup.feat.bf16_layers_at_end) /
                                   static_cast<double>(setup.model.layers));
  }
  // One micro-batch's forward and backward on pipeline rank `rank`, and what gates it on the host.
  struct RankTime {
    MicroBatchCost mb;
    double gpu = 0, host = 0, sync = 0, t_mb = 0;
  };
  auto rank_time = [&](int rank) {
    RankShare share = ShareOfRank(setup, rank);
    double stage_layers = share.Layers();
    RankTime rt;
    MicroBatchCost& mb = rt.mb;
    AddLayers(x, false, share.dense_layers * (1 - bf16_share), stage_layers, &mb);
    AddLayers(x_bf16, false, share.dense_layers * bf16_share, stage_layers, &mb);
    AddLayers(x, true, share.moe_layers * (1 - bf16_share), stage_layers, &mb);
    AddLayers(x_bf16, true, share.moe_layers * bf16_share, stage_layers, &mb);
    AddLayers(x, share.mtp_moe, share.mtp_layers, stage_layers, &mb);
    AddMtpExtras(x, share.mtp_layers, &mb);
    if (share.loss) AddLogits(x, 1.0 + static_cast<double>(setup.model.mtp_layers), &mb);
    rt.host = stage_layers * factors.host_us_per_layer * 1e-6 *
              (setup.feat.cuda_graphs ? kGraphHostShare : setup.feat.compiled ? kCompiledHostShare : 1.0);
    rt.gpu = mb.Gpu();
    // Grouped GEMM needs the tokens per expert on the host: each MoE layer's forward (and its
    // recomputation) waits for that copy, and the GPU idles while the host launches what follows.
    double forwards = 1.0 + RecomputedShare(setup, stage_layers);
    rt.sync = setup.feat.moe_pad_to_capacity ? 0.0 : share.MoeKind() * forwards * factors.moe_sync_us * 1e-6;
    rt.t_mb = std::max(rt.gpu, rt.host) + rt.sync;
    return rt;
  };
  // The busiest rank sets the pace (the last on a tie).
  std::optional<RankTime> busiest;
  for (int rank : RanksToCheck(setup)) {
    RankTime rt = rank_time(rank);
    if (!busiest || rt.t_mb > busiest->t_mb) busiest = rt;
  }
  const MicroBatchCost& mb = busiest->mb;
  double gpu = busiest->gpu, host = busiest->host, sync = busiest->sync, t_mb = busiest->t_mb;
  double m = static_cast<double>(p.MicroBatches());
  double vpp = p.vpp;

  StepBreakdown out;
  double scale = m;  // per-iteration totals over all micro-batches
  out.gemm_s = mb.gemm * scale;
  out.attention_s = mb.attention * scale;
  out.elementwise_s = mb.elementwise * scale;
  out.recompute_s = mb.recompute * scale;
  out.tp_comm_s = mb.tp * scale;
  out.cp_comm_s = mb.cp * scale;
  out.ep_comm_s = mb.ep * scale;
  out.moe_overhead_s = (mb.moe + sync) * scale;
  out.host_exposed_s = (std::max(gpu, host) - gpu) * scale;
  out.bubble_s = p.pp > 1 ? (p.pp - 1) / vpp * t_mb : 0.0;
  if (p.pp > 1) {
    double bytes = x.tokens * static_cast<double>(setup.model.hidden) * kBytesBf16 /
                   (setup.feat.sequence_parallel ? x.tp : 1.0);
    Link l = GroupLink(x, x.tp * x.cp * p.dp, p.pp);
    double one = bytes / l.bw + l.latency;
    double exposed = (vpp > 1 && setup.feat.overlap_p2p) ? 1.0 - factors.comm_overlap_hidden : 1.0;
    out.pp_p2p_s = m * vpp * 2 * one * exposed;
  }
  ParamCounts pc = CountParams(setup);
  const double gemm_passes = GemmPasses(setup.feat);
  double bwd_window = (mb.gemm * (gemm_passes - 1) / gemm_passes + mb.attention * 0.7);
  double fwd_window = (mb.gemm / gemm_passes + mb.attention * 0.3);
  if (setup.feat.fsdp) {
    // FSDP's gathers and reduce-scatters run on their own streams beside all of a micro-batch's
    // GPU work: its forward (a third of the work it would do without recomputation) and its
    // backward, recomputation included.
    fwd_window = (gpu - mb.recompute) / 3;
    bwd_window = gpu - fwd_window;
  }
  out.dp_comm_s = DataParallelComm(x, pc, bwd_window, fwd_window);
  out.optimizer_s = OptimizerTime(x, pc);
  out.step_overhead_s = factors.step_overhead_ms * 1e-3;
  out.step_s = m * t_mb + out.bubble_s + out.pp_p2p_s + out.dp_comm_s + out.optimizer_s +
               out.step_overhead_s;
  out.model_flops = MegatronModelFlops(setup.model, p.global_batch);
  out.tflops_per_gpu = out.model_flops / (out.step_s * 1e12 * p.world);
  out.tokens_per_s_per_gpu = static_cast<double>(p.global_batch) * static_cast<double>(setup.model.seq_length) /
                             out.step_s / p.world;
  return out;
}

}  // namespace attune::sim
