// Where a Megatron recipe puts its layers on the pipeline, and multi-token prediction, in the
// simulated cluster: --pipeline-model-parallel-layout, --decoder-first/last-pipeline-num-layers
// and --account-for-*-in-pipeline-split in the mapping; the busiest rank setting the step; MTP
// depths in the step time, the parameters, the memory and Megatron's FLOP count (issue 24).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hardware.h"
#include "memory_model.h"
#include "perf_model.h"
#include "setup.h"
#include "sim_mapping.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

using testing::Flags;
using testing::MegatronRecipe;

// DeepSeek-V3's shape (61 layers, the first 3 dense, MLA, 256 experts top-8) on 1,024 GPUs.
Flags DeepSeekV3(int pp) {
  return {{"--num-layers", "61"},
          {"--hidden-size", "7168"},
          {"--ffn-hidden-size", "18432"},
          {"--num-attention-heads", "128"},
          {"--seq-length", "4096"},
          {"--swiglu", ""},
          {"--untie-embeddings-and-output-weights", ""},
          {"--vocab-size", "129280"},
          {"--multi-latent-attention", ""},
          {"--q-lora-rank", "1536"},
          {"--kv-lora-rank", "512"},
          {"--num-experts", "256"},
          {"--moe-router-topk", "8"},
          {"--moe-ffn-hidden-size", "2048"},
          {"--moe-shared-expert-intermediate-size", "2048"},
          {"--moe-layer-freq", "([0]*3+[1]*58)"},
          {"--moe-grouped-gemm", ""},
          {"--moe-token-dispatcher-type", "flex"},
          {"--disable-bias-linear", ""},
          {"--tensor-model-parallel-size", "2"},
          {"--pipeline-model-parallel-size", std::to_string(pp)},
          {"--expert-model-parallel-size", "64"},
          {"--micro-batch-size", "1"},
          {"--global-batch-size", "8192"},
          {"--use-distributed-optimizer", ""},
          {"--sequence-parallel", ""},
          {"--bf16", ""}};
}

megatron::SimSetup Read(Flags f, int world = 1024) {
  auto s = megatron::ReadSimSetup(MegatronRecipe(std::move(f)), world);
  REQUIRE(s.ok());
  return *s;
}

ClusterSpec H100(int gpus) { return DefaultCluster(*FindGpu("H100"), gpus); }

// What Megatron's argument checks say of the recipe, as the dry run's plan carries it.
std::optional<PlanRefusal> Refusal(Flags f, int world = 1024) {
  auto plan = megatron::MegatronSimulationPlan(MegatronRecipe(std::move(f)), ToClusterInfo(H100(world)), world);
  REQUIRE(plan.ok());
  return plan->refusal;
}

Flags With(Flags f, Flags extra) {
  f.insert(f.end(), extra.begin(), extra.end());
  return f;
}

TEST_CASE("a pipeline layout places the layers, the MTP depth and the loss rank by rank", "[sim][pipeline]") {
  // Megatron's own example for DeepSeek-V3 on PP 8 × VPP 4: embedding and 3 layers first, pairs of
  // layers after, then a stage with the MTP depth and one with the loss.
  auto s = Read(With(DeepSeekV3(8), {{"--mtp-num-layers", "1"}, {"--pipeline-model-parallel-layout", "Et*3|(tt|)*29,m|L"}}));
  REQUIRE(s.par.rank_loads.size() == 8);
  CHECK(s.par.vpp == 4);  // 32 stages over 8 ranks
  CHECK(s.model.mtp_layers == 1);
  const auto& r = s.par.rank_loads;
  // Rank 0 runs stages 0, 8, 16 and 24: 3 + 2 + 2 + 2 layers, the three dense ones among them.
  CHECK(r[0].layers == 9);
  CHECK(r[0].moe_layers == 6);
  CHECK(r[0].embedding);
  CHECK_FALSE(r[0].loss);
  CHECK(r[3].layers == 8);
  CHECK(r[3].moe_layers == 8);
  CHECK(r[6].layers == 6);
  CHECK(r[6].mtp_layers == 1);
  CHECK(r[7].layers == 6);
  CHECK(r[7].loss);
  CHECK(r[7].mtp_layers == 0);
  int64_t layers = 0;
  for (const auto& load : r) layers += load.layers;
  CHECK(layers == 61);
  CHECK_FALSE(Refusal(With(DeepSeekV3(8), {{"--mtp-num-layers", "1"},
                                            {"--pipeline-model-parallel-layout", "Et*3|(tt|)*29,m|L"}})));
  // A layout Megatron would refuse: 60 decoder layers for a 61-layer model, or 31 stages on 8 ranks.
  Flags short_one = With(DeepSeekV3(8), {{"--pipeline-model-parallel-layout", "Et*2|(tt|)*29,m|L"}});
  CHECK(Read(short_one).par.rank_loads.empty());
  auto refusal = Refusal(short_one);
  REQUIRE(refusal);
  CHECK(refusal->message.find("pipeline layout") != std::string::npos);
  CHECK(Refusal(With(DeepSeekV3(8), {{"--pipeline-model-parallel-layout", "Et*3|(tt|)*29,mL"}})));
  CHECK(Refusal(With(DeepSeekV3(8), {{"--pipeline-model-parallel-layout", "Et*3|(tt|)*29,x|L"}})));
  // A layout changes where layers run, not the model: the simulated loss curve stays the same.
  auto plain = Read(With(DeepSeekV3(8), {{"--decoder-first-pipeline-num-layers", "5"},
                                         {"--decoder-last-pipeline-num-layers", "8"}}));
  CHECK(megatron::ObjectiveKey(plain.flags) ==
        megatron::ObjectiveKey(Read(With(DeepSeekV3(8), {{"--pipeline-model-parallel-layout",
                                                           "Et*3|(tt|)*29,t|L"}})).flags));
}

TEST_CASE("first/last stage layers and the account-for flags split the rest evenly", "[sim][pipeline]") {
  auto s = Read(With(DeepSeekV3(8), {{"--decoder-first-pipeline-num-layers", "5"},
                                     {"--decoder-last-pipeline-num-layers", "8"}}));
  REQUIRE(s.par.rank_loads.size() == 8);
  CHECK(s.par.rank_loads[0].layers == 5);
  CHECK(s.par.rank_loads[0].moe_layers == 2);  // layers 0-2 are dense
  CHECK(s.par.rank_loads[3].layers == 8);
  CHECK(s.par.rank_loads[7].layers == 8);
  CHECK(s.par.rank_loads[7].loss);
  CHECK_FALSE(Refusal(With(DeepSeekV3(8), {{"--decoder-first-pipeline-num-layers", "5"},
                                           {"--decoder-last-pipeline-num-layers", "8"}})));
  // Counting the embedding and the loss as a layer each: 62 layers + 2 = 64 units, 16 per rank of
  // PP 4, so the first and last ranks run 15 decoder layers.
  Flags f = DeepSeekV3(4);
  for (auto& [flag, value] : f) {
    if (flag == "--num-layers") value = "62";
    if (flag == "--moe-layer-freq") value = "([0]*3+[1]*59)";
  }
  auto acc = Read(With(f, {{"--account-for-embedding-in-pipeline-split", ""},
                           {"--account-for-loss-in-pipeline-split", ""}}));
  REQUIRE(acc.par.rank_loads.size() == 4);
  CHECK(acc.par.rank_loads[0].layers == 15);
  CHECK(acc.par.rank_loads[1].layers == 16);
  CHECK(acc.par.rank_loads[3].layers == 15);
  CHECK_FALSE(Refusal(With(f, {{"--account-for-embedding-in-pipeline-split", ""},
                               {"--account-for-loss-in-pipeline-split", ""}})));
  // Without the flags, 62 layers do not divide over PP 4 and Megatron refuses.
  CHECK(Refusal(f));
}

TEST_CASE("the busiest pipeline rank sets the step", "[sim][pipeline]") {
  ClusterSpec c = H100(1024);
  // 62 layers on PP 8: 8 on each middle rank. Giving the last rank (which also runs the output
  // layer) the smaller share is faster than giving it to the first; piling layers on the first
  // rank is slower still, by about its excess.
  Flags f = DeepSeekV3(8);
  for (auto& [flag, value] : f) {
    if (flag == "--num-layers") value = "62";
    if (flag == "--moe-layer-freq") value = "([0]*3+[1]*59)";
  }
  auto step = [&](const char* first, const char* last) {
    return EstimateStep(Read(With(f, {{"--decoder-first-pipeline-num-layers", first},
                                      {"--decoder-last-pipeline-num-layers", last}})), c).step_s;
  };
  double balanced = step("8", "6"), loaded_last = step("6", "8"), heavy_first = step("14", "6");
  CHECK(balanced < loaded_last);
  CHECK(heavy_first > balanced * 1.3);
  // Equal shares given explicitly model the same as the even split.
  Flags even = DeepSeekV3(8);
  for (auto& [flag, value] : even) {
    if (flag == "--num-layers") value = "64";
    if (flag == "--moe-layer-freq") value = "([0]*3+[1]*61)";
  }
  double implicit = EstimateStep(Read(even), c).step_s;
  double explicit_split = EstimateStep(Read(With(even, {{"--decoder-first-pipeline-num-layers", "8"},
                                                        {"--decoder-last-pipeline-num-layers", "8"}})), c).step_s;
  CHECK(explicit_split == Approx(implicit).epsilon(0.03));
}

TEST_CASE("an MTP depth costs a layer, a projection and an output layer, and counts in the FLOPs", "[sim][mtp]") {
  ClusterSpec c = H100(1024);
  auto base = Read(DeepSeekV3(8));
  auto mtp = Read(With(DeepSeekV3(8), {{"--mtp-num-layers", "1"}}));
  // Megatron's FLOP formula (reference §3.4) for DeepSeek-V3 at 4,096 tokens: 249.8 GFLOP per token
  // without MTP and 260.0 with one depth; the Megatron-Core MoE paper's Table 11 gives 260.7 as
  // the ratio of its TFLOP/s to its tokens/s for runs with one MTP layer.
  double tokens = 8192.0 * 4096.0;
  CHECK(MegatronModelFlops(base.model, 8192) / tokens / 1e9 == Approx(249.8).epsilon(0.002));
  CHECK(MegatronModelFlops(mtp.model, 8192) / tokens / 1e9 == Approx(260.0).epsilon(0.002));
  // The MTP depth runs on the last rank with the loss: more time, more parameters there.
  StepBreakdown b = EstimateStep(base, c), m = EstimateStep(mtp, c);
  CHECK(m.step_s > b.step_s * 1.05);
  CHECK(m.gemm_s > b.gemm_s);
  RankParams last_base = CountRankParams(base, 7), last_mtp = CountRankParams(mtp, 7);
  RankParams first_mtp = CountRankParams(mtp, 0);
  CHECK(last_mtp.dense > last_base.dense);
  CHECK(last_mtp.expert > last_base.expert);  // its layer is MoE, like the last decoder layer
  CHECK(first_mtp.dense == Approx(CountRankParams(base, 0).dense));
  CHECK(CountParams(mtp).total > CountParams(base).total);
  // And more memory on the last stage.
  CHECK(EstimateStageMemory(mtp, c, 7).max_reserved_b > EstimateStageMemory(base, c, 7).max_reserved_b);
  CHECK(EstimateStageMemory(mtp, c, 0).max_reserved_b == Approx(EstimateStageMemory(base, c, 0).max_reserved_b));
}

}  // namespace
}  // namespace attune::sim
