// The AutoModel stack's dry-run mapping (dry_run.h): recipe -> parallel plan, the checkpoint's
// shape from a local config.json, the Hugging Face cache or models.yaml, refusals and the
// objective key.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "automodel_fixture.h"
#include "dry_run.h"

namespace attune::automodel {
namespace {

namespace fs = std::filesystem;

ClusterInfo H100() {
  ClusterInfo c;
  c.device_type = "H100";
  c.device_memory_gib = 79.6;
  c.devices_per_node = 8;
  c.compute_capability_major = 9;
  return c;
}

class ScratchDir {
 public:
  ScratchDir() : path_(fs::temp_directory_path() / ("attune-am-dry-" + std::to_string(std::random_device{}()))) {
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void WriteText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

constexpr const char* kTinyConfig =
    R"({"num_hidden_layers": 4, "hidden_size": 256, "intermediate_size": 688,
        "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
        "hidden_act": "silu", "tie_word_embeddings": true})";

TEST_CASE("an AutoModel recipe maps to the plan its mesh, batch and switches describe", "[automodel][sim]") {
  Recipe r = testing::Import("launch_automodel.sh");  // Llama-3.1-8B, tp 2, local batch 2, SP
  auto plan = AutoModelSimulationPlan(r, testing::TheStack().knowledge(), H100(), 8);
  REQUIRE(plan.ok());
  CHECK_FALSE(plan->refusal.has_value());
  // The shape of meta-llama/Llama-3.1-8B (models.yaml).
  CHECK(plan->model.layers == 32);
  CHECK(plan->model.hidden == 4096);
  CHECK(plan->model.ffn_hidden == 14336);
  CHECK(plan->model.query_groups == 8);
  CHECK(plan->model.vocab_unpadded == 128256);
  CHECK(plan->model.swiglu);
  CHECK(plan->model.untied_embeddings);
  CHECK(plan->model.seq_length == 4096);
  CHECK(plan->par.tp == 2);
  CHECK(plan->par.dp == 4);
  CHECK(plan->par.micro_batch == 2);
  CHECK(plan->par.global_batch == 64);
  CHECK(plan->par.MicroBatches() == 8);
  CHECK(plan->feat.fsdp);
  CHECK(plan->feat.sequence_parallel);
  CHECK(plan->feat.recompute == sim::Recompute::kFull);
  CHECK(plan->run.train_iters == 200);
  CHECK(plan->run.lr == Approx(1e-5));
}

TEST_CASE("the AutoModel objective key ignores levers and follows objective settings", "[automodel][sim]") {
  const Knowledge& k = testing::TheStack().knowledge();
  Recipe r = testing::Import("launch_automodel.sh");
  auto base = AutoModelSimulationPlan(r, k, H100(), 8);
  auto lever = AutoModelSimulationPlan(testing::With(r, "--distributed.tp_size", "4"), k, H100(), 8);
  auto lr = AutoModelSimulationPlan(testing::With(r, "--optimizer.lr", "2e-5"), k, H100(), 8);
  auto seed = AutoModelSimulationPlan(testing::With(r, "config:seed", "7"), k, H100(), 8);
  REQUIRE((base.ok() && lever.ok() && lr.ok() && seed.ok()));
  CHECK(lever->par.tp == 4);
  CHECK(lever->objective_key == base->objective_key);
  CHECK(lr->objective_key != base->objective_key);
  CHECK(seed->objective_key != base->objective_key);
}

TEST_CASE("a mesh AutoModel refuses is a plan with AutoModel's ValueError", "[automodel][sim]") {
  Recipe r = testing::With(testing::Import("launch_automodel.sh"), "--distributed.tp_size", "3");
  auto plan = AutoModelSimulationPlan(r, testing::TheStack().knowledge(), H100(), 8);
  REQUIRE(plan.ok());
  REQUIRE(plan->refusal.has_value());
  CHECK(plan->refusal->exception == "ValueError");
  CHECK_THAT(plan->refusal->message, Catch::Contains("must be divisible by"));
  CHECK(plan->refusal->message.front() != '[');  // the rule id is attune's, not AutoModel's text
}

TEST_CASE("the checkpoint's shape comes from a local config.json, the HF cache, then models.yaml", "[automodel][sim]") {
  const Knowledge& k = testing::TheStack().knowledge();
  ScratchDir dir;
  // A local checkpoint directory.
  WriteText(dir.path() / "tiny" / "config.json", kTinyConfig);
  auto local = FindModelConfig((dir.path() / "tiny").string(), k);
  REQUIRE(local.ok());
  auto shape = ShapeFromModelConfig(*local, 512);
  REQUIRE(shape.ok());
  CHECK(shape->layers == 4);
  CHECK(shape->query_groups == 2);
  CHECK(shape->kv_channels == 32);
  CHECK_FALSE(shape->untied_embeddings);
  // The Hugging Face cache layout: models--org--name/snapshots/<revision>/config.json.
  WriteText(dir.path() / "hub" / "models--acme--tiny-moe" / "snapshots" / "abc123" / "config.json",
            R"({"num_hidden_layers": 2, "hidden_size": 128, "num_attention_heads": 4,
                "num_local_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 64,
                "n_shared_experts": 1})");
  ::setenv("HF_HUB_CACHE", (dir.path() / "hub").string().c_str(), 1);
  auto cached = FindModelConfig("acme/tiny-moe", k);
  ::unsetenv("HF_HUB_CACHE");
  REQUIRE(cached.ok());
  auto moe = ShapeFromModelConfig(*cached, 1024);
  REQUIRE(moe.ok());
  CHECK(moe->experts == 16);
  CHECK(moe->topk == 4);
  CHECK(moe->moe_ffn_hidden == 64);
  CHECK(moe->shared_expert_hidden == 64);
  // Unknown everywhere: NotFound that says what to do.
  auto unknown = FindModelConfig("acme/no-such-model", k);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK_THAT(unknown.status().message(), Catch::Contains("models.yaml") && Catch::Contains("config.json"));
  // A config.json without a shape.
  CHECK_FALSE(ShapeFromModelConfig(nlohmann::json{{"vocab_size", 10}}, 128).ok());
}

TEST_CASE("sliding-window attention comes from the checkpoint's config.json", "[automodel][sim]") {
  auto shape = [](nlohmann::json c) {
    c.update({{"num_hidden_layers", 24}, {"hidden_size", 2880}, {"num_attention_heads", 64}});
    auto s = ShapeFromModelConfig(c, 8192);
    REQUIRE(s.ok());
    return *s;
  };
  CHECK(shape({}).attention_window == 0);
  CHECK(shape({{"sliding_window", nullptr}}).attention_window == 0);
  // Mistral: every layer.
  auto mistral = shape({{"sliding_window", 4096}});
  CHECK(mistral.attention_window == 4096);
  CHECK(mistral.windowed_layers == 24);
  // layer_types names each layer (gpt-oss, Gemma 3, recent Qwen configs).
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 24; ++i) types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  auto gpt_oss = shape({{"sliding_window", 128}, {"layer_types", types}});
  CHECK(gpt_oss.attention_window == 128);
  CHECK(gpt_oss.windowed_layers == 12);
  // Gemma 3's pattern (every 6th layer full) and Gemma 2's alternation without layer_types.
  CHECK(shape({{"sliding_window", 1024}, {"sliding_window_pattern", 6}}).windowed_layers == 20);
  CHECK(shape({{"sliding_window", 4096}, {"model_type", "gemma2"}}).windowed_layers == 12);
  // Qwen2/3 configs carry a window but switch it off.
  CHECK(shape({{"sliding_window", 32768}, {"use_sliding_window", false}}).attention_window == 0);
}

TEST_CASE(
    "the model's shape comes from from_config's checkpoint, its overrides or a written-out config",
    "[automodel][sim]") {
  const Knowledge& k = testing::TheStack().knowledge();
  // from_config(AutoConfig.from_pretrained(name, **overrides)): the benchmark configs' form.
  Recipe r = testing::Import("launch_automodel.sh");
  REQUIRE(SetValue(&r, "config:model.pretrained_model_name_or_path", std::nullopt).ok());
  REQUIRE(
      SetValue(&r, "config:model.config.pretrained_model_name_or_path", "meta-llama/Llama-3.1-8B")
          .ok());
  auto named = AutoModelSimulationPlan(r, k, H100(), 8);
  REQUIRE(named.ok());
  CHECK(named->model.layers == 32);
  CHECK(named->model.hidden == 4096);
  // A keyword argument of from_pretrained overrides the checkpoint's field (a 2-layer proxy), and
  // a command-line override wins over the file.
  REQUIRE(SetValue(&r, "config:model.config.num_hidden_layers", "2").ok());
  auto proxy = AutoModelSimulationPlan(r, k, H100(), 8);
  REQUIRE(proxy.ok());
  CHECK(proxy->model.layers == 2);
  CHECK(proxy->model.hidden == 4096);
  auto overridden = AutoModelSimulationPlan(
      testing::With(r, "--model.config.num_hidden_layers", "4"), k, H100(), 8);
  REQUIRE(overridden.ok());
  CHECK(overridden->model.layers == 4);

  // A builder given the fields at model level, GPT-2 style (build_gpt2_model): no checkpoint.
  Recipe built = testing::Import("launch_automodel.sh");
  REQUIRE(SetValue(&built, "config:model.pretrained_model_name_or_path", std::nullopt).ok());
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"n_layer", "12"}, {"n_embd", "768"}, {"n_head", "12"}, {"vocab_size", "50258"}}) {
    REQUIRE(SetValue(&built, "config:model." + key, value).ok());
  }
  auto gpt2 = AutoModelSimulationPlan(built, k, H100(), 8);
  REQUIRE(gpt2.ok());
  CHECK(gpt2->model.layers == 12);
  CHECK(gpt2->model.hidden == 768);
  CHECK(gpt2->model.ffn_hidden == 4 * 768);
  CHECK(gpt2->model.vocab_unpadded == 50258);
  CHECK_FALSE(gpt2->model.swiglu);             // GPT-2's GELU MLP, not a gated one
  CHECK_FALSE(gpt2->model.untied_embeddings);  // and its tied embeddings
}

TEST_CASE("a fixed sequence length comes from the dataset's own field or its packing",
          "[automodel][sim]") {
  const Knowledge& k = testing::TheStack().knowledge();
  Recipe r = testing::Import("launch_automodel.sh");
  REQUIRE(SetValue(&r, "config:dataset.seq_length", std::nullopt).ok());
  // AutoModel's MockIterableDataset (its benchmark configs) says seq_len.
  auto mock =
      AutoModelSimulationPlan(testing::With(r, "config:dataset.seq_len", "2048"), k, H100(), 8);
  REQUIRE(mock.ok());
  CHECK(mock->model.seq_length == 2048);
  // The mock unpacked dataset is fixed-length only with std_len 0.
  Recipe unpacked = testing::With(testing::With(r, "config:dataset.mean_len", "1024"),
                                  "config:dataset.std_len", "0");
  auto fixed = AutoModelSimulationPlan(unpacked, k, H100(), 8);
  REQUIRE(fixed.ok());
  CHECK(fixed->model.seq_length == 1024);
  auto varying = AutoModelSimulationPlan(testing::With(unpacked, "config:dataset.std_len", "128"),
                                         k, H100(), 8);
  REQUIRE_FALSE(varying.ok());
  CHECK_THAT(varying.status().message(), Catch::Contains("as long as their longest sample"));
  CHECK_THAT(varying.status().message(), Catch::Contains("sequence_length: N"));
  // The simulated cluster's assumed length models such a recipe; a fixed length of the recipe's
  // own wins over it.
  ClusterInfo assumed = H100();
  assumed.sim_sequence_length = 512;
  auto padded = AutoModelSimulationPlan(testing::With(unpacked, "config:dataset.std_len", "128"), k,
                                        assumed, 8);
  REQUIRE(padded.ok());
  CHECK(padded->model.seq_length == 512);
  auto own = AutoModelSimulationPlan(unpacked, k, assumed, 8);
  REQUIRE(own.ok());
  CHECK(own->model.seq_length == 1024);
}

TEST_CASE("the training state follows the model's dtype and PEFT; the loss may skip the logits",
          "[automodel][sim]") {
  const Knowledge& k = testing::TheStack().knowledge();
  Recipe r = testing::Import("launch_automodel.sh");
  auto plan_of = [&](const Recipe& recipe) {
    auto plan = AutoModelSimulationPlan(recipe, k, H100(), 8);
    REQUIRE(plan.ok());
    return *plan;
  };
  // torch_dtype "auto" (the default) and a checkpoint that names none: BF16 state.
  CHECK(plan_of(r).feat.bf16_training_state);
  CHECK_FALSE(
      plan_of(testing::With(r, "config:model.torch_dtype", "float32")).feat.bf16_training_state);
  CHECK(plan_of(testing::With(r, "config:model.torch_dtype", "torch.bfloat16"))
            .feat.bf16_training_state);

  // "auto" is the checkpoint's own dtype under from_pretrained, BF16 under from_config.
  ScratchDir dir;
  nlohmann::json fp32 = nlohmann::json::parse(kTinyConfig);
  fp32["torch_dtype"] = "float32";
  WriteText(dir.path() / "config.json", fp32.dump());
  Recipe local =
      testing::With(r, "config:model.pretrained_model_name_or_path", dir.path().string());
  CHECK_FALSE(plan_of(local).feat.bf16_training_state);
  CHECK(plan_of(testing::With(local, "config:model.torch_dtype", "bf16")).feat.bf16_training_state);
  Recipe from_config = testing::With(r, "config:model._target_",
                                     "nemo_automodel.NeMoAutoModelForCausalLM.from_config");
  REQUIRE(SetValue(&from_config, "config:model.pretrained_model_name_or_path", std::nullopt).ok());
  from_config = testing::With(from_config, "config:model.config.pretrained_model_name_or_path",
                              dir.path().string());
  CHECK(plan_of(from_config).feat.bf16_training_state);

  CHECK_FALSE(plan_of(r).feat.frozen_base);
  CHECK(plan_of(testing::With(r, "config:peft._target_",
                              "nemo_automodel.components._peft.lora.PeftConfig"))
            .feat.frozen_base);

  CHECK_FALSE(plan_of(r).feat.fused_linear_loss);
  CHECK(plan_of(testing::With(r, "config:loss_fn._target_",
                              "nemo_automodel.components.loss.linear_ce.FusedLinearCrossEntropy"))
            .feat.fused_linear_loss);
}

TEST_CASE("a dry run needs the sequence length and a checkpoint", "[automodel][sim]") {
  const Knowledge& k = testing::TheStack().knowledge();
  Recipe r = testing::Import("launch_automodel.sh");
  REQUIRE(SetValue(&r, "config:dataset.seq_length", std::nullopt).ok());
  auto no_seq = AutoModelSimulationPlan(r, k, H100(), 8);
  REQUIRE_FALSE(no_seq.ok());
  CHECK_THAT(no_seq.status().message(), Catch::Contains("dataset.seq_length"));
  Recipe unnamed = testing::Import("launch_automodel.sh");
  REQUIRE(SetValue(&unnamed, "config:model.pretrained_model_name_or_path", std::nullopt).ok());
  auto no_model = AutoModelSimulationPlan(unnamed, k, H100(), 8);
  REQUIRE_FALSE(no_model.ok());
  CHECK_THAT(no_model.status().message(), Catch::Contains("pretrained_model_name_or_path"));
}

}  // namespace
}  // namespace attune::automodel

namespace attune::automodel {
namespace {

// An AutoModel recipe on one node of 8 H100, from its config sections.
Recipe SectionsRecipe(const char* config) {
  Recipe r;
  r.stack = "automodel";
  r.entry = {"automodel", "sft.yaml"};
  r.config = nlohmann::json::parse(config);
  r.topology = {1, 8, "H100"};
  return r;
}

TEST_CASE("every AutoModel experts backend is a grouped GEMM in the plan", "[automodel][sim]") {
  // torch_mm (the default) is torch._grouped_mm over the tokens-per-expert offsets, not a loop
  // over the experts; te and gmm are grouped too.
  Recipe r = SectionsRecipe(R"({
    "step_scheduler": {"global_batch_size": 16, "local_batch_size": 1},
    "model": {"pretrained_model_name_or_path": "Qwen/Qwen3-30B-A3B"},
    "distributed": {"strategy": "fsdp2", "ep_size": 8},
    "dataset": {"seq_length": 4096}})");
  const Knowledge& k = testing::TheStack().knowledge();
  for (const char* backend : {"", "torch_mm", "te", "gmm"}) {
    Recipe with = *backend ? testing::With(r, "--model.backend.experts", backend) : r;
    auto plan = AutoModelSimulationPlan(with, k, H100(), 8);
    REQUIRE(plan.ok());
    INFO(backend);
    CHECK(plan->model.experts == 128);
    CHECK(plan->feat.grouped_gemm);
  }
}

TEST_CASE(
    "FSDP2 defers the gradient sync and reshards after the forward unless the recipe says not",
    "[automodel][sim]") {
  Recipe r = SectionsRecipe(R"({
    "step_scheduler": {"global_batch_size": 64, "local_batch_size": 1},
    "model": {"pretrained_model_name_or_path": "meta-llama/Llama-3.1-8B"},
    "distributed": {"strategy": "fsdp2", "reshard_after_forward": null},
    "dataset": {"seq_length": 4096}})");
  const Knowledge& k = testing::TheStack().knowledge();
  auto plan = [&](const Recipe& recipe) {
    auto p = AutoModelSimulationPlan(recipe, k, H100(), 8);
    REQUIRE(p.ok());
    return *p;
  };
  // AutoModel's defaults: sync on the last micro-batch, FP32 reduction, resharded (null is the
  // default too).
  sim::ParallelPlan defaults = plan(r);
  CHECK(defaults.feat.fsdp);
  CHECK(defaults.feat.fsdp_defer_grad_sync);
  CHECK(defaults.feat.fsdp_reshard_after_forward);
  CHECK_FALSE(defaults.feat.grad_reduce_in_bf16);
  sim::ParallelPlan told = plan(
      testing::With(testing::With(testing::With(r, "--distributed.defer_fsdp_grad_sync", "false"),
                                  "--distributed.reshard_after_forward", "false"),
                    "--distributed.mp_policy.reduce_dtype", "bfloat16"));
  CHECK_FALSE(told.feat.fsdp_defer_grad_sync);
  CHECK_FALSE(told.feat.fsdp_reshard_after_forward);
  CHECK(told.feat.grad_reduce_in_bf16);
  // Megatron-FSDP reduces on every micro-batch whatever FSDP2's option says.
  sim::ParallelPlan megatron = plan(testing::With(r, "--distributed.strategy", "megatron_fsdp"));
  CHECK(megatron.feat.fsdp);
  CHECK_FALSE(megatron.feat.fsdp_defer_grad_sync);
}

}  // namespace
}  // namespace attune::automodel
