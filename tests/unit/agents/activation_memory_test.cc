// Copyright attune authors.
//
// The heuristic's activation-memory model (activation_memory.h) against hand-computed values, and
// the out-of-memory ban that the memory model may lift (history.h).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "activation_memory.h"
#include "history.h"
#include "param_memory.h"
#include "view_fixtures.h"

using attune::CampaignView;
using attune::Change;
using attune::Recipe;
using attune::agents::ActivationBytes;
using attune::agents::ActivationMemoryChange;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// 4 layers, hidden 1024, 8 heads (no GQA), FFN 4096 without gating, 2048 tokens, no dropout, no
// vocabulary: per token and layer the attention keeps 6h elements (LayerNorm input and output,
// Q, K, V, core output) and the MLP 2h + 2F = 10h, 16h elements of 2 bytes = 32 KiB.
Recipe Dense() {
  Recipe r;
  r.stack = "megatron";
  r.args = {{"--num-layers", {"4"}},         {"--hidden-size", {"1024"}},
            {"--num-attention-heads", {"8"}}, {"--ffn-hidden-size", {"4096"}},
            {"--seq-length", {"2048"}},       {"--micro-batch-size", {"1"}},
            {"--global-batch-size", {"8"}},   {"--hidden-dropout", {"0.0"}}};
  r.topology = {1, 8, "H100"};
  return r;
}

Recipe With(Recipe r, const std::vector<Change>& changes) {
  auto out = attune::agents::Apply(r, changes);
  REQUIRE(out);
  return *out;
}

constexpr double kPerTokenLayer = 32 * 1024;

}  // namespace

TEST_CASE("activations of a dense layer, hand-computed", "[agents][memory]") {
  auto bytes = ActivationBytes(Dense());
  REQUIRE(bytes);
  CHECK(*bytes == Approx(2048 * 4 * kPerTokenLayer));
  // Twice the micro-batch, twice the tokens; TP 2 with sequence parallelism halves everything.
  CHECK(*ActivationBytes(With(Dense(), {{"--micro-batch-size", "1", "2"}})) == Approx(2 * *bytes));
  CHECK(*ActivationBytes(With(Dense(), {{"--tensor-model-parallel-size", std::nullopt, "2"},
                                        {"--sequence-parallel", std::nullopt, ""}})) == Approx(*bytes / 2));
  // Gated MLP: fc1's output is twice as wide (2h + 3F = 14h instead of 10h).
  CHECK(*ActivationBytes(With(Dense(), {{"--swiglu", std::nullopt, ""}})) ==
        Approx(2048 * 4 * (6 + 14) * 1024 * 2.0));
  // Dropout masks: one byte per element of two h-wide tensors.
  CHECK(*ActivationBytes(With(Dense(), {{"--hidden-dropout", "0.0", "0.1"}})) ==
        Approx(2048 * 4 * (kPerTokenLayer + 2 * 1024)));
}

TEST_CASE("full recomputation keeps a layer's input; block keeps the rest", "[agents][memory]") {
  const double input = 2048 * 2 * 1024.0;  // one h-wide BF16 tensor per token
  Recipe uniform = With(Dense(), {{"--recompute-granularity", std::nullopt, "full"},
                                  {"--recompute-method", std::nullopt, "uniform"},
                                  {"--recompute-num-layers", std::nullopt, "1"}});
  CHECK(*ActivationBytes(uniform) == Approx(4 * input));
  // Groups of two layers keep one input each.
  CHECK(*ActivationBytes(With(uniform, {{"--recompute-num-layers", "1", "2"}})) == Approx(2 * input));
  Recipe block = With(uniform, {{"--recompute-method", "uniform", "block"}});
  CHECK(*ActivationBytes(block) == Approx(input + 3 * 2048 * kPerTokenLayer));
  // Selective recomputation of core attention keeps what fused attention keeps anyway; of the
  // LayerNorms, drops their outputs (2h of 16h).
  Recipe selective = With(Dense(), {{"--recompute-granularity", std::nullopt, "selective"}});
  CHECK(*ActivationBytes(selective) == Approx(*ActivationBytes(Dense())));
  CHECK(*ActivationBytes(With(selective, {{"--recompute-modules", std::nullopt, "layernorm"}})) ==
        Approx(2048 * 4 * 14 * 1024 * 2.0));
}

TEST_CASE("micro-batches in flight on the first pipeline rank", "[agents][memory]") {
  // PP 4 without interleaving: 4 micro-batches of 1 layer, all 4 layers' worth.
  Recipe pp = With(Dense(), {{"--pipeline-model-parallel-size", std::nullopt, "4"},
                             {"--global-batch-size", "8", "64"}});
  CHECK(*ActivationBytes(pp) == Approx(2048 * 4 * kPerTokenLayer));
  // Fewer micro-batches than stages: only those are in flight.
  CHECK(*ActivationBytes(With(pp, {{"--global-batch-size", "64", "4"}})) ==
        Approx(2048 * 2 * kPerTokenLayer));
  // 8 layers, PP 2, VPP 2: Megatron's warm-up on rank 0 is (2-1)*2 + (2-1)*2 = 4 chunks, plus the
  // one in its forward: 5 chunks of 2 layers.
  Recipe vpp = With(Dense(), {{"--num-layers", "4", "8"},
                              {"--pipeline-model-parallel-size", std::nullopt, "2"},
                              {"--num-virtual-stages-per-pipeline-rank", std::nullopt, "2"},
                              {"--global-batch-size", "8", "64"}});
  CHECK(*ActivationBytes(vpp) == Approx(2048 * 10 * kPerTokenLayer));
}

TEST_CASE("the last rank's logits count where they are the larger", "[agents][memory]") {
  // 128k vocabulary, 6 bytes per logit: 768 KiB per token, far above one layer's 32 KiB.
  Recipe r = With(Dense(), {{"--vocab-size", std::nullopt, "131072"}});
  CHECK(*ActivationBytes(r) == Approx(2048 * (4 * kPerTokenLayer + 131072 * 6.0)));
}

TEST_CASE("a recomputation or micro-batch move is modelled; others keep the prior", "[agents][memory]") {
  Recipe full = With(Dense(), {{"--recompute-granularity", std::nullopt, "full"},
                               {"--recompute-method", std::nullopt, "uniform"},
                               {"--recompute-num-layers", std::nullopt, "1"}});
  const double peak = 10;
  auto none = ActivationMemoryChange(full, {{"--recompute-granularity", "full", std::nullopt},
                                            {"--recompute-method", "uniform", std::nullopt},
                                            {"--recompute-num-layers", "1", std::nullopt}}, {}, peak);
  REQUIRE(none);
  CHECK(*none * peak * kGiB == Approx(2048 * 4 * (kPerTokenLayer - 2048.0)));
  CHECK(*ActivationMemoryChange(full, {{"--recompute-method", "uniform", "block"}}, {}, peak) > 0);
  CHECK_FALSE(ActivationMemoryChange(full, {{"--tensor-model-parallel-size", std::nullopt, "2"}}, {}, peak));
  // No sequence length (an RL recipe): the prior stands.
  Recipe rl = Dense();
  rl.args.erase(rl.args.begin() + 4);
  CHECK_FALSE(ActivationMemoryChange(rl, {{"--micro-batch-size", "1", "2"}}, {}, peak));
}

TEST_CASE("an out-of-memory ban lifts where the change is predicted to need clearly less",
          "[agents][history]") {
  CampaignView view = attune::testing::MakeView(40.0);
  attune::CandidateRecord oom;
  oom.candidate_id = "c001";
  oom.lever_id = "recompute";
  oom.changes = {{"--recompute-granularity", "selective", std::nullopt}};
  oom.outcome = attune::Outcome::kFailed;
  oom.failure = attune::Failure{};
  oom.failure->kind = attune::FailureKind::kOom;
  oom.agent_meta = {{"memory", 1.25}};  // predicted 40 x 2.25 = 90 GiB
  view.history.push_back(oom);
  auto tried = attune::agents::CollectTried(view);
  const std::vector<Change> change = oom.changes;
  // The base's peak alone does not reopen it (39 GiB is not 10% below 40)...
  CHECK(attune::agents::TouchesBanned(tried, change, 39.0));
  // ...the predicted peak does, at 10% below the 90 GiB predicted then.
  CHECK_FALSE(attune::agents::TouchesBanned(tried, change, 39.0, 80.0));
  CHECK(attune::agents::TouchesBanned(tried, change, 39.0, 82.0));
  // Without a prediction recorded, only the base's peak can.
  view.history.back().agent_meta = nlohmann::json::object();
  tried = attune::agents::CollectTried(view);
  CHECK(attune::agents::TouchesBanned(tried, change, 39.0, 50.0));
  CHECK_FALSE(attune::agents::TouchesBanned(tried, change, 35.0));
  CHECK(attune::agents::BlockedOnlyByOutOfMemory(tried, view.leader, change));
}

TEST_CASE("a MoE layer keeps the routed rows its rank holds: ETP/TP per routed copy",
          "[agents][memory]") {
  // Dense() with 8 experts of width 512 (h/2, not gated), top-2, every layer MoE, on TP 2 with
  // sequence parallelism. Per token and layer: the attention's 6h halved (3h), the MoE block's
  // LayerNorm input and output h/2 each, and per routed copy the permuted input h·ETP/TP plus
  // fc1's output and the activation, F_e/TP each: ETP 1 keeps 2 × (h/2 + h/2) = 2h, ETP 2 (each
  // rank holding its ETP peer's rows too) 2 × (h + h/2) = 3h.
  Recipe moe = With(Dense(), {{"--num-experts", std::nullopt, "8"},
                              {"--moe-router-topk", std::nullopt, "2"},
                              {"--moe-ffn-hidden-size", std::nullopt, "512"},
                              {"--tensor-model-parallel-size", std::nullopt, "2"},
                              {"--sequence-parallel", std::nullopt, ""}});
  const double per_layer_h = 2048 * 4 * 1024 * 2.0;  // bytes of one h-wide element per token, all layers
  Recipe etp1 = With(moe, {{"--expert-tensor-parallel-size", std::nullopt, "1"}});
  Recipe etp2 = With(moe, {{"--expert-tensor-parallel-size", std::nullopt, "2"}});
  REQUIRE(ActivationBytes(etp1));
  CHECK(*ActivationBytes(etp1) == Approx(6 * per_layer_h));
  CHECK(*ActivationBytes(etp2) == Approx(7 * per_layer_h));
  // ETP absent is TP's: the same as ETP 2.
  CHECK(*ActivationBytes(moe) == Approx(*ActivationBytes(etp2)));
}

TEST_CASE("attention keeps heads times the head dim, not h, and MLA its wider heads and latents",
          "[agents][memory]") {
  // Qwen3-style: 8 heads of 256 on h = 1024 (--kv-channels), 2 KV groups. Per token the attention
  // keeps the norm's input and output (2h), Q and the core output (2 x 8 x 256) and K and V
  // (2 x 2 x 256): 2h + 4096 + 1024 elements where h-wide heads gave 6h.
  Recipe wide = With(Dense(), {{"--kv-channels", std::nullopt, "256"},
                               {"--group-query-attention", std::nullopt, ""},
                               {"--num-query-groups", std::nullopt, "2"}});
  const double mlp = 10 * 1024;
  CHECK(*ActivationBytes(wide) == Approx(2048 * 4 * (2 * 1024 + 4096 + 1024 + mlp) * 2.0));
  // TP 4 with 2 groups: each rank still holds one KV head (256 wide) of K and of V.
  Recipe tp4 = With(wide, {{"--tensor-model-parallel-size", std::nullopt, "4"},
                           {"--sequence-parallel", std::nullopt, ""}});
  CHECK(*ActivationBytes(tp4) == Approx(2048 * 4 * ((2 * 1024 + mlp) / 4 + 4096 / 4 + 2 * 256) * 2.0));

  // Multi-latent attention, DeepSeek-V2-Lite's ranks: 8 heads of 128 + 64 (Q, K) and 128 (V) are
  // kept as 8 x 320 / 2 = 1280 wide each (Q, output, K, V), plus the 512 + 64 KV latent.
  Recipe mla = With(Dense(), {{"--multi-latent-attention", std::nullopt, ""},
                              {"--kv-lora-rank", std::nullopt, "512"},
                              {"--qk-head-dim", std::nullopt, "128"},
                              {"--qk-pos-emb-head-dim", std::nullopt, "64"},
                              {"--v-head-dim", std::nullopt, "128"}});
  CHECK(*ActivationBytes(mla) == Approx(2048 * 4 * (2 * 1024 + 4 * 1280 + 576 + mlp) * 2.0));
}

TEST_CASE("attention weights follow the head dim and multi-latent attention's projections",
          "[agents][memory]") {
  // h = 1024, 8 heads of 128 (h/heads), no GQA: 4h².
  auto plain = attune::agents::ReadLayerWeights(Dense());
  REQUIRE(plain);
  CHECK(plain->attention == Approx(4.0 * 1024 * 1024));
  // 8 heads of 256, 2 KV groups: Q and O 1024 x 2048 each, K and V 1024 x 512 each.
  auto wide = attune::agents::ReadLayerWeights(With(Dense(), {{"--kv-channels", std::nullopt, "256"},
                                                              {"--group-query-attention", std::nullopt, ""},
                                                              {"--num-query-groups", std::nullopt, "2"}}));
  REQUIRE(wide);
  CHECK(wide->attention == Approx(2.0 * 1024 * 2048 + 2.0 * 1024 * 512));
  // MLA with a 384-wide query latent and a 512-wide KV latent: Q down 1024 x 384 and up
  // 384 x 8 x 192, KV down 1024 x (512 + 64) and up 512 x 8 x (128 + 128), output 8 x 128 x 1024.
  auto mla = attune::agents::ReadLayerWeights(With(Dense(), {{"--multi-latent-attention", std::nullopt, ""},
                                                             {"--q-lora-rank", std::nullopt, "384"},
                                                             {"--kv-lora-rank", std::nullopt, "512"}}));
  REQUIRE(mla);
  CHECK(mla->attention == Approx(1024.0 * 384 + 384.0 * 8 * 192 + 1024.0 * 576 + 512.0 * 8 * 256 +
                                 8.0 * 128 * 1024));
}
