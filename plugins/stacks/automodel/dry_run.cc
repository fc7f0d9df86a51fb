#include "dry_run.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "attune/support/printf.h"
#include "attune/support/torch_text.h"
#include "config_view.h"

namespace attune::automodel {
namespace {

namespace fs = std::filesystem;

Result<nlohmann::json> ReadJsonFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(path.string() + " is not a JSON object (a checkpoint's config.json)");
  }
  return j;
}

// Hugging Face hub caches, in the order huggingface_hub consults them.
std::vector<fs::path> HubCaches() {
  std::vector<fs::path> out;
  if (const char* cache = std::getenv("HF_HUB_CACHE"); cache && *cache) out.emplace_back(cache);
  if (const char* home = std::getenv("HF_HOME"); home && *home) out.push_back(fs::path(home) / "hub");
  if (const char* home = std::getenv("HOME"); home && *home) {
    out.push_back(fs::path(home) / ".cache" / "huggingface" / "hub");
  }
  return out;
}

// models--org--name/snapshots/<revision>/config.json, the first revision in name order.
std::optional<fs::path> CachedConfig(const fs::path& cache, const std::string& name) {
  std::string folder = "models--" + name;
  for (size_t at = folder.find('/'); at != std::string::npos; at = folder.find('/', at + 2)) {
    folder.replace(at, 1, "--");
  }
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(cache / folder / "snapshots", ec)) {
    if (fs::exists(entry.path() / "config.json", ec)) found.push_back(entry.path() / "config.json");
  }
  if (found.empty()) return std::nullopt;
  std::sort(found.begin(), found.end());
  return found.front();
}

int64_t Field(const nlohmann::json& c, std::initializer_list<const char*> names, int64_t fallback) {
  for (const char* name : names) {
    auto it = c.find(name);
    if (it != c.end() && it->is_number()) return it->get<int64_t>();
  }
  return fallback;
}

// Sliding-window attention as Hugging Face configs say it: `sliding_window` (tokens; null or
// absent: none), switched off by `use_sliding_window: false` (Qwen2/3), on which layers by
// `layer_types` ("sliding_attention" / "full_attention"), `sliding_window_pattern` (Gemma 3: every
// Nth layer full) or Gemma 2's alternation; otherwise every layer (Mistral).
void ReadSlidingWindow(const nlohmann::json& c, sim::ModelShape* m) {
  int64_t window = Field(c, {"sliding_window"}, 0);
  if (window <= 0) return;
  if (auto use = c.find("use_sliding_window"); use != c.end() && use->is_boolean() && !use->get<bool>()) return;
  m->attention_window = window;
  if (auto types = c.find("layer_types"); types != c.end() && types->is_array()) {
    int64_t windowed = 0;
    for (const auto& t : *types) windowed += t.is_string() && t.get<std::string>() == "sliding_attention";
    m->windowed_layers = std::min(m->layers, windowed);
    return;
  }
  int64_t every = Field(c, {"sliding_window_pattern"}, 0);
  if (every <= 0 && c.value("model_type", std::string()) == "gemma2") every = 2;
  m->windowed_layers = every > 0 ? m->layers - m->layers / every : m->layers;
}

std::string Dotted(const std::string& key) {
  if (key.rfind("config:", 0) == 0) return key.substr(7);
  if (key.rfind("--", 0) == 0) return key.substr(2);
  return key;
}

// Every effective setting that defines the training objective: the config and the overrides,
// without the lever catalog's keys (throughput settings) and the neutral (logging, checkpointing)
// keys. Overrides win over the config, as in ConfigView.
std::string ObjectiveKey(const Recipe& recipe, const Knowledge& knowledge) {
  std::map<std::string, std::string> settings;
  for (const auto& key : Keys(recipe)) {
    if (key.rfind("config:", 0) != 0 && key.rfind("--", 0) != 0) continue;
    std::string dotted = Dotted(key);
    if (knowledge.FindLever(dotted)) continue;
    bool neutral = std::any_of(knowledge.neutral.begin(), knowledge.neutral.end(),
                               [&](const std::string& p) { return KeyMatches(p, dotted); });
    if (neutral) continue;
    auto value = GetValue(recipe, key);
    if (!value || (!value->empty() && value->front() == '{')) continue;  // a section, not a value
    if (key.rfind("--", 0) == 0 || !settings.count(dotted)) settings[dotted] = *value;
  }
  std::string out;
  for (const auto& [k, v] : settings) out += k + "=" + v + ";";
  return out;
}

std::string StripRuleId(const std::string& message) {
  if (message.size() > 2 && message.front() == '[') {
    size_t close = message.find("] ");
    if (close != std::string::npos) return message.substr(close + 2);
  }
  return message;
}

// A scalar override as the config file would hold it: numbers and booleans typed, the rest text.
nlohmann::json TypedValue(const std::string& text) {
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_number()) return parsed;
  return text;
}

bool OneOf(const std::string& key, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* k) { return key == k; });
}

bool IsShapeField(const std::string& key) {
  return OneOf(key, {"num_hidden_layers", "n_layer", "num_layers", "hidden_size", "n_embd",
                     "d_model", "num_attention_heads", "n_head"});
}

// Keys of `model.config` that name the checkpoint or how to load it, not a config.json field.
bool IsLoadingKey(const std::string& key) {
  return key.empty() || key[0] == '_' ||
         OneOf(key, {"pretrained_model_name_or_path", "name_or_path", "trust_remote_code"});
}

// The model section's config.json fields that the recipe writes itself: the scalar entries of
// `model.config` (keyword arguments of AutoConfig.from_pretrained override the checkpoint's
// fields; a config written out in full is all of them) and, for a builder that takes the fields
// at model level (build_gpt2_model(n_layer=…, n_embd=…)), of `model` when it names no checkpoint.
// Command-line overrides (--model.config.num_hidden_layers 2) win, as in ConfigView.
nlohmann::json RecipeModelFields(const Recipe& recipe, bool model_level) {
  auto scalar_fields = [&](const nlohmann::json& section, nlohmann::json* out) {
    if (!section.is_object()) return;
    for (const auto& [key, value] : section.items()) {
      if (IsLoadingKey(key) || value.is_object() || value.is_array() || value.is_null()) continue;
      (*out)[key] = value;
    }
  };
  nlohmann::json fields = nlohmann::json::object();
  const nlohmann::json model =
      recipe.config.is_object() ? recipe.config.value("model", nlohmann::json()) : nlohmann::json();
  if (model_level) scalar_fields(model, &fields);
  if (model.is_object()) scalar_fields(model.value("config", nlohmann::json()), &fields);
  std::vector<std::string> prefixes = {"--model.config."};
  if (model_level) prefixes.push_back("--model.");
  for (const std::string& prefix : prefixes) {
    for (const auto& arg : recipe.args) {
      if (arg.flag.rfind(prefix, 0) != 0 || arg.values.size() != 1) continue;
      std::string key = arg.flag.substr(prefix.size());
      if (key.find('.') != std::string::npos || IsLoadingKey(key)) continue;
      fields[key] = TypedValue(arg.values.front());
    }
  }
  return fields;
}

// Tokens per sequence of a fixed-length dataset: `dataset.seq_length` (Megatron-style and
// AutoModel's pretraining datasets), `dataset.seq_len` (AutoModel's MockIterableDataset, which its
// benchmark configs use), `dataset.mean_len` with `std_len: 0` (the mock unpacked dataset at one
// length), or the packing size. 0 when the dataset's lengths vary (SQuAD, HellaSwag, chat data
// without packing): each batch is as long as its longest sample, which the recipe cannot say.
int64_t FixedSequenceLength(const ConfigView& view) {
  for (const char* key : {"dataset.seq_length", "dataset.seq_len"}) {
    if (int64_t seq = view.GetInt(key, 0); seq > 0) return seq;
  }
  if (view.GetInt("dataset.std_len", -1) == 0) {
    if (int64_t seq = view.GetInt("dataset.mean_len", 0); seq > 0) return seq;
  }
  return std::max<int64_t>(0, view.GetInt("packed_sequence.packed_sequence_size", 0));
}

// Whether the model trains with BF16 (or FP16) parameters, gradients and optimizer state: the
// dtype it is built in (`model.torch_dtype`; "auto" is BF16 for a model built from a config, the
// checkpoint's `torch_dtype` for from_pretrained, BF16 when it names none). FSDP2's mixed
// precision computes in BF16 but keeps the sharded parameters, their gradients and Adam's moments
// in that dtype.
bool HalfPrecisionState(const ConfigView& view, const nlohmann::json& config) {
  std::string dtype = view.Get("model.torch_dtype").value_or("auto");
  const bool from_config = view.Get("model._target_").value_or("").ends_with("from_config");
  if (dtype == "auto" && !from_config) {
    for (const char* key : {"torch_dtype", "dtype"}) {
      auto it = config.find(key);
      if (it != config.end() && it->is_string()) {
        dtype = it->get<std::string>();
        break;
      }
    }
  }
  if (dtype.rfind("torch.", 0) == 0) dtype = dtype.substr(6);
  return OneOf(dtype, {"auto", "bf16", "bfloat16", "float16", "fp16", "half"});
}

}  // namespace

Result<nlohmann::json> FindModelConfig(const std::string& name, const Knowledge& knowledge) {
  std::error_code ec;
  if (!name.empty() && fs::is_directory(name, ec)) {
    if (fs::exists(fs::path(name) / "config.json", ec)) return ReadJsonFile(fs::path(name) / "config.json");
  }
  std::vector<fs::path> caches = HubCaches();
  for (const auto& cache : caches) {
    if (auto path = CachedConfig(cache, name)) return ReadJsonFile(*path);
  }
  auto known = knowledge.models.find(name);
  if (known != knowledge.models.end()) return known->second;
  std::string looked;
  for (const auto& cache : caches) looked += (looked.empty() ? "" : ", ") + cache.string();
  return Status::NotFound(
      "the shape of checkpoint '" + name + "' is unknown: no config.json in that path, none in the "
      "Hugging Face cache (" + (looked.empty() ? std::string("no cache directory") : looked) +
      ") and no entry in stacks/automodel/models.yaml; download its config.json (huggingface-cli "
      "download " + name + " config.json) or add its config.json fields to models.yaml");
}

Result<sim::ModelShape> ShapeFromModelConfig(const nlohmann::json& c, int64_t seq_length) {
  sim::ModelShape m;
  m.layers = Field(c, {"num_hidden_layers", "n_layer", "num_layers"}, 0);
  m.hidden = Field(c, {"hidden_size", "n_embd", "d_model"}, 0);
  m.heads = Field(c, {"num_attention_heads", "n_head"}, 0);
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0) {
    return Status::InvalidArgument("the checkpoint's config.json gives no num_hidden_layers, "
                                   "hidden_size or num_attention_heads");
  }
  m.query_groups = Field(c, {"num_key_value_heads"}, m.heads);
  m.kv_channels = Field(c, {"head_dim"}, m.hidden / m.heads);
  m.ffn_hidden = Field(c, {"intermediate_size", "n_inner", "ffn_dim"}, 4 * m.hidden);
  // GPT-2's field names (n_embd, n_layer) come with its defaults (transformers' GPT2Config): a GELU
  // MLP and tied embeddings; the other families' configs default to SiLU-gated MLPs and untied.
  const bool gpt2 = c.contains("n_embd");
  const std::string default_act = gpt2 ? "gelu_new" : "silu";
  std::string act = c.value("hidden_act", c.value("activation_function", default_act));
  m.swiglu = act == "silu" || act == "swiglu" || act == "swish";
  m.vocab_unpadded = Field(c, {"vocab_size"}, 32000);
  m.vocab = m.vocab_unpadded;
  m.untied_embeddings = !c.value("tie_word_embeddings", gpt2);
  m.learned_positions = false;
  m.seq_length = seq_length;
  ReadSlidingWindow(c, &m);
  m.experts = Field(c, {"num_local_experts", "num_experts", "n_routed_experts"}, 0);
  if (m.experts > 0) {
    m.topk = Field(c, {"num_experts_per_tok", "moe_topk"}, 2);
    m.moe_ffn_hidden = Field(c, {"moe_intermediate_size"}, m.ffn_hidden);
    int64_t shared = Field(c, {"shared_expert_intermediate_size"}, 0);
    if (shared == 0) shared = Field(c, {"n_shared_experts"}, 0) * m.moe_ffn_hidden;
    m.shared_expert_hidden = shared;
    m.moe_layer_freq = std::max<int64_t>(1, Field(c, {"decoder_sparse_step", "moe_layer_freq"}, 1));
    m.moe_aux_loss_coeff = c.value("router_aux_loss_coef", 0.0);
  }
  return m;
}

Result<sim::ParallelPlan> AutoModelSimulationPlan(const Recipe& recipe, const Knowledge& knowledge,
                                                  const ClusterInfo& cluster, int world) {
  ConfigView view(recipe, knowledge);
  // The checkpoint: from_pretrained(name), or from_config(AutoConfig.from_pretrained(name, …)).
  std::string name;
  for (const char* key :
       {"model.pretrained_model_name_or_path", "model.config.pretrained_model_name_or_path",
        "model.config.name_or_path"}) {
    name = view.Get(key).value_or("");
    if (!name.empty()) break;
  }
  const nlohmann::json fields = RecipeModelFields(recipe, name.empty());
  bool written_out = false;
  for (const auto& [key, value] : fields.items()) written_out = written_out || IsShapeField(key);
  if (name.empty() && !written_out) {
    return Status::InvalidArgument(
        "automodel: a dry run needs the model's shape, and the recipe names no checkpoint "
        "(model.pretrained_model_name_or_path, or model.config.pretrained_model_name_or_path under "
        "from_config) and writes none out (num_hidden_layers, hidden_size, num_attention_heads in "
        "model.config)");
  }
  // The recipe's own fixed length, else the length the simulated cluster was told to assume.
  int64_t seq = FixedSequenceLength(view);
  if (seq <= 0) seq = cluster.sim_sequence_length;
  if (seq <= 0) {
    return Status::InvalidArgument(
        "automodel: a dry run models fixed-length sequences, and this recipe's dataset has none "
        "(no dataset.seq_length or dataset.seq_len, no packed_sequence.packed_sequence_size): its "
        "batches are as long as their longest sample, which the recipe does not say. Give the sim "
        "launcher the padded length you expect a batch to have (launcher: {name: sim, with: "
        "{sequence_length: N}}); the recipe you tune stays as it is");
  }
  nlohmann::json config = nlohmann::json::object();
  if (!name.empty()) {
    ATTUNE_ASSIGN_OR_RETURN(config, FindModelConfig(name, knowledge));
  }
  for (const auto& [key, value] : fields.items())
    config[key] = value;  // the recipe's own fields win
  const std::string what =
      name.empty() ? std::string("the model written out in model.config") : name;
  Result<sim::ModelShape> shape = ShapeFromModelConfig(config, seq);
  if (!shape.ok())
    return Status::InvalidArgument("automodel: " + what + ": " + shape.status().message());

  sim::ParallelPlan plan;
  plan.model = *shape;
  Mesh mesh = ReadMesh(view, recipe.topology);
  sim::Parallelism& p = plan.par;
  p.world = world;
  p.tp = static_cast<int>(mesh.tp);
  p.cp = static_cast<int>(mesh.cp);
  p.pp = mesh.strategy == "megatron_fsdp" ? 1 : static_cast<int>(mesh.pp);
  p.ep = static_cast<int>(mesh.ep);
  p.etp = 1;
  p.dp = static_cast<int>(std::max<int64_t>(1, world / std::max<int64_t>(1, int64_t{p.tp} * p.cp * p.pp)));
  int64_t local = view.GetInt("step_scheduler.local_batch_size", 1);
  p.micro_batch = p.pp > 1 ? view.GetInt("distributed.pipeline.pp_microbatch_size", 1) : local;
  p.global_batch = view.GetInt("step_scheduler.global_batch_size", 32);
  bool interleaved = view.Get("distributed.pipeline.pp_schedule").value_or("1f1b") == "interleaved1f1b";
  p.vpp = interleaved && p.pp > 1 && plan.model.layers % (2 * p.pp) == 0 ? 2 : 1;

  sim::Features& f = plan.feat;
  f.fsdp = mesh.strategy == "fsdp2" || mesh.strategy == "megatron_fsdp";
  f.distributed_optimizer = f.fsdp;
  // FSDP reduce-scatters gradients during the backward pass and gathers the next layer's
  // parameters while this one computes; DDP overlaps its gradient buckets. FSDP2 prefetches
  // implicitly (the host issues the next gather on its own stream while the GPU is still on this
  // layer), so the gathers overlap whether or not `enable_fsdp2_prefetch` (false by default) asks
  // for explicit prefetching; what that adds, when the host cannot run ahead, is not modelled.
  f.overlap_grad_reduce = true;
  f.overlap_param_gather = f.fsdp;
  // FSDP2 reshards every layer after its forward (all but the last, which the backward needs next,
  // the same to the simulator) unless the stages are pipelined; `reshard_after_forward` overrides
  // that. It reduce-scatters gradients on the step's last micro-batch only unless
  // `defer_fsdp_grad_sync` is false, in the reduce dtype of `mp_policy` (FP32 by default).
  // Megatron-FSDP gathers and reduces on every micro-batch.
  const bool fsdp2 = mesh.strategy == "fsdp2";
  // (IsSet: the lever catalog's default for reshard_after_forward is the unpipelined one.)
  const bool pipelined = fsdp2 && p.pp > 1;
  f.fsdp_reshard_after_forward = view.IsSet("distributed.reshard_after_forward")
                                     ? view.GetBool("distributed.reshard_after_forward", !pipelined)
                                     : !pipelined;
  f.fsdp_defer_grad_sync = fsdp2 && view.GetBool("distributed.defer_fsdp_grad_sync", true);
  const std::string reduce_dtype =
      view.Get("distributed.mp_policy.reduce_dtype").value_or("float32");
  f.grad_reduce_in_bf16 =
      reduce_dtype == "bfloat16" || reduce_dtype == "torch.bfloat16" || reduce_dtype == "bf16";
  f.sequence_parallel = p.tp > 1 && view.GetBool("distributed.sequence_parallel", false);
  f.tp_comm_overlap = p.tp > 1 && view.GetBool("distributed.enable_async_tensor_parallel", false);
  std::string ac = view.Get("distributed.activation_checkpointing").value_or("false");
  if (ac == "true" || ac == "True" || ac == "full") {
    f.recompute = sim::Recompute::kFull;
    f.recompute_method = sim::RecomputeMethod::kUniform;
    f.recompute_layers = 1;
  } else if (ac == "selective") {
    f.recompute = sim::Recompute::kSelective;
    f.recompute_core_attn = true;
  }
  std::string attn = view.Get("model.backend.attn").value_or("te");
  f.flash_attention = attn != "eager";
  std::string experts = view.Get("model.backend.experts").value_or("torch_mm");
  // torch_mm (the default, and its torch_mm_mxfp8 form) runs the local experts as one
  // torch._grouped_mm over the tokens-per-expert offsets, te as Transformer Engine's GroupedLinear,
  // gmm with the grouped_gemm package: one grouped GEMM each, not a loop over the experts.
  f.grouped_gemm = experts.rfind("torch_mm", 0) == 0 || experts == "te" || experts == "gmm";
  std::string dispatcher = view.Get("model.backend.dispatcher").value_or("torch");
  f.dispatcher = dispatcher == "deepep" || dispatcher == "hybridep" ? sim::Dispatcher::kFlex
                                                                  : sim::Dispatcher::kAlltoall;
  f.fp8 = view.GetBool("fp8.enabled", false);
  f.add_bias_linear = false;  // the Llama/Mistral/Qwen families AutoModel trains have no linear bias
  f.cuda_graphs = false;
  f.compiled = view.GetBool("compile.enabled", false) || view.GetBool("distributed.enable_compile", false);
  f.bf16_training_state = HalfPrecisionState(view, config);
  f.fused_linear_loss = view.Get("loss_fn._target_").value_or("").find("FusedLinearCrossEntropy") !=
                        std::string::npos;
  // A `peft` section (PeftConfig: LoRA adapters on the matched linear layers) freezes the base.
  f.frozen_base = !view.Get("peft._target_").value_or("").empty();

  sim::RunControl& r = plan.run;
  r.train_iters = view.GetInt("step_scheduler.max_steps", 100);
  r.log_interval = 1;
  r.log_throughput = false;
  r.seed = view.GetInt("seed", 42);
  try {
    r.lr = std::stod(view.Get("optimizer.lr").value_or("0"));
  } catch (...) {
    r.lr = 0;  // not a number: ValidateRecipe's callers report config errors; the curve uses its default
  }
  r.lr_warmup_iters = view.GetInt("lr_scheduler.lr_warmup_steps", 0);
  r.lr_decay_style = view.Get("lr_scheduler.lr_decay_style").value_or("cosine");
  r.distributed_timeout_min = static_cast<double>(view.GetInt("dist_env.timeout_minutes", 10));

  plan.objective_key = ObjectiveKey(recipe, knowledge);
  if (Status valid = ValidateRecipe(recipe, knowledge); !valid.ok()) {
    plan.refusal = sim::PlanRefusal{"ValueError", StripRuleId(valid.message()),
                                    "nemo_automodel/components/distributed/init_utils.py",
                                    "initialize_distributed", sim::RaisedAt::kStartup};
  }
  return plan;
}

std::string RenderAutoModelLog(const Recipe& recipe, const sim::SimulatedRun& run) {
  const sim::ParallelPlan& plan = run.plan;
  std::string text;
  double now = run.start_s;
  auto line = [&](const std::string& logger, const std::string& message) {
    text += sim::VirtualTimestamp(now).substr(0, 19) + " | INFO | " + logger + " | " + message + "\n";
  };
  auto raw = [&](const std::string& l) { text += l + "\n"; };
  std::string config_path = recipe.entry.empty() ? std::string("config.yaml") : recipe.entry.back();
  line("nemo_automodel.cli.app", "Config: " + config_path);
  if (run.end == sim::SimEnd::kRefused && plan.refusal) {
    now = run.failure_s;
    raw("Traceback (most recent call last):");
    raw("  File \"/opt/Automodel/" + plan.refusal->file + "\", line 211, in " + plan.refusal->function);
    raw(plan.refusal->exception + ": " + plan.refusal->message);
    return text;
  }
  const sim::Parallelism& p = plan.par;
  line("root", support::StrFormat("Distributed: world_size %d, dp %d, tp %d, cp %d, pp %d, ep %d", p.world,
                      p.dp, p.tp, p.cp, p.pp, p.ep));
  double params = run.params_first_stage_per_gpu + run.params_expert_per_gpu;
  line("root", support::StrFormat("Model parameters on rank 0 after sharding: %lld", static_cast<long long>(params)));
  now = run.start_s + run.startup_s;
  line("root", "Starting training");
  if (run.end == sim::SimEnd::kOutOfMemory) {
    now = run.failure_s;
    raw("[rank0]: Traceback (most recent call last):");
    raw("[rank0]: " + support::TorchOutOfMemoryLine(run.memory));
    for (const auto& l : support::TorchrunChildFailedLines(now, "train_ft.py", 1, "")) raw(l);
    return text;
  }
  const double tokens = static_cast<double>(p.global_batch) * static_cast<double>(plan.model.seq_length);
  const double mem_gib = run.memory.worst.max_reserved_b / (1024.0 * 1024.0 * 1024.0);
  const double per_gpu_divisor = std::max(1, p.dp * p.cp);
  for (size_t k = 0; k < run.iterations.size(); ++k) {
    const sim::SimIteration& it = run.iterations[k];
    now += it.seconds;
    double tps = tokens / std::max(1e-9, it.seconds);
    line("root", support::StrFormat("step %lld | epoch 0 | loss %.4f | grad_norm %.4f | lr %.2e | mem %.2f GiB | "
                        "tps %.2f(%.2f/gpu) | num_label_tokens %lld",
                        static_cast<long long>(k + 1), it.loss, it.grad_norm, it.learning_rate, mem_gib,
                        tps, tps / per_gpu_divisor, static_cast<long long>(tokens)));
  }
  switch (run.end) {
    case sim::SimEnd::kFinished:
    case sim::SimEnd::kExitInterval:
      line("root", "Training complete");
      break;
    case sim::SimEnd::kNcclTimeout: {
      double timeout = std::max(0.0, run.failure_s - now);
      now = run.failure_s;
      int64_t numel = plan.model.hidden * plan.model.seq_length * p.micro_batch;
      for (const auto& l : support::NcclWatchdogLines(now, static_cast<int64_t>(run.iterations.size()) * 40 + 17,
                                                      numel, timeout)) {
        raw(l);
      }
      for (const auto& l : support::TorchrunChildFailedLines(now, "train_ft.py", -6,
                                                             "Signal 6 (SIGABRT) received by PID 4242")) {
        raw(l);
      }
      break;
    }
    case sim::SimEnd::kNodeFailure:
      now = run.failure_s;
      raw("srun: error: Node failure on node-0003");
      break;
    default:
      break;  // a hang or the time limit: the log just stops
  }
  return text;
}

}  // namespace attune::automodel
