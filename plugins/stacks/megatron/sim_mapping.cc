#include "sim_mapping.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attune/support/tokenizers.h"
#include "sim_rules.h"

namespace attune::megatron {
namespace {

using sim::Dispatcher;
using sim::Features;
using sim::Fp8Recipe;
using sim::ModelShape;
using sim::PipelineRankLoad;
using sim::Parallelism;
using sim::Recompute;
using sim::RecomputeMethod;
using sim::RunControl;

// Reads typed flag values and remembers the first argparse-style error, as argparse would
// report it before anything else runs.
class FlagReader {
 public:
  explicit FlagReader(SimSetup* setup) : setup_(setup) {}

  int64_t Int(const std::string& flag, int64_t fallback) {
    auto it = setup_->flags.find(flag);
    if (it == setup_->flags.end()) return fallback;
    int64_t v = 0;
    const std::string& s = it->second;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size()) {
      Error(flag, "invalid int value: '" + s + "'");
      return fallback;
    }
    return v;
  }

  double Double(const std::string& flag, double fallback) {
    auto it = setup_->flags.find(flag);
    if (it == setup_->flags.end()) return fallback;
    try {
      size_t used = 0;
      double v = std::stod(it->second, &used);
      if (used == it->second.size()) return v;
    } catch (...) {
      // std::stod reports "not a number" by throwing; handled below as argparse would.
    }
    Error(flag, "invalid float value: '" + it->second + "'");
    return fallback;
  }

  std::string Str(const std::string& flag, const std::string& fallback) const {
    auto it = setup_->flags.find(flag);
    return it == setup_->flags.end() ? fallback : it->second;
  }

  bool Switch(const std::string& flag) const { return setup_->flags.count(flag) > 0; }

 private:
  void Error(const std::string& flag, const std::string& what) {
    setup_->read_errors.push_back("pretrain_gpt.py: error: argument " + flag + ": " + what);
  }
  SimSetup* setup_;
};

void ReadModel(FlagReader& r, SimSetup* s) {
  ModelShape& m = s->model;
  m.layers = r.Int("--num-layers", 0);
  m.hidden = r.Int("--hidden-size", 0);
  m.heads = r.Int("--num-attention-heads", 0);
  m.swiglu = r.Switch("--swiglu");
  int64_t default_ffn = m.swiglu ? (m.hidden * 8 / 3 / 64) * 64 : 4 * m.hidden;
  m.ffn_hidden = r.Int("--ffn-hidden-size", default_ffn);
  // Megatron forces num_query_groups = heads unless --group-query-attention (reference §3.4).
  m.query_groups = r.Switch("--group-query-attention") ? r.Int("--num-query-groups", 1) : m.heads;
  m.kv_channels = r.Int("--kv-channels", m.heads > 0 ? m.hidden / m.heads : 0);
  m.seq_length = r.Int("--seq-length", 0);
  m.untied_embeddings = r.Switch("--untie-embeddings-and-output-weights");
  m.learned_positions = r.Str("--position-embedding-type", "learned_absolute") == "learned_absolute";
  // Without --vocab-size the tokenizer sets it; where its type does not say (the size is in a file
  // the simulated job cannot read), GPT-2's.
  m.vocab_unpadded =
      r.Int("--vocab-size",
            support::MegatronTokenizerVocab(r.Str("--tokenizer-type", "")).value_or(50257));
  m.experts = r.Int("--num-experts", 0);
  m.topk = r.Int("--moe-router-topk", 2);
  m.moe_ffn_hidden = r.Int("--moe-ffn-hidden-size", m.ffn_hidden);
  m.shared_expert_hidden = r.Int("--moe-shared-expert-intermediate-size", 0);
  std::string freq = r.Str("--moe-layer-freq", "1");
  bool pattern = !freq.empty() && (freq[0] == '(' || freq[0] == '[');
  m.moe_layer_freq = pattern ? 1 : std::max<int64_t>(1, r.Int("--moe-layer-freq", 1));
  m.moe_aux_loss_coeff = r.Double("--moe-aux-loss-coeff", 0.0);
  m.mtp_layers = std::max<int64_t>(0, r.Int("--mtp-num-layers", 0));
}

void ReadParallelism(FlagReader& r, SimSetup* s, int world) {
  Parallelism& p = s->par;
  p.world = world;
  p.tp = static_cast<int>(r.Int("--tensor-model-parallel-size", 1));
  p.pp = static_cast<int>(r.Int("--pipeline-model-parallel-size", 1));
  p.cp = static_cast<int>(r.Int("--context-parallel-size", 1));
  p.ep = static_cast<int>(r.Int("--expert-model-parallel-size", 1));
  p.etp = static_cast<int>(r.Int("--expert-tensor-parallel-size", p.tp));
  p.micro_batch = r.Int("--micro-batch-size", 0);
  int64_t model = std::max<int64_t>(1, int64_t{p.tp} * p.pp * p.cp);
  p.dp = static_cast<int>(std::max<int64_t>(1, world / model));
  p.global_batch = r.Int("--global-batch-size", p.micro_batch * p.dp);
  p.vpp = static_cast<int>(r.Int("--num-virtual-stages-per-pipeline-rank", 1));
  int64_t per_vp = r.Int("--num-layers-per-virtual-pipeline-stage", 0);
  p.layers_per_virtual_stage = per_vp;
  // Megatron counts the embedding and the loss as a layer each when told to place them.
  int64_t units = s->model.layers + (r.Switch("--account-for-embedding-in-pipeline-split") ? 1 : 0) +
                  (r.Switch("--account-for-loss-in-pipeline-split") ? 1 : 0);
  if (per_vp > 0 && p.pp > 0 && units % p.pp == 0 && (units / p.pp) % per_vp == 0) {
    p.vpp = static_cast<int>(units / p.pp / per_vp);
  }
  p.vpp = std::max(1, p.vpp);
}

}  // namespace

// Megatron's --pipeline-model-parallel-layout (pipeline_parallel_layer_layout.py): commas are
// cosmetic, "(group)*n" and then "x*n" unroll, '|' ends a virtual stage, and E, t, m, L name the
// embedding, a decoder layer, an MTP depth and the loss. Virtual stage i runs on pipeline rank
// i % PP.
std::optional<std::vector<std::string>> UnrollPipelineLayout(std::string text) {
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == ',' || c == ' '; }),
             text.end());
  // One pass of Megatron's unrolling: each unit `unit_at` finds at i (its text and where it ends)
  // is repeated n times when "*n" follows it, else copied as written.
  auto unroll = [](const std::string& in, auto unit_at) -> std::optional<std::string> {
    std::string out;
    for (size_t i = 0; i < in.size();) {
      auto [unit, end] = unit_at(in, i);
      size_t digits = end + 1;
      while (digits < in.size() && std::isdigit(static_cast<unsigned char>(in[digits]))) ++digits;
      if (end < in.size() && in[end] == '*' && unit.has_value()) {
        if (digits == end + 1) return std::nullopt;
        int64_t n = std::atoll(in.substr(end + 1, digits - end - 1).c_str());
        if (n > 100000) return std::nullopt;
        for (int64_t k = 0; k < n; ++k) out += *unit;
        i = digits;
      } else {
        out += in[i];
        ++i;
      }
    }
    return out;
  };
  // "(group)": the group's text; a character outside a group is no unit in the first pass.
  auto group_at = [](const std::string& in, size_t i) -> std::pair<std::optional<std::string>, size_t> {
    size_t close = in[i] == '(' ? in.find(')', i) : std::string::npos;
    if (close == std::string::npos) return {std::nullopt, i + 1};
    return {in.substr(i + 1, close - i - 1), close + 1};
  };
  auto char_at = [](const std::string& in, size_t i) -> std::pair<std::optional<std::string>, size_t> {
    return {std::string(1, in[i]), i + 1};
  };
  auto grouped = unroll(text, group_at);
  if (!grouped) return std::nullopt;
  auto flat = unroll(*grouped, char_at);
  if (!flat) return std::nullopt;
  std::vector<std::string> stages(1);
  for (char c : *flat) {
    if (c == '|') {
      stages.emplace_back();
    } else if (c == 'E' || c == 't' || c == 'm' || c == 'L') {
      stages.back() += c;
    } else {
      return std::nullopt;
    }
  }
  return stages;
}

namespace {

// Where each pipeline rank's layers are when the recipe places them: a layout, or an uneven
// split (--decoder-first/last-pipeline-num-layers, the rest spread over the middle ranks). A
// layout Megatron would refuse (stages not a multiple of PP, decoder layers not --num-layers)
// is left to the argument checks; the plan then keeps the even split.
void ReadPipelinePlacement(FlagReader& r, SimSetup* s) {
  Parallelism& p = s->par;
  const ModelShape& m = s->model;
  if (p.pp <= 1 || m.layers <= 0) return;
  std::vector<PipelineRankLoad> loads(static_cast<size_t>(p.pp));
  std::string layout = r.Str("--pipeline-model-parallel-layout", "");
  if (!layout.empty()) {
    auto stages = UnrollPipelineLayout(layout);
    if (!stages || stages->size() % static_cast<size_t>(p.pp) != 0) return;
    int64_t layer = 0;
    for (size_t i = 0; i < stages->size(); ++i) {
      PipelineRankLoad& load = loads[i % static_cast<size_t>(p.pp)];
      for (char c : (*stages)[i]) {
        if (c == 't') {
          load.moe_layers += m.IsMoeLayer(layer) ? 1 : 0;
          ++load.layers;
          ++layer;
        }
        load.mtp_layers += c == 'm' ? 1 : 0;
        load.embedding = load.embedding || c == 'E';
        load.loss = load.loss || c == 'L';
      }
    }
    if (layer != m.layers) return;
    p.vpp = static_cast<int>(stages->size() / static_cast<size_t>(p.pp));
    p.rank_loads = std::move(loads);
    return;
  }
  int64_t first = r.Int("--decoder-first-pipeline-num-layers", -1);
  int64_t last = r.Int("--decoder-last-pipeline-num-layers", -1);
  if (first < 0 && last < 0) {
    // --account-for-embedding/loss-in-pipeline-split count the embedding and the loss as one
    // layer each when splitting evenly: the first and last ranks run one decoder layer fewer.
    int64_t embedding = r.Switch("--account-for-embedding-in-pipeline-split") ? 1 : 0;
    int64_t loss = r.Switch("--account-for-loss-in-pipeline-split") ? 1 : 0;
    int64_t units = m.layers + embedding + loss;
    if (embedding + loss == 0 || units % p.pp != 0) return;
    first = units / p.pp - embedding;
    last = units / p.pp - loss;
  }
  int64_t middle_ranks = p.pp - (first >= 0 ? 1 : 0) - (last >= 0 ? 1 : 0);
  int64_t rest = m.layers - std::max<int64_t>(0, first) - std::max<int64_t>(0, last);
  if (rest < 0 || (middle_ranks == 0 && rest != 0) || (middle_ranks > 0 && rest % middle_ranks != 0)) return;
  int64_t layer = 0;
  for (int rank = 0; rank < p.pp; ++rank) {
    PipelineRankLoad& load = loads[static_cast<size_t>(rank)];
    load.layers = rank == 0 && first >= 0 ? first
                  : rank == p.pp - 1 && last >= 0 ? last
                                                  : rest / std::max<int64_t>(1, middle_ranks);
    for (int64_t k = 0; k < load.layers; ++k) load.moe_layers += m.IsMoeLayer(layer++) ? 1 : 0;
  }
  loads.front().embedding = true;
  loads.back().loss = true;
  loads.back().mtp_layers = m.mtp_layers;
  p.rank_loads = std::move(loads);
}

Recompute ReadRecompute(FlagReader& r) {
  std::string g = r.Str("--recompute-granularity", r.Switch("--recompute-activations") ? "selective" : "");
  if (g == "full") return Recompute::kFull;
  if (g == "selective") return Recompute::kSelective;
  return Recompute::kNone;
}

void ReadFeatures(FlagReader& r, SimSetup* s) {
  Features& f = s->feat;
  f.sequence_parallel = r.Switch("--sequence-parallel") && s->par.tp > 1;
  f.distributed_optimizer = r.Switch("--use-distributed-optimizer");
  f.fsdp = r.Switch("--use-megatron-fsdp") || r.Switch("--use-torch-fsdp2");
  // Megatron-FSDP gathers and reduce-scatters on every micro-batch (its no_sync only marks the
  // last one); torch FSDP2 under Megatron keeps its defaults unless told not to reshard.
  f.fsdp_reshard_after_forward =
      !(r.Switch("--use-torch-fsdp2") && r.Switch("--torch-fsdp2-no-reshard-after-forward"));
  f.fsdp_defer_grad_sync = false;
  f.overlap_grad_reduce = r.Switch("--overlap-grad-reduce");
  f.overlap_param_gather = r.Switch("--overlap-param-gather");
  f.tp_comm_overlap = r.Switch("--tp-comm-overlap");
  f.overlap_p2p = !r.Switch("--no-overlap-p2p-communication");
  f.fp8 = r.Switch("--fp8-format");
  f.fp8_param_gather = f.fp8 && r.Switch("--fp8-param-gather");
  f.fp16 = r.Switch("--fp16");
  f.grad_reduce_in_bf16 = r.Switch("--grad-reduce-in-bf16") ||
                          (f.fsdp && r.Str("--megatron-fsdp-grad-comm-dtype", "") == "bf16");
  std::string graph = r.Str("--cuda-graph-impl", "none");
  f.cuda_graphs = graph != "none" || r.Switch("--enable-cuda-graph") || r.Switch("--external-cuda-graph");
  std::string backend = r.Str("--attention-backend", "auto");
  f.flash_attention = backend != "unfused" && backend != "local" && r.Str("--transformer-impl", "transformer_engine") != "local";
  f.grouped_gemm = r.Switch("--moe-grouped-gemm");
  f.overlap_moe_comm = r.Switch("--overlap-moe-expert-parallel-comm");
  f.cross_entropy_fusion = r.Switch("--cross-entropy-loss-fusion");
  f.attention_dropout = r.Double("--attention-dropout", 0.1) > 0;
  std::string d = r.Str("--moe-token-dispatcher-type", "allgather");
  f.dispatcher = d == "alltoall" ? Dispatcher::kAlltoall
                 : d == "flex"   ? Dispatcher::kFlex
                                 : Dispatcher::kAllgather;
  f.recompute = ReadRecompute(r);
  f.recompute_method = r.Str("--recompute-method", "uniform") == "block" ? RecomputeMethod::kBlock
                                                                         : RecomputeMethod::kUniform;
  f.recompute_layers = static_cast<int>(r.Int("--recompute-num-layers", 0));
  f.cuda_graph_warmup_steps = static_cast<int>(r.Int("--cuda-graph-warmup-steps", 3));
}

// Megatron's list form of a per-layer pattern (--moe-layer-freq, --window-attn-skip-freq), which
// it evaluates as a Python expression: lists of 0/1, `*` repeats, `+` concatenates, parentheses
// group — "([0]*3+[1]*58)", "[1,1,1,0]*3", "([1]*5+[0]*1)*4". A small recursive-descent reader of
// that grammar; nullopt when the text is not one.
class LayerPatternReader {
 public:
  explicit LayerPatternReader(const std::string& text) : text_(text) {}

  std::optional<std::vector<int>> Read() {
    auto list = Sum();
    Skip();
    if (!list || pos_ != text_.size()) return std::nullopt;
    return list;
  }

 private:
  void Skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Take(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> Number() {
    Skip();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_ || pos_ - start > 6) return std::nullopt;
    return std::stoll(text_.substr(start, pos_ - start));
  }
  std::optional<std::vector<int>> Sum() {
    auto out = Product();
    while (out && Take('+')) {
      auto more = Product();
      if (!more) return std::nullopt;
      out->insert(out->end(), more->begin(), more->end());
    }
    return out;
  }
  std::optional<std::vector<int>> Product() {
    auto base = Atom();
    while (base && Take('*')) {
      auto times = Number();
      if (!times || base->size() * static_cast<size_t>(*times) > 100000) return std::nullopt;
      std::vector<int> repeated;
      for (int64_t i = 0; i < *times; ++i) repeated.insert(repeated.end(), base->begin(), base->end());
      base = std::move(repeated);
    }
    return base;
  }
  std::optional<std::vector<int>> Atom() {
    if (Take('(')) {
      auto inner = Sum();
      if (!inner || !Take(')')) return std::nullopt;
      return inner;
    }
    if (!Take('[')) return std::nullopt;
    std::vector<int> items;
    if (Take(']')) return items;
    do {
      auto n = Number();
      if (!n) return std::nullopt;
      items.push_back(static_cast<int>(*n));
    } while (Take(','));
    if (!Take(']')) return std::nullopt;
    return items;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

// Ones in a list-form layer pattern; -1 when the text is not one.
int64_t OnesInLayerPattern(const std::string& text) {
  if (text.empty() || (text[0] != '(' && text[0] != '[')) return -1;
  auto list = LayerPatternReader(text).Read();
  if (!list) return -1;
  return static_cast<int64_t>(std::count_if(list->begin(), list->end(), [](int v) { return v != 0; }));
}

// Sliding-window attention (megatron/core/transformer/utils.py is_layer_window_attention):
// --window-size "L,R" (-1: unbounded) windows every layer, unless --window-attn-skip-freq names
// the full-attention ones: an integer N makes every Nth layer (1-based) full, a list pattern marks
// the windowed layers with 1.
void ReadSlidingWindow(FlagReader& r, ModelShape* m) {
  std::string window = r.Str("--window-size", "");
  if (window.empty()) return;
  std::string left = window.substr(0, window.find(','));
  left.erase(std::remove_if(left.begin(), left.end(), [](char c) { return c == '(' || c == ' '; }),
             left.end());
  int64_t w = std::atoll(left.c_str());
  if (w <= 0) return;  // -1: an unbounded window is full attention
  m->attention_window = w;
  std::string skip = r.Str("--window-attn-skip-freq", "");
  int64_t listed = OnesInLayerPattern(skip);
  if (listed >= 0) {
    m->windowed_layers = std::min(m->layers, listed);
  } else if (!skip.empty()) {
    int64_t every = std::max<int64_t>(1, r.Int("--window-attn-skip-freq", 1));
    m->windowed_layers = m->layers - m->layers / every;
  } else {
    m->windowed_layers = m->layers;
  }
}

// The FP8/FP4 recipe, multi-latent attention, bias and MoE switches, in Megatron's spellings
// (megatron/core/transformer/transformer_config.py).
void ReadPrecisionAndMoe(FlagReader& r, SimSetup* s) {
  Features& f = s->feat;
  s->model.moe_layers_from_pattern = OnesInLayerPattern(r.Str("--moe-layer-freq", ""));
  ModelShape& m = s->model;
  ReadSlidingWindow(r, &m);
  m.mla = r.Switch("--multi-latent-attention");
  if (m.mla) {
    m.q_lora_rank = r.Int("--q-lora-rank", 0);
    m.kv_lora_rank = r.Int("--kv-lora-rank", 512);
    m.qk_head_dim = r.Int("--qk-head-dim", 128);
    m.qk_pos_emb_head_dim = r.Int("--qk-pos-emb-head-dim", 64);
    m.v_head_dim = r.Int("--v-head-dim", 128);
  }
  std::string recipe = r.Str("--fp8-recipe", "delayed");
  f.fp8_recipe = recipe == "tensorwise" ? Fp8Recipe::kTensorwise
                 : recipe == "blockwise" ? Fp8Recipe::kBlockwise
                 : recipe == "mxfp8"     ? Fp8Recipe::kMxfp8
                                         : Fp8Recipe::kDelayed;
  f.fp4 = r.Switch("--fp4-format");
  f.fp4_param_gather = f.fp4 && r.Switch("--fp4-param-gather");
  if (r.Switch("--first-last-layers-bf16") && f.LowPrecision()) {
    f.bf16_layers_at_start = static_cast<int>(r.Int("--num-layers-at-start-in-bf16", 1));
    f.bf16_layers_at_end = static_cast<int>(r.Int("--num-layers-at-end-in-bf16", 1));
  }
  f.add_bias_linear = !r.Switch("--disable-bias-linear");
  f.moe_shared_expert_overlap = r.Switch("--moe-shared-expert-overlap");
  f.moe_capacity_factor = r.Double("--moe-expert-capacity-factor", 0.0);
  f.moe_permute_fusion = r.Switch("--moe-permute-fusion");
  f.moe_force_balance = r.Switch("--moe-router-force-load-balancing");
  f.moe_pad_to_capacity = r.Switch("--moe-pad-expert-input-to-capacity") && f.moe_capacity_factor > 0;
  if (f.recompute == Recompute::kSelective) {
    std::string modules = r.Str("--recompute-modules", "core_attn");
    std::vector<std::string> names;
    size_t start = 0;
    while (start <= modules.size()) {
      size_t end = modules.find(' ', start);
      if (end == std::string::npos) end = modules.size();
      names.push_back(modules.substr(start, end - start));
      start = end + 1;
    }
    auto has = [&](const char* m) { return std::find(names.begin(), names.end(), m) != names.end(); };
    f.recompute_core_attn = has("core_attn");
    f.recompute_layernorm = has("layernorm");
    f.recompute_moe_act = has("moe_act");
    f.recompute_moe = has("moe");
    f.recompute_mlp = has("mlp");
  }
}

void ReadRun(FlagReader& r, SimSetup* s) {
  RunControl& c = s->run;
  c.train_iters = r.Int("--train-iters", 0);
  c.exit_interval = r.Int("--exit-interval", 0);
  c.log_interval = std::max<int64_t>(1, r.Int("--log-interval", 100));
  c.log_throughput = r.Switch("--log-throughput");
  c.distributed_timeout_min = r.Double("--distributed-timeout-minutes", 10);
  c.seed = r.Int("--seed", 1234);
  c.lr = r.Double("--lr", 0.0);
  c.min_lr = r.Double("--min-lr", 0.0);
  c.lr_warmup_iters = r.Int("--lr-warmup-iters", 0);
  c.lr_decay_style = r.Str("--lr-decay-style", "linear");
}

std::string JoinValues(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : " ") + v;
  return out;
}

}  // namespace

int64_t PaddedVocab(int64_t vocab, int64_t divisible_by, int tp) {
  int64_t multiple = std::max<int64_t>(1, divisible_by * std::max(1, tp));
  return (vocab + multiple - 1) / multiple * multiple;
}

Result<SimSetup> ReadSimSetup(const Recipe& recipe, int world) {
  SimSetup s;
  for (const auto& arg : recipe.args) s.flags[arg.flag] = JoinValues(arg.values);
  for (const auto& [k, v] : recipe.env) s.env[k] = v;
  for (const char* required : {"--num-layers", "--hidden-size", "--num-attention-heads"}) {
    if (!s.Has(required)) {
      return Status::InvalidArgument(std::string("megatron: the recipe has no ") + required +
                                     "; a dry run models Megatron-LM GPT recipes, which "
                                     "must give --num-layers, --hidden-size and "
                                     "--num-attention-heads");
    }
  }
  FlagReader reader(&s);
  ReadModel(reader, &s);
  ReadParallelism(reader, &s, world);
  ReadFeatures(reader, &s);
  ReadPrecisionAndMoe(reader, &s);
  ReadPipelinePlacement(reader, &s);
  ReadRun(reader, &s);
  int64_t padded = reader.Int("--padded-vocab-size", 0);
  s.model.vocab = padded > 0 ? padded
                             : PaddedVocab(s.model.vocab_unpadded,
                                           reader.Int("--make-vocab-size-divisible-by", 128), s.par.tp);
  return s;
}

bool IsThroughputOrLoggingFlag(const std::string& flag) {
  static const std::set<std::string> exact = {
      "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
      "--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
      "--context-parallel-size", "--expert-model-parallel-size", "--expert-tensor-parallel-size",
      "--sequence-parallel", "--micro-batch-size", "--use-distributed-optimizer",
      "--overlap-grad-reduce", "--overlap-param-gather", "--overlap-param-gather-with-optimizer-step",
      "--tp-comm-overlap", "--no-overlap-p2p-communication", "--distribute-saved-activations",
      "--enable-cuda-graph", "--external-cuda-graph", "--attention-backend", "--use-flash-attn",
      "--transformer-impl", "--moe-grouped-gemm", "--moe-token-dispatcher-type",
      "--moe-permute-fusion", "--moe-router-fusion", "--overlap-moe-expert-parallel-comm",
      "--moe-shared-expert-overlap", "--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl",
      "--exit-interval", "--exit-duration-in-mins", "--distributed-timeout-minutes",
      "--num-workers", "--use-tp-pp-dp-mapping", "--decoder-first-pipeline-num-layers",
      "--decoder-last-pipeline-num-layers", "--pipeline-model-parallel-layout",
      "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split", "--empty-unused-memory-level",
      "--defer-embedding-wgrad-compute", "--fp8-param-gather", "--num-distributed-optimizer-instances",
      "--no-gradient-accumulation-fusion", "--train-sync-interval", "--no-align-param-gather",
      "--no-align-grad-reduce", "--use-nccl-ub", "--use-sharp", "--high-priority-stream-groups",
      "--mlp-chunks-for-training", "--disable-jit-fuser", "--use-te-activation-func",
      "--use-cpu-initialization", "--microbatch-group-size-per-virtual-pipeline-stage"};
  static const char* const prefixes[] = {"--recompute-", "--cuda-graph-", "--manual-gc", "--log-",
                                         "--timing-log-", "--tensorboard", "--wandb-", "--save",
                                         "--eval-", "--ddp-", "--tp-comm-", "--moe-flex-",
                                         "--cpu-offloading", "--no-barrier"};
  if (exact.count(flag)) return true;
  if (flag == "--recompute-activations") return true;
  for (const char* p : prefixes) {
    if (flag.rfind(p, 0) == 0) return true;
  }
  // Kernel fusion switches (--no-masked-softmax-fusion, --no-rope-fusion, ...).
  return flag.rfind("--no-", 0) == 0 && flag.size() > 7 && flag.substr(flag.size() - 7) == "-fusion";
}

std::string ObjectiveKey(const std::map<std::string, std::string>& flags) {
  std::string key;
  for (const auto& [flag, value] : flags) {  // std::map: sorted, so canonical
    if (IsThroughputOrLoggingFlag(flag)) continue;
    key += flag + "=" + value + ";";
  }
  return key;
}

Result<sim::ParallelPlan> MegatronSimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                                 int world) {
  ATTUNE_ASSIGN_OR_RETURN(SimSetup setup, ReadSimSetup(recipe, world));
  setup.objective_key = ObjectiveKey(setup.flags);
  setup.refusal = CheckMegatronArguments(setup, cluster);
  return static_cast<sim::ParallelPlan>(setup);
}

}  // namespace attune::megatron
