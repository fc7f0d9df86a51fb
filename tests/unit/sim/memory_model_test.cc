// The memory model against hand-computed cases (Korthikanti et al. 2022, §4; Megatron's
// theoretical_memory_usage for parameters and optimizer state).
#include <catch2/catch.hpp>

#include "hardware.h"
#include "memory_model.h"
#include "perf_model.h"
#include "setup.h"
#include "sim_mapping.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

// GPT, h = 1024, a = 16 heads, s = 1024, b = 2, L = 4, TP = 2 with sequence parallelism.
Recipe TinyGpt(std::initializer_list<std::pair<std::string, std::string>> extra = {}) {
  Recipe r = testing::SmallGpt({{"--num-layers", "4"},
                                {"--hidden-size", "1024"},
                                {"--num-attention-heads", "16"},
                                {"--seq-length", "1024"},
                                {"--max-position-embeddings", "1024"},
                                {"--micro-batch-size", "2"},
                                {"--global-batch-size", "64"}});
  for (const auto& [flag, value] : extra) {
    REQUIRE(SetValue(&r, flag, value == "<absent>" ? std::nullopt : std::optional<std::string>(value)).ok());
  }
  return r;
}

TrainingSetup Setup(const Recipe& r, int world = 8) {
  auto s = megatron::ReadSimSetup(r, world);
  REQUIRE(s.ok());
  return static_cast<const TrainingSetup&>(*s);
}

constexpr double kSbh = 1024.0 * 2 * 1024;  // s·b·h = 2,097,152

TEST_CASE("an unfused-attention layer with SP stores sbh(34 + 5as/h)/t bytes", "[sim][memory]") {
  // Korthikanti eq. (SP, no recompute): sbh/t · (34 + 5·a·s/h) = 2,097,152/2 · (34 + 80)
  //   = 1,048,576 · 114 = 119,537,664 bytes.
  TrainingSetup s = Setup(TinyGpt({{"--attention-backend", "unfused"}}));
  CHECK(LayerActivationBytes(s, false) == Approx(119537664.0));
}

TEST_CASE("without SP the LayerNorm and dropout activations are not sharded", "[sim][memory]") {
  // Korthikanti eq. (TP, no SP): sbh · (10 + 24/t + 5as/(h·t)) = 2,097,152 · (10 + 12 + 40)
  //   = 130,023,424 bytes.
  TrainingSetup s = Setup(TinyGpt({{"--attention-backend", "unfused"}, {"--sequence-parallel", "<absent>"}}));
  CHECK(LayerActivationBytes(s, false) == Approx(130023424.0));
}

TEST_CASE("flash attention keeps no score matrix", "[sim][memory]") {
  // 34·sbh/t = 34 · 1,048,576 = 35,651,584 bytes.
  TrainingSetup s = Setup(TinyGpt());
  CHECK(LayerActivationBytes(s, false) == Approx(35651584.0));
}

TEST_CASE("parameters on one GPU count layers over TP and the vocabulary shard", "[sim][memory]") {
  // Vocabulary 50257 padded to a multiple of 128·TP = 256: 50432.
  // Per layer 12h² = 12,582,912 (4h² attention + 8h² MLP), split over TP = 2 → 6,291,456;
  // 4 layers → 25,165,824; norms 4 · 2h = 8,192 (replicated); embedding 50432·1024/2 =
  // 25,821,184. Total 50,995,200.
  TrainingSetup s = Setup(TinyGpt());
  CHECK(s.model.vocab == 50432);
  ParamCounts pc = CountParams(s);
  CHECK(pc.first_stage_per_gpu == Approx(50995200.0));
}

TEST_CASE("without --vocab-size the tokenizer type sets the vocabulary", "[sim][memory]") {
  // Llama2Tokenizer loads Llama 2's 32,000-piece model: a multiple of 256 already. A tokenizer
  // whose size is in a file the job cannot read keeps GPT-2's 50,257, padded to 50,432.
  TrainingSetup llama =
      Setup(TinyGpt({{"--vocab-size", "<absent>"}, {"--tokenizer-type", "Llama2Tokenizer"}}));
  CHECK(llama.model.vocab_unpadded == 32000);
  CHECK(llama.model.vocab == 32000);
  TrainingSetup hf =
      Setup(TinyGpt({{"--vocab-size", "<absent>"}, {"--tokenizer-type", "HuggingFaceTokenizer"}}));
  CHECK(hf.model.vocab == 50432);
  // A given --vocab-size wins over the tokenizer's.
  TrainingSetup given =
      Setup(TinyGpt({{"--vocab-size", "128256"}, {"--tokenizer-type", "Llama2Tokenizer"}}));
  CHECK(given.model.vocab_unpadded == 128256);
}

TEST_CASE("the distributed optimizer shards 12 of 18 bytes per parameter over DP", "[sim][memory]") {
  // DP = 8 / TP 2 = 4: 2 (bf16 param) + 4 (fp32 grad) + 12/4 (master, m, v) = 9 bytes/param;
  // without it 18 bytes/param.
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup sharded = Setup(TinyGpt());
  TrainingSetup replicated = Setup(TinyGpt({{"--use-distributed-optimizer", "<absent>"}}));
  StageMemory a = EstimateStageMemory(sharded, cluster, 0);
  StageMemory b = EstimateStageMemory(replicated, cluster, 0);
  CHECK(a.weight_optimizer_b == Approx(50995200.0 * 9));
  CHECK(b.weight_optimizer_b == Approx(50995200.0 * 18));
}

TEST_CASE("BF16 training state is 8 bytes a parameter, sharded whole by FSDP", "[sim][memory]") {
  // bf16 parameter, gradient, m and v: 8 bytes/param; the distributed optimizer shards the
  // moments (4 + 4/DP = 5 at DP 4); FSDP shards all of it (8/4 = 2).
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = Setup(TinyGpt());
  s.feat.bf16_training_state = true;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(50995200.0 * 5));
  s.feat.distributed_optimizer = false;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(50995200.0 * 8));
  s.feat.fsdp = true;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(50995200.0 * 2));
}

TEST_CASE("frozen base weights keep only the weights", "[sim][memory]") {
  // LoRA: 2 bytes of BF16 weight a parameter, no gradient and no optimizer state; FSDP shards it.
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = Setup(TinyGpt());
  s.feat.frozen_base = true;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(50995200.0 * 2));
  s.feat.fsdp = true;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(50995200.0 * 2 / 4));
}

// TinyGpt's plan fully sharded with BF16 training state (AutoModel's FSDP2).
TrainingSetup FsdpBf16Setup() {
  TrainingSetup s = Setup(TinyGpt());
  s.feat.bf16_training_state = true;
  s.feat.fsdp = true;
  return s;
}

TEST_CASE("FSDP with the gradient sync deferred holds the unsharded gradients across micro-batches",
          "[sim][memory]") {
  // TP 2, DP 4, M = 64/(2·4) = 8 micro-batches. BF16 state sharded by FSDP: 8/4 = 2 bytes a
  // parameter; deferring the sync keeps every local parameter's gradient unsharded in the reduce
  // precision (FP32: 4 bytes; BF16: 2) until the last micro-batch.
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = FsdpBf16Setup();
  const double params = 50995200.0;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(params * 2));
  s.feat.fsdp_defer_grad_sync = true;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(params * (2 + 4)));
  s.feat.grad_reduce_in_bf16 = true;
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(params * (2 + 2)));
  s.par.global_batch = 8;  // one micro-batch a step: nothing to accumulate
  CHECK(EstimateStageMemory(s, cluster, 0).weight_optimizer_b == Approx(params * 2));
}

TEST_CASE("FSDP gathers the parameters for every micro-batch and reduces once when deferred",
          "[sim][memory]") {
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = FsdpBf16Setup();
  s.feat.overlap_grad_reduce = true;
  s.feat.overlap_param_gather = true;
  // Without compute to hide behind (the windows shrink with the micro-batch, not the gathers)
  // the exposed communication grows with the number of micro-batches.
  s.par.global_batch = 8;
  const double one = EstimateStep(s, cluster).dp_comm_s;
  s.par.global_batch = 64;
  const double eight = EstimateStep(s, cluster).dp_comm_s;
  CHECK(eight == Approx(8 * one));
  // Deferring the reduce-scatter to the last micro-batch exposes less; so does keeping the
  // parameters gathered from the forward to the backward.
  s.feat.fsdp_defer_grad_sync = true;
  const double deferred = EstimateStep(s, cluster).dp_comm_s;
  CHECK(deferred < eight);
  CHECK(deferred > one);
  s.feat.fsdp_reshard_after_forward = false;
  CHECK(EstimateStep(s, cluster).dp_comm_s < deferred);
}

TEST_CASE("a fused output layer and loss holds no logits", "[sim][memory]") {
  // The last stage holds the FP32 logits and their gradient, 2 · 4 · s·b · vocab/t bytes, unless
  // the output layer and the loss are fused and chunked.
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = Setup(TinyGpt());
  StageMemory plain = EstimateStageMemory(s, cluster, 0);
  s.feat.fused_linear_loss = true;
  StageMemory fused = EstimateStageMemory(s, cluster, 0);
  CHECK(plain.transient_b - fused.transient_b == Approx(2 * 4.0 * 1024 * 2 * 50432 / 2));
  CHECK(fused.largest_allocation_b < plain.largest_allocation_b);
}

TEST_CASE("BF16 state halves the optimizer's traffic; a fused loss trades a GEMM for passes",
          "[sim][memory]") {
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = Setup(TinyGpt());
  StepBreakdown mixed = EstimateStep(s, cluster);
  s.feat.bf16_training_state = true;
  StepBreakdown bf16 = EstimateStep(s, cluster);
  // Adam over the DP shard: 14 bytes a parameter instead of 30; the grad-norm passes read BF16.
  CHECK(bf16.optimizer_s < 0.6 * mixed.optimizer_s);
  CHECK(bf16.gemm_s == Approx(mixed.gemm_s));
  s.feat.fused_linear_loss = true;
  StepBreakdown fused = EstimateStep(s, cluster);
  CHECK(fused.gemm_s > bf16.gemm_s);  // the backward computes each chunk's logits again
  CHECK(fused.elementwise_s < bf16.elementwise_s);
}

TEST_CASE("frozen base weights skip the weight gradients, their reduction and the update",
          "[sim][memory]") {
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = Setup(TinyGpt());
  StepBreakdown full = EstimateStep(s, cluster);
  s.feat.frozen_base = true;
  StepBreakdown lora = EstimateStep(s, cluster);
  // Forward and input-gradient GEMMs only: two forward-GEMM units of three.
  CHECK(lora.gemm_s == Approx(full.gemm_s * 2 / 3));
  CHECK(lora.optimizer_s == Approx(0).margin(1e-12));
  CHECK(lora.dp_comm_s < full.dp_comm_s);
  CHECK(lora.step_s < full.step_s);
}

TEST_CASE("full uniform recompute keeps only each layer's input", "[sim][memory]") {
  // 4 layers · 2sbh/t + embedding output and dropout mask on the first stage (3sbh/t):
  //   (8 + 3) · 1,048,576 = 11,534,336 bytes.
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = Setup(TinyGpt({{"--recompute-granularity", "full"},
                                   {"--recompute-method", "uniform"},
                                   {"--recompute-num-layers", "1"}}));
  CHECK(EstimateStageMemory(s, cluster, 0).activation_b == Approx(11 * kSbh / 2));
}

TEST_CASE("1F1B keeps PP micro-batches in flight on the first stage, interleaving more",
          "[sim][memory]") {
  // PP = 4 (TP 2, DP 1), M = 64/2 = 32. One layer per stage: 34sbh/t per micro-batch, plus
  // 3sbh/t embedding activations on stage 0. 1F1B: 4 in flight; stage 3 holds 1.
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  TrainingSetup s = Setup(TinyGpt({{"--pipeline-model-parallel-size", "4"}}));
  double per_mb = 34 * kSbh / 2;
  CHECK(EstimateStageMemory(s, cluster, 0).activation_b == Approx(4 * (per_mb + 3 * kSbh / 2)));
  CHECK(EstimateStageMemory(s, cluster, 3).activation_b == Approx(per_mb));
}

TEST_CASE("a 70B model on one 8-GPU node without sharding does not fit an H100", "[sim][memory]") {
  Recipe r = testing::SmallGpt({{"--num-layers", "80"},
                                {"--hidden-size", "8192"},
                                {"--num-attention-heads", "64"},
                                {"--tensor-model-parallel-size", "8"},
                                {"--micro-batch-size", "1"}});
  MemoryEstimate m = EstimateMemory(Setup(r), DefaultCluster(*FindGpu("H100"), 8));
  // 70B/8 ≈ 8.6B params per GPU × (6 + 12/1) bytes ≈ 145 GiB > 79.6 GiB.
  CHECK_FALSE(m.fits);
  CHECK(m.PeakGib() > 140);
}

}  // namespace
}  // namespace attune::sim
