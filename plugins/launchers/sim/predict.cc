#include "predict.h"

#include <cmath>
#include <optional>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "csv.h"
#include "memory_model.h"
#include "sim_mapping.h"

namespace attune::sim {
namespace {

std::string Cell(const CalibrationRow& row, const std::string& key) {
  auto it = row.find(key);
  return it == row.end() ? "" : it->second;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}
bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t IntCell(const CalibrationRow& row, const std::string& key, int64_t fallback) {
  std::string v = Cell(row, key);
  if (v.empty()) return fallback;
  try {
    return static_cast<int64_t>(std::llround(std::stod(v)));
  } catch (...) {
    return fallback;  // a non-numeric note in a numeric column: treat as not stated
  }
}

void Add(Recipe* r, const std::string& flag, const std::string& value = "") {
  Arg a{flag, {}};
  if (!value.empty()) a.values.push_back(value);
  r->args.push_back(a);
}
void Add(Recipe* r, const std::string& flag, int64_t value) { Add(r, flag, std::to_string(value)); }

// Software of 2021–22 (Megatron before FlashAttention was integrated; Megatron-DeepSpeed)
// computed the full score matrix with a fused softmax.
bool PredatesFlashAttention(const std::string& source) {
  for (const char* marker : {"SC21", "2205.05198", "MT-NLG", "BLOOM"}) {
    if (Contains(source, marker)) return true;
  }
  return false;
}

// Software before Korthikanti et al. 2022 (arXiv:2205.05198), which introduced sequence
// parallelism, ran TP without it: Megatron of SC21, and Megatron-DeepSpeed as MT-NLG and BLOOM
// used it. Rows whose seq_parallel cell is empty get SP only when their software had it.
bool PredatesSequenceParallel(const std::string& source) {
  for (const char* marker : {"SC21", "MT-NLG", "BLOOM"}) {
    if (Contains(source, marker)) return true;
  }
  return false;
}

// Dispatcher a row names (flex for DeepEP/HybridEP; allgather when said), alltoall otherwise.
std::string DispatcherOf(const CalibrationRow& row) {
  std::string text = Lower(Cell(row, "dispatcher") + " " + Cell(row, "notes"));
  if (Contains(text, "deepep") || Contains(text, "hybridep") || Contains(text, "flex")) return "flex";
  if (Contains(text, "allgather") || Contains(text, "all-gather dispatcher")) return "allgather";
  return "alltoall";
}

// MoE columns: experts, top-k, expert and shared-expert widths, ETP, the dense-layer pattern.
// Modern MoE models (Mixtral, DeepSeek, Qwen-MoE, GPT-OSS) have no linear biases, so a MoE row
// runs with --disable-bias-linear unless its notes say `add-bias-linear` (Megatron refuses bias
// in experts with ETP > 1).
void AddMoe(const CalibrationRow& row, Recipe* r, std::vector<std::string>* notes) {
  int64_t experts = IntCell(row, "moe_experts", 0);
  if (experts <= 0) return;
  Add(r, "--num-experts", experts);
  Add(r, "--moe-router-topk", IntCell(row, "moe_topk", 2));
  Add(r, "--moe-grouped-gemm");
  Add(r, "--moe-permute-fusion");
  std::string dispatcher = DispatcherOf(row);
  Add(r, "--moe-token-dispatcher-type", dispatcher);
  if (dispatcher == "alltoall" && Cell(row, "dispatcher").empty()) notes->push_back("dispatcher=alltoall");
  if (!Contains(Lower(Cell(row, "notes")), "add-bias-linear")) Add(r, "--disable-bias-linear");
  // Switches the notes name: benchmark runs with forced balanced routing, EP all-to-all overlap
  // (1F1B A2A overlap), CUDA graphs.
  std::string text = Lower(Cell(row, "notes"));
  if (Contains(text, "forced load balance") || Contains(text, "forced balance")) {
    Add(r, "--moe-router-force-load-balancing");
  }
  if (Contains(text, "a2a overlap") && IntCell(row, "ep", 1) > 1 && dispatcher != "allgather") {
    Add(r, "--overlap-moe-expert-parallel-comm");
  }
  int64_t fe = IntCell(row, "moe_ffn_hidden", 0);
  if (fe > 0) Add(r, "--moe-ffn-hidden-size", fe);
  int64_t shared = IntCell(row, "moe_shared_ffn_hidden", 0);
  if (shared > 0) {
    Add(r, "--moe-shared-expert-intermediate-size", shared);
    if (Contains(Lower(Cell(row, "notes")), "shared-expert-overlap")) Add(r, "--moe-shared-expert-overlap");
  }
  // Unstated ETP: 1, as Megatron's MoE README recommends for fine-grained MoE and the published
  // MoE recipes set it (Megatron's argparse default would be TP).
  Add(r, "--expert-tensor-parallel-size", IntCell(row, "etp", 1));
  if (Cell(row, "etp").empty() && IntCell(row, "tp", 1) > 1) notes->push_back("etp=1");
  // "3" or "first 3 dense" (DeepSeek-style leading dense layers) or "freq 2" (every 2nd layer).
  std::string pattern = Lower(Cell(row, "moe_layer_freq_or_dense_layers"));
  int64_t n = IntCell(row, "moe_layer_freq_or_dense_layers", 0);
  if (Contains(pattern, "freq") || Contains(pattern, "every")) {
    size_t digit = pattern.find_first_of("0123456789");
    if (digit != std::string::npos) Add(r, "--moe-layer-freq", std::to_string(std::stoll(pattern.substr(digit))));
  } else if (n > 0 || Contains(pattern, "dense")) {
    size_t digit = pattern.find_first_of("0123456789");
    int64_t dense = digit == std::string::npos ? 0 : std::stoll(pattern.substr(digit));
    int64_t layers = IntCell(row, "layers", 0);
    if (dense > 0 && dense < layers) {
      Add(r, "--moe-layer-freq", "([0]*" + std::to_string(dense) + "+[1]*" + std::to_string(layers - dense) + ")");
    }
  }
}

Status AddShape(const CalibrationRow& row, Recipe* r, std::vector<std::string>* notes) {
  int64_t layers = IntCell(row, "layers", 0), hidden = IntCell(row, "hidden", 0);
  int64_t heads = IntCell(row, "heads", 0), seq = IntCell(row, "seq_len", 0);
  if (layers <= 0 || hidden <= 0 || heads <= 0 || seq <= 0) {
    return Status::InvalidArgument("not modelled: layers, hidden, heads or seq_len not stated");
  }
  Add(r, "--num-layers", layers);
  Add(r, "--hidden-size", hidden);
  Add(r, "--num-attention-heads", heads);
  Add(r, "--seq-length", seq);
  if (int64_t mtp = IntCell(row, "mtp_layers", 0); mtp > 0) Add(r, "--mtp-num-layers", mtp);
  int64_t ffn = IntCell(row, "ffn_hidden", 0);
  bool moe = IntCell(row, "moe_experts", 0) > 0;
  if (ffn <= 0 && !moe) notes->push_back("ffn_hidden=4h");
  // Non-4h widths here are Llama SwiGLU; MoE models whose rows give no dense width (all layers
  // MoE: Qwen3-MoE, gpt-oss) have gated experts too.
  if ((ffn > 0 && ffn != 4 * hidden) || (ffn <= 0 && moe)) Add(r, "--swiglu");
  Add(r, "--ffn-hidden-size", ffn > 0 ? ffn : 4 * hidden);
  if (int64_t head_dim = IntCell(row, "head_dim", 0); head_dim > 0) Add(r, "--kv-channels", head_dim);
  if (int64_t window = IntCell(row, "attention_window", 0); window > 0) {
    Add(r, "--window-size", std::to_string(window) + ",0");
    if (int64_t every = IntCell(row, "window_attn_skip_freq", 0); every > 0) {
      Add(r, "--window-attn-skip-freq", every);
    }
  }
  std::string attention = Lower(Cell(row, "attention"));
  if (Contains(attention, "mla") || Contains(attention, "latent")) {
    // The rows give no MLA ranks: DeepSeek-V3's (q 1536, kv 512, heads 128+64 / 128).
    Add(r, "--multi-latent-attention");
    Add(r, "--q-lora-rank", 1536);
    Add(r, "--kv-lora-rank", 512);
    Add(r, "--qk-head-dim", 128);
    Add(r, "--qk-pos-emb-head-dim", 64);
    Add(r, "--v-head-dim", 128);
    notes->push_back("MLA ranks of DeepSeek-V3");
  }
  int64_t kv = IntCell(row, "kv_heads", heads);
  if (kv != heads) {
    Add(r, "--group-query-attention");
    Add(r, "--num-query-groups", kv);
  }
  int64_t vocab = IntCell(row, "vocab", 0);
  if (vocab <= 0) notes->push_back("vocab=51200 (GPT-2 BPE)");
  Add(r, "--vocab-size", vocab > 0 ? vocab : 51200);
  if (Contains(Lower(Cell(row, "model")), "llama")) Add(r, "--untie-embeddings-and-output-weights");
  AddMoe(row, r, notes);
  return Status::Ok();
}

Status AddParallelism(const CalibrationRow& row, Recipe* r, std::vector<std::string>* notes) {
  if (Cell(row, "tp").empty() || Cell(row, "pp").empty()) {
    return Status::InvalidArgument("not modelled: tp/pp not stated");
  }
  int64_t tp = IntCell(row, "tp", 1), pp = IntCell(row, "pp", 1);
  Add(r, "--tensor-model-parallel-size", tp);
  Add(r, "--pipeline-model-parallel-size", pp);
  Add(r, "--context-parallel-size", IntCell(row, "cp", 1));
  Add(r, "--expert-model-parallel-size", IntCell(row, "ep", 1));
  if (Cell(row, "gbs").empty()) return Status::InvalidArgument("not modelled: gbs not stated");
  Add(r, "--global-batch-size", IntCell(row, "gbs", 1));
  int64_t layers = IntCell(row, "layers", 0);
  // A stated pipeline layout places the layers (and says how many virtual stages there are).
  if (!Cell(row, "pp_layout").empty()) {
    Add(r, "--pipeline-model-parallel-layout", Cell(row, "pp_layout"));
  } else if (pp > 1 && layers % pp != 0) {
    // The balanced uneven split a tuned run would use: ⌈layers/PP⌉ on each middle stage, the rest
    // shared by the first and last (the last, which also computes the loss, takes the smaller half).
    notes->push_back("uneven pipeline split");
    int64_t middle = (layers + pp - 1) / pp;
    int64_t rest = layers - (pp - 2) * middle;
    if (rest < 0) {
      Add(r, "--decoder-first-pipeline-num-layers", layers - (pp - 1) * (layers / pp));
    } else {
      Add(r, "--decoder-first-pipeline-num-layers", rest - rest / 2);
      Add(r, "--decoder-last-pipeline-num-layers", rest / 2);
    }
  }
  return Status::Ok();
}

// The low-precision recipe of a row: `precision` (BF16, FP8, FP8-CS, "FP8 (blockwise)", MXFP8,
// NVFP4) and an optional `fp8_recipe` column. A bare "FP8" takes Megatron's default (delayed
// scaling) before Blackwell and MXFP8 on Blackwell, whose tensor cores scale blocks natively.
void AddPrecision(const CalibrationRow& row, const GpuSpec& gpu, Recipe* r, std::vector<std::string>* notes) {
  std::string precision = Lower(Cell(row, "precision"));
  std::string recipe = Lower(Cell(row, "fp8_recipe"));
  Add(r, "--bf16");
  if (Contains(precision, "fp4")) {
    Add(r, "--fp4-format", "e2m1");
    Add(r, "--fp4-recipe", "nvfp4");
    return;
  }
  if (!Contains(precision, "fp8")) return;
  std::string text = precision + " " + recipe;
  std::string chosen;
  if (Contains(text, "mxfp8")) chosen = "mxfp8";
  else if (Contains(text, "block")) chosen = "blockwise";
  else if (Contains(text, "cs") || Contains(text, "current") || Contains(text, "tensorwise")) chosen = "tensorwise";
  else if (Contains(text, "delayed") || Contains(text, "ds")) chosen = "delayed";
  else {
    chosen = gpu.compute_capability_major >= 10 ? "mxfp8" : "delayed";
    notes->push_back("fp8_recipe=" + chosen);
  }
  Add(r, "--fp8-format", chosen == "mxfp8" || chosen == "blockwise" ? "e4m3" : "hybrid");
  Add(r, "--fp8-recipe", chosen);
  Add(r, "--fp8-param-gather");
  notes->push_back("fp8-param-gather");
}

// Whether a row ran fully sharded data parallelism (Megatron-FSDP or torch FSDP2): an `fsdp`
// column ("1", "yes", "on", "true"; "0", "no", "off", "false", "/" or "-" say it did not), or,
// where the table has no such column, a note that says "FSDP on", "FSDP: 1", "FSDP=yes",
// "Megatron-FSDP" or "FSDP2". A bare "FSDP" is not enough: tables print "FSDP /" for "not used".
bool FsdpStated(const CalibrationRow& row) {
  auto truthy = [](std::string v) {
    v.erase(0, v.find_first_not_of(" :="));
    for (const char* yes : {"1", "yes", "on", "true", "y"}) {
      if (v == yes || StartsWith(v, std::string(yes) + " ") ||
          StartsWith(v, std::string(yes) + ";") || StartsWith(v, std::string(yes) + ",")) {
        return true;
      }
    }
    return false;
  };
  std::string cell = Lower(Cell(row, "fsdp"));
  if (!cell.empty()) return truthy(cell);
  std::string text = Lower(Cell(row, "notes"));
  if (Contains(text, "megatron-fsdp") || Contains(text, "megatron fsdp") ||
      Contains(text, "fsdp2")) {
    return true;
  }
  for (size_t at = text.find("fsdp"); at != std::string::npos; at = text.find("fsdp", at + 4)) {
    if (truthy(text.substr(at + 4))) return true;
  }
  return false;
}

void AddFeatures(const CalibrationRow& row, Recipe* r, std::vector<std::string>* notes) {
  std::string sp = Lower(Cell(row, "seq_parallel"));
  if (StartsWith(sp, "yes") ||
      (sp.empty() && IntCell(row, "tp", 1) > 1 && !PredatesSequenceParallel(Cell(row, "source")))) {
    Add(r, "--sequence-parallel");
    if (sp.empty()) notes->push_back("sequence_parallel");
  }
  std::string dist = Lower(Cell(row, "dist_optimizer"));
  bool dist_opt = !StartsWith(dist, "no");
  if (dist.empty()) notes->push_back("distributed_optimizer");
  Add(r, "--overlap-grad-reduce");
  if (FsdpStated(row)) {
    // Fully sharded: weights, gradients and optimizer state in 1/DP slices, gathered per layer.
    Add(r, "--use-megatron-fsdp");
    notes->push_back("fsdp");
  }
  if (dist_opt) {
    Add(r, "--use-distributed-optimizer");
    Add(r, "--overlap-param-gather");
  }
  if (Contains(Cell(row, "notes"), "tp-comm-overlap") && IntCell(row, "tp", 1) > 1) {
    Add(r, "--tp-comm-overlap");
  }
  if (Contains(Lower(Cell(row, "notes")), "cuda graph")) Add(r, "--cuda-graph-impl", "transformer_engine");
  if (PredatesFlashAttention(Cell(row, "source"))) {
    Add(r, "--attention-backend", "unfused");
    notes->push_back("unfused attention (2021-22 software)");
  }
}

// Megatron's --recompute-modules named in a row's recompute cell ("selective: norm, act",
// "selective: layernorm, moe"); "" when it names none (Megatron's default, core_attn).
std::string RecomputeModules(const CalibrationRow& row) {
  std::string rc = Lower(Cell(row, "recompute"));
  size_t colon = rc.find(':');
  if (colon == std::string::npos) return "";
  std::string list = rc.substr(colon + 1) + ",";
  std::string out;
  size_t start = 0;
  for (size_t comma = list.find(','); comma != std::string::npos; comma = list.find(',', start)) {
    std::string item = list.substr(start, comma - start);
    start = comma + 1;
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    std::string module = item == "norm" || item == "layernorm" ? "layernorm"
                         : item == "act" || item == "moe_act"  ? "moe_act"
                         : item == "attn" || item == "core_attn" ? "core_attn"
                         : item == "moe" || item == "mlp" || item == "shared_experts" ? item
                                                                                      : "";
    if (!module.empty()) out += (out.empty() ? "" : " ") + module;
  }
  return out;
}

void AddRecompute(Recipe* r, const std::string& choice, const std::string& modules) {
  if (choice == "full") {
    Add(r, "--recompute-granularity", "full");
    Add(r, "--recompute-method", "uniform");
    Add(r, "--recompute-num-layers", 1);
  } else if (const std::string block = "full-block-"; StartsWith(choice, block)) {
    // Full recompute of only the first N layers of each virtual stage: what a tuned run that
    // needs a little memory uses.
    Add(r, "--recompute-granularity", "full");
    Add(r, "--recompute-method", "block");
    Add(r, "--recompute-num-layers", std::stoll(choice.substr(block.size())));
  } else if (choice == "selective") {
    Add(r, "--recompute-granularity", "selective");
    if (!modules.empty()) Add(r, "--recompute-modules", modules);
  }
}

ClusterSpec RowCluster(const CalibrationRow& row, const GpuSpec& gpu, int world) {
  ClusterSpec c = DefaultCluster(gpu, world);
  // Jean Zay's A100 nodes have 4 × 100 Gb/s Omni-Path for 8 GPUs.
  if (Contains(Cell(row, "gpu"), "Omni-Path")) c.inter_node_gbit_s = 50;
  return c;
}


// Settings a source leaves unstated: micro-batch size 1 (Megatron's examples); recompute and the
// interleaving depth a source says it used take the value the model finds fastest among those
// Megatron accepts and that fit (published numbers come from tuned runs).
struct Candidate {
  TrainingSetup setup;
  std::vector<std::string> notes;
  double step_s = 0;
};

std::vector<int64_t> Choices(const CalibrationRow& row, const char* key, std::vector<int64_t> unstated) {
  if (!Cell(row, key).empty()) return {IntCell(row, key, 1)};
  return unstated;
}

std::vector<std::string> RecomputeChoices(const CalibrationRow& row) {
  std::string rc = Lower(Cell(row, "recompute"));
  if (StartsWith(rc, "full")) return {"full"};
  if (StartsWith(rc, "selective")) return {"selective"};
  if (StartsWith(rc, "none")) return {"none"};
  return {"none", "selective", "full-block-1", "full-block-2", "full-block-4", "full"};
}

Result<Candidate> BestCandidate(const CalibrationRow& row, const Recipe& base, const ClusterSpec& cluster,
                                int world) {
  bool interleaved = Contains(Lower(Cell(row, "notes")), "interleaved") && IntCell(row, "pp", 1) > 1;
  std::vector<int64_t> vpps = Choices(row, "vpp", interleaved ? std::vector<int64_t>{2, 3, 4, 6, 8}
                                                              : std::vector<int64_t>{1});
  std::optional<Candidate> best;
  std::string refusal;
  for (int64_t mbs : Choices(row, "mbs", {1})) {
    for (int64_t vpp : vpps) {
      for (const auto& rc : RecomputeChoices(row)) {
        Recipe r = base;
        Add(&r, "--micro-batch-size", mbs);
        if (vpp > 1 && Cell(row, "pp_layout").empty()) Add(&r, "--num-virtual-stages-per-pipeline-rank", vpp);
        AddRecompute(&r, rc, RecomputeModules(row));
        ATTUNE_ASSIGN_OR_RETURN(TrainingSetup setup,
                                megatron::MegatronSimulationPlan(r, ToClusterInfo(cluster), world));
        if (setup.refusal) {
          if (refusal.empty()) refusal = setup.refusal->message;
          continue;
        }
        bool fits = EstimateMemory(setup, cluster).fits;
        double step = EstimateStep(setup, cluster).step_s * (fits ? 1.0 : 1e6);
        if (best && best->step_s <= step) continue;
        Candidate c{setup, {}, step};
        if (Cell(row, "mbs").empty()) c.notes.push_back("micro_batch=" + std::to_string(mbs));
        if (Cell(row, "vpp").empty() && interleaved) c.notes.push_back("vpp=" + std::to_string(vpp));
        if (RecomputeChoices(row).size() > 1) c.notes.push_back("recompute=" + rc);
        best = std::move(c);
      }
    }
  }
  if (!best) return Status::InvalidArgument("megatron would refuse: " + refusal);
  return *std::move(best);
}

// Rows whose network or software the model does not represent, said plainly rather than scored
// against a different computation: linear or Mamba layers, sliding windows of unstated size, and
// frameworks other than Megatron-Core based ones
// (their schedules, kernels and overlaps differ; MT-NLG's Megatron-DeepSpeed is kept as before).
Status CheckRepresentable(const CalibrationRow& row) {
  std::string attention = Lower(Cell(row, "attention"));
  bool window_stated = IntCell(row, "attention_window", 0) > 0;
  for (const char* other : {"sliding", "linear", "mamba", "hybrid"}) {
    if (window_stated && std::string(other) == "sliding") continue;
    if (Contains(attention, other)) {
      return Status::InvalidArgument("not modelled: attention '" + Cell(row, "attention") +
                                     "' (only full softmax attention is)");
    }
  }
  std::string framework = Lower(Cell(row, "framework"));
  if (framework.empty()) return Status::Ok();
  for (const char* megatron_like : {"megatron", "nemo", "mcore", "m-core"}) {
    if (Contains(framework, megatron_like)) return Status::Ok();
  }
  return Status::InvalidArgument("not modelled: framework '" + Cell(row, "framework") +
                                 "' is not Megatron-Core based");
}

}  // namespace

Result<RowModel> ModelFromCalibrationRow(const CalibrationRow& row) {
  if (Contains(Cell(row, "model"), "(MegaScale)")) {
    return Status::InvalidArgument(
        "not modelled: MegaScale's own system (parallel blocks, sliding-window attention, LAMB)");
  }
  ATTUNE_RETURN_IF_ERROR(CheckRepresentable(row));
  auto gpu = FindGpu(Cell(row, "gpu"));
  if (!gpu) return Status::InvalidArgument("not modelled: unknown GPU '" + Cell(row, "gpu") + "'");
  int world = static_cast<int>(IntCell(row, "num_gpus", 0));
  if (world <= 0) return Status::InvalidArgument("not modelled: num_gpus not stated");
  RowModel out;
  Recipe recipe;
  recipe.stack = "megatron";
  ATTUNE_RETURN_IF_ERROR(AddShape(row, &recipe, &out.assumptions));
  ATTUNE_RETURN_IF_ERROR(AddParallelism(row, &recipe, &out.assumptions));
  AddPrecision(row, *gpu, &recipe, &out.assumptions);
  AddFeatures(row, &recipe, &out.assumptions);
  recipe.env.push_back({"CUDA_DEVICE_MAX_CONNECTIONS", "1"});
  out.cluster = RowCluster(row, *gpu, world);
  ATTUNE_ASSIGN_OR_RETURN(Candidate best, BestCandidate(row, recipe, out.cluster, world));
  out.setup = std::move(best.setup);
  for (auto& note : best.notes) out.assumptions.push_back(std::move(note));
  return out;
}

Prediction PredictRow(int index, const CalibrationRow& row, const ModelFactors& factors) {
  Prediction p;
  p.row = index;
  auto model = ModelFromCalibrationRow(row);
  if (!model.ok()) {
    p.status = model.status().message();
    return p;
  }
  StepBreakdown step = EstimateStep(model->setup, model->cluster, factors);
  MemoryEstimate mem = EstimateMemory(model->setup, model->cluster);
  p.step_time_s = step.step_s;
  p.tokens_per_s_per_gpu = step.tokens_per_s_per_gpu;
  p.tflops_per_gpu = step.tflops_per_gpu;
  p.memory_gib = mem.PeakGib();
  if (!mem.fits) {
    std::ostringstream note;
    note << std::fixed << std::setprecision(1) << "exceeds memory (" << p.memory_gib << " of "
         << model->cluster.gpu.memory_gib << " GiB)";
    model->assumptions.push_back(note.str());
  }
  for (const auto& a : model->assumptions) p.assumptions += (p.assumptions.empty() ? "" : "; ") + a;
  return p;
}

Result<std::vector<Prediction>> PredictCsv(const std::string& csv_text, const ModelFactors& factors) {
  ATTUNE_ASSIGN_OR_RETURN(CsvTable table, ParseCsvTable(csv_text));
  std::vector<Prediction> out;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    out.push_back(PredictRow(static_cast<int>(i), table.rows[i], factors));
  }
  return out;
}

void WritePredictionCsv(const std::vector<Prediction>& predictions, std::ostream& out) {
  out << "row,predicted_step_time_s,predicted_tokens_per_sec_per_gpu,predicted_tflops_per_gpu,"
         "predicted_memory_gib,status,assumptions\n";
  for (const auto& p : predictions) {
    out << p.row << ',';
    if (p.ok()) {
      out << std::setprecision(6) << p.step_time_s << ',' << p.tokens_per_s_per_gpu << ','
          << p.tflops_per_gpu << ',' << p.memory_gib << ',';
    } else {
      out << ",,,,";
    }
    out << CsvField(p.status) << ',' << CsvField(p.assumptions) << '\n';
  }
}

constexpr const char* kPredictHelp =
    "usage: attune sim predict --csv FILE [-o OUT]\n"
    "\n"
    "Predicts step time, tokens/s and TFLOP/s per GPU and peak memory for every row of a\n"
    "calibration CSV (the columns of ../shared/calibration/published_throughput.csv, plus the\n"
    "optional ones tools/bench/sim_accuracy/data/README.md lists: etp, moe_ffn_hidden,\n"
    "moe_shared_ffn_hidden, moe_layer_freq_or_dense_layers, attention, head_dim,\n"
    "attention_window, window_attn_skip_freq, fp8_recipe, framework, mtp_layers, pp_layout,\n"
    "fsdp). A row runs fully sharded (Megatron-FSDP) when its fsdp cell says 1/yes/on or, without\n"
    "that column, its notes say \"FSDP on\", \"FSDP: 1\", \"Megatron-FSDP\" or \"FSDP2\".\n"
    "Writes one line per input row (row, predicted_step_time_s,\n"
    "predicted_tokens_per_sec_per_gpu, predicted_tflops_per_gpu, predicted_memory_gib, status,\n"
    "assumptions) to OUT, or to standard output. A row the model does not run says why in\n"
    "`status`; the settings a row leaves unstated and the model chose are in `assumptions`\n"
    "(docs/sim.md, \"Accuracy\").\n";

int RunPredictCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string csv_path, out_path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      out << kPredictHelp;
      return 0;
    }
    if ((args[i] == "--csv" || args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      (args[i] == "--csv" ? csv_path : out_path) = args[i + 1];
      ++i;
    } else {
      err << "usage: attune sim predict --csv FILE [-o OUT]\n(unexpected argument '" << args[i]
          << "')\n";
      return 2;
    }
  }
  if (csv_path.empty()) {
    err << "usage: attune sim predict --csv FILE [-o OUT] (--csv is required)\n";
    return 2;
  }
  std::ifstream in(csv_path, std::ios::binary);
  if (!in) {
    err << "attune sim predict: cannot read '" << csv_path << "' (check the path)\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto predictions = PredictCsv(text.str());
  if (!predictions.ok()) {
    err << "attune sim predict: " << csv_path << ": " << predictions.status().message() << "\n";
    return 1;
  }
  if (out_path.empty()) {
    WritePredictionCsv(*predictions, out);
    return 0;
  }
  std::ofstream file(out_path, std::ios::binary | std::ios::trunc);
  WritePredictionCsv(*predictions, file);
  if (!file) {
    err << "attune sim predict: cannot write '" << out_path << "'\n";
    return 1;
  }
  return 0;
}

}  // namespace attune::sim
