// Copyright attune authors.
//
// The heuristic on fine-grained MoE shapes: its own MoE readings, the value of a smaller expert
// parallel size, the parameter-state memory model, and pairs that do not detour through a saver
// when the lever has a move that fits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "comm_estimate.h"
#include "pairs.h"
#include "pipeline_estimate.h"
#include "param_memory.h"
#include "reading.h"
#include "scoring.h"
#include "view_fixtures.h"

using attune::CampaignView;
using attune::Move;
using attune::Recipe;
using attune::agents::EstimateMove;
using attune::agents::MakeScoringContext;
using attune::agents::ParallelMemoryChange;
using attune::agents::ParameterStateBytes;

namespace {

constexpr const char* kEp = "--expert-model-parallel-size";

// A DeepSeek-V3-like recipe: 60 layers, 256 experts of width 2048, TP 2 x PP 4 x EP `ep` on
// `nodes` nodes of 8 GPUs, with the distributed optimizer.
Recipe MoeRecipe(const std::string& ep, int nodes = 32, bool distributed_optimizer = true) {
  Recipe r = attune::testing::BaseRecipe();
  r.args.push_back({"--num-layers", {"60"}});
  r.args.push_back({"--hidden-size", {"7168"}});
  r.args.push_back({"--ffn-hidden-size", {"18432"}});
  r.args.push_back({"--num-attention-heads", {"56"}});
  r.args.push_back({"--swiglu", {}});
  r.args.push_back({"--num-experts", {"256"}});
  r.args.push_back({"--moe-ffn-hidden-size", {"2048"}});
  r.args.push_back({"--tensor-model-parallel-size", {"2"}});
  r.args.push_back({"--pipeline-model-parallel-size", {"4"}});
  r.args.push_back({"--expert-tensor-parallel-size", {"1"}});
  r.args.push_back({kEp, {ep}});
  if (distributed_optimizer) r.args.push_back({"--use-distributed-optimizer", {}});
  r.topology = {nodes, 8, "B200"};
  return r;
}

// The fixture's view with `recipe` as baseline and leader, measured at `peak_gib` of 180 GiB,
// and expert parallelism in the catalog with the Megatron catalog's priors.
CampaignView MoeView(const Recipe& recipe, double peak_gib) {
  CampaignView view = attune::testing::MakeView(peak_gib);
  view.cluster.device_memory_gib = 180;
  view.baseline = recipe;
  view.leader = recipe;
  view.levers.push_back(
      {"expert_parallel", "", {kEp}, {"memory_pressure", "oom", "communication"}, -0.05, -0.3,
       true});
  view.legal_moves.clear();
  for (const char* to : {"8", "16", "32", "128"}) {
    view.legal_moves.push_back({"expert_parallel", {{kEp, "64", to}}, "", {}, {}});
  }
  return view;
}

Move Ep(const std::string& from, const std::string& to) {
  return {"expert_parallel", {{kEp, from, to}}, "", {}, {}};
}

bool Has(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

TEST_CASE("few experts per rank across nodes reads as MoE imbalance and dispatch",
          "[agents][reading][moe]") {
  CampaignView wide = MoeView(MoeRecipe("64"), 110);
  auto diagnoses = attune::agents::ReadDiagnoses(wide);
  CHECK(attune::agents::SeverityOf(diagnoses, "moe_imbalance") > 0.5);
  CHECK(attune::agents::SeverityOf(diagnoses, "moe_dispatch") > 0.4);
  // 32 experts per rank inside one node: neither limits much.
  CampaignView narrow = MoeView(MoeRecipe("8", 1), 110);
  auto calm = attune::agents::ReadDiagnoses(narrow);
  CHECK(attune::agents::SeverityOf(calm, "moe_imbalance") == 0);
  CHECK(attune::agents::SeverityOf(calm, "moe_dispatch") == 0);
}

TEST_CASE("a smaller expert-parallel size is valued by the imbalance it relieves",
          "[agents][scoring][moe]") {
  CampaignView view = MoeView(MoeRecipe("64"), 110);
  auto ctx = MakeScoringContext(view);
  Move half = Ep("64", "32"), quarter = Ep("64", "16"), more = Ep("64", "128");
  auto e32 = EstimateMove(ctx, half, 0);
  auto e16 = EstimateMove(ctx, quarter, 1);
  CHECK(e32.direction == -1);
  CHECK(Has(e32.addresses, "moe_imbalance"));
  CHECK(Has(e32.addresses, "moe_dispatch"));
  // The catalog's reverse prior alone would say +5% for either.
  CHECK(e32.speed > 0.05);
  CHECK(e16.speed > e32.speed);
  CHECK(e16.gain > 0.1);
  auto up = EstimateMove(ctx, more, 2);
  CHECK(up.speed < 0);
  CHECK_FALSE(Has(up.addresses, "moe_imbalance"));
}

TEST_CASE("expert and pipeline sizes change memory by the parameter state they shard",
          "[agents][scoring][moe]") {
  Recipe r = MoeRecipe("64");
  // At EP 64 a rank holds 4 experts of 15 layers: about 2.6e9 parameters at 18 bytes (expert DP
  // is 1); at EP 16, 16 experts at 6 + 12/4 bytes. The difference is about 44 GiB.
  auto change = ParallelMemoryChange(r, {{kEp, "64", "16"}}, {}, 110);
  REQUIRE(change);
  CHECK(*change * 110 == Approx(44.2).epsilon(0.05));
  // Without the distributed optimizer the freed ranks shard nothing: 18 bytes per parameter
  // everywhere, so the same move costs three times the weights it adds.
  auto plain = ParallelMemoryChange(MoeRecipe("64", 32, false), {{kEp, "64", "16"}}, {}, 110);
  REQUIRE(plain);
  CHECK(*plain > *change);
  // The estimate replaces the catalog's: reverse -30% per step twice would be +129%.
  CampaignView view = MoeView(r, 110);
  auto e = EstimateMove(MakeScoringContext(view), Ep("64", "16"), 0);
  CHECK(e.memory_modelled);
  CHECK(e.memory == Approx(*change));
  CHECK(e.feasible);
  // A PP move that refits an uneven split is still a sharding move; the busiest stage is the one
  // counted: 60 layers as 12 + 18 + 18 + 12 hold half again an even stage's 15 per middle stage.
  Recipe uneven = r;
  uneven.args.push_back({"--decoder-first-pipeline-num-layers", {"12"}});
  uneven.args.push_back({"--decoder-last-pipeline-num-layers", {"12"}});
  auto even_state = ParameterStateBytes(r), uneven_state = ParameterStateBytes(uneven);
  REQUIRE(even_state);
  REQUIRE(uneven_state);
  CHECK(*uneven_state == Approx(*even_state * 18 / 15));
  CHECK(ParallelMemoryChange(uneven, {{"--pipeline-model-parallel-size", "4", "8"},
                                      {"--decoder-first-pipeline-num-layers", "12", "6"},
                                      {"--decoder-last-pipeline-num-layers", "12", "6"}}, {}, 110));
  // Other keys and unknown shapes keep the prior.
  CHECK_FALSE(ParallelMemoryChange(r, {{"--micro-batch-size", "1", "2"}}, {}, 110));
  CHECK_FALSE(ParameterStateBytes(attune::testing::BaseRecipe()));
}

TEST_CASE("a context-parallel move scales what is not parameter state in the peak",
          "[agents][scoring]") {
  // CP 2 -> 1 doubles the activations (the sequence is no longer split) and leaves the parameter
  // state as it was (DP x CP, over which the distributed optimizer shards, stays the same).
  Recipe r = MoeRecipe("16");
  r.args.push_back({"--context-parallel-size", {"2"}});
  const double state = *ParameterStateBytes(r) / (1024.0 * 1024 * 1024);
  const double peak = state + 20;  // 20 GiB of activations and buffers
  auto down = ParallelMemoryChange(r, {{"--context-parallel-size", "2", "1"}}, {}, peak);
  REQUIRE(down);
  CHECK(*down * peak == Approx(20));
  auto up = ParallelMemoryChange(r, {{"--context-parallel-size", "2", "4"}}, {}, peak);
  REQUIRE(up);
  CHECK(*up * peak == Approx(-10));
  // The catalog's reverse prior (+43% of the whole peak) would have doubled the parameter state too.
  CHECK(*down < 1 / (1 - 0.3) - 1);
}

TEST_CASE("a move that adds no memory is feasible even from a leader above the memory limit",
          "[agents][scoring]") {
  CampaignView view = attune::testing::MakeView(78.0);  // 97.5% of 80 GiB, and it ran
  Move neutral{"attention_backend", {{"--attention-backend", std::nullopt, "flash"}}, "", {}, {}};
  auto e = EstimateMove(MakeScoringContext(view), neutral, 0);
  CHECK(e.memory == 0);
  CHECK(e.feasible);
  Move hungry{"micro_batch_size", {{"--micro-batch-size", "1", "2"}}, "", {}, {}};
  CHECK_FALSE(EstimateMove(MakeScoringContext(view), hungry, 1).feasible);
}

TEST_CASE("no saver is paired with a change whose lever has a move that fits and gains as much",
          "[agents][pairs][moe]") {
  // EP 64 -> 8 does not fit at 110 GiB of 180; EP 64 -> 16 fits and relieves most of the
  // imbalance. Measuring it first is worth more than a saver followed by EP 8.
  CampaignView view = MoeView(MoeRecipe("64"), 110);
  // A saver that is faster on its own and saves enough for EP 8.
  view.levers.push_back({"saver", "", {"--saver"}, {"memory_pressure", "oom"}, 0.06, -0.35, false});
  view.legal_moves.push_back({"saver", {{"--saver", std::nullopt, ""}}, "", {}, {}});
  auto ctx = MakeScoringContext(view);
  std::vector<attune::agents::MoveEstimate> all;
  for (size_t i = 0; i < view.legal_moves.size(); ++i) {
    all.push_back(EstimateMove(ctx, view.legal_moves[i], static_cast<int>(i)));
  }
  auto e8 = std::find_if(all.begin(), all.end(), [](const auto& e) {
    return e.move->changes[0].to == std::optional<std::string>("8");
  });
  REQUIRE(e8 != all.end());
  CHECK_FALSE(e8->feasible);
  auto e16 = std::find_if(all.begin(), all.end(), [](const auto& e) {
    return e.move->changes[0].to == std::optional<std::string>("16");
  });
  REQUIRE(e16 != all.end());
  REQUIRE(e16->feasible);
  auto pair = attune::agents::BestPair(ctx, all);
  double pair_gain = pair ? pair->gain : 0;
  CHECK(pair_gain < e16->gain);
  if (pair) {
    // The pair is worth the saver plus what the hungry change adds beyond EP 16.
    CHECK(pair->beyond_gain == Approx(pair->hungry_gain - e16->gain));
    CHECK(pair->gain == Approx(pair->saver->speed + pair->confidence * pair->beyond_gain));
  }
}

TEST_CASE("an expert tensor-parallel move is valued by the dispatch traffic it adds or drops",
          "[agents][scoring][moe]") {
  constexpr const char* kEtp = "--expert-tensor-parallel-size";
  // The DeepSeek-V3-like recipe at ETP 2, EP 8, top-8 and the alltoall dispatcher, sequence 4096:
  // TP 2 x PP 4 on 32 nodes is DP 32, so the global batch of 64 is 2 micro-batches of 15 MoE
  // layers per stage; selective recompute runs no forward again.
  Recipe r = MoeRecipe("8");
  for (auto& arg : r.args) {
    if (arg.flag == kEtp) arg.values = {"2"};
  }
  r.args.push_back({"--seq-length", {"4096"}});
  r.args.push_back({"--moe-router-topk", {"8"}});
  r.args.push_back({"--moe-token-dispatcher-type", {"alltoall"}});
  r.args.push_back({"--sequence-parallel", {}});
  CampaignView view = MoeView(r, 110);  // a 1 s step on H100s: NVLink at 80% of 450 GB/s
  view.levers.push_back({"expert_tensor_parallel", "", {kEtp}, {"communication", "memory_pressure"},
                         -0.05, -0.1, true});
  // The all-gather of each rank's 2048 x 8 routed rows over the ETP pair, and the reduce-scatter
  // back, in the forward and the backward: 2 collectives x 2 passes x 15 layers x 2 micro-batches.
  const double gathered = 2 * 2048.0 * 8 * 7168 * 2;
  const double one = 0.5 * gathered / (450e9 * 0.8);
  const double seconds = 2 * 15 * 2 * 2 * one;
  std::optional<double> at2 = attune::agents::ExpertDispatchSeconds(r, view.cluster);
  REQUIRE(at2);
  CHECK(*at2 == Approx(seconds).epsilon(1e-9));
  auto ctx = MakeScoringContext(view);
  const Move down{"expert_tensor_parallel", {{kEtp, "2", "1"}}, "", {}, {}};
  auto e = EstimateMove(ctx, down, 0);
  CHECK(e.direction == -1);
  CHECK(e.speed == Approx(seconds / (1.0 - seconds)));
  CHECK(e.speed > 0.05);  // the catalog's reverse prior alone
  // What the campaign measured for the same change from other bases counts as much as the
  // estimate: ETP 2 -> 1 measured 20% and 10% slower from two other candidates (a different
  // change, ETP 2 -> 4, does not count).
  CampaignView measured = view;
  auto record = [&](const std::string& id, const std::string& base, const std::string& lever,
                    std::vector<attune::Change> changes, double speedup) {
    attune::CandidateRecord c;
    c.candidate_id = id;
    c.base_id = base;
    c.lever_id = lever;
    c.changes = std::move(changes);
    c.outcome = attune::Outcome::kWithinNoise;
    c.speedup_vs_baseline = speedup;
    measured.history.push_back(c);
  };
  record("c001", "baseline", "recompute", {{"--recompute-granularity", "selective", std::nullopt}}, 1.05);
  record("c002", "c001", "expert_tensor_parallel", {{kEtp, "2", "1"}}, 1.05 * 0.8);
  record("c003", "baseline", "recompute", {{"--recompute-granularity", "selective", "full"}}, 0.9);
  record("c004", "c003", "expert_tensor_parallel", {{kEtp, "2", "1"}}, 0.9 * 0.9);
  record("c005", "c003", "expert_tensor_parallel", {{kEtp, "2", "4"}}, 0.9 * 0.5);
  auto measured_ctx = MakeScoringContext(measured);
  CHECK(EstimateMove(measured_ctx, down, 0).speed ==
        Approx((seconds / (1.0 - seconds) - 0.2 - 0.1) / 3));
  // Under the allgather dispatcher, ETP 8 gathers the tokens of 64 ranks over 8 nodes instead of
  // 8 ranks of one board: far slower, whatever the catalog says.
  Recipe ag = r;
  for (auto& arg : ag.args) {
    if (arg.flag == "--moe-token-dispatcher-type") arg.values = {"allgather"};
    if (arg.flag == kEtp) arg.values = {"1"};
  }
  CampaignView ag_view = MoeView(ag, 110);
  ag_view.levers = view.levers;
  auto ag_ctx = MakeScoringContext(ag_view);
  const Move up{"expert_tensor_parallel", {{kEtp, "1", "8"}}, "", {}, {}};
  CHECK(EstimateMove(ag_ctx, up, 0).speed < -0.2);
  // A dense model has no dispatch.
  Recipe dense = attune::testing::BaseRecipe();
  dense.args.push_back({"--num-layers", {"32"}});
  CHECK(attune::agents::ExpertDispatchSeconds(dense, view.cluster) == std::optional<double>(0.0));
}

TEST_CASE("the EP overlap is valued by the all-to-all it hides", "[agents][scoring][moe]") {
  // The DeepSeek-V3-like recipe at EP 8 (one node's NVLink), top-8, the alltoall dispatcher and
  // sequence 4096: TP 2 x PP 4 on 32 nodes is 2 micro-batches of 15 MoE layers per stage. Each
  // rank sends its 2048 tokens x 8 routed rows of 7168 BF16 values, 7/8 of them to its peers, in
  // the dispatch and back in the combine, forward and backward.
  Recipe r = MoeRecipe("8");
  r.args.push_back({"--seq-length", {"4096"}});
  r.args.push_back({"--moe-router-topk", {"8"}});
  r.args.push_back({"--moe-token-dispatcher-type", {"alltoall"}});
  r.args.push_back({"--sequence-parallel", {}});
  CampaignView view = MoeView(r, 110);  // a 1 s step on H100s: NVLink at 80% of 450 GB/s
  view.levers.push_back({"moe_ep_overlap",
                         "",
                         {"--overlap-moe-expert-parallel-comm"},
                         {"communication"},
                         0.05,
                         0.03,
                         false});
  const double rows = 2048.0 * 8 * 7168 * 2;
  const double transfer = 7.0 / 8 * rows / (450e9 * 0.8);
  const double seconds = 2 * 15 * 2 * 2 * transfer;
  std::optional<double> a2a = attune::agents::ExpertAllToAllSeconds(r, view.cluster);
  REQUIRE(a2a);
  CHECK(*a2a == Approx(seconds).epsilon(1e-9));
  const Move on{
      "moe_ep_overlap", {{"--overlap-moe-expert-parallel-comm", std::nullopt, ""}}, "", {}, {}};
  auto ctx = MakeScoringContext(view);
  const double hidden = 0.7 * std::min(seconds, 0.5);
  CHECK(EstimateMove(ctx, on, 0).speed == Approx(hidden / (1 - hidden)));
  // At EP 16 half of each rank's peers sit on another node: those rows take the 400 Gb/s NIC
  // while the rest take NVLink, and the NIC's share is the longer.
  Recipe wide = r;
  for (auto& arg : wide.args) {
    if (arg.flag == kEp) arg.values = {"16"};
  }
  const double far = 8.0 / 16 * rows / (50e9 * 0.8);
  std::optional<double> a2a16 = attune::agents::ExpertAllToAllSeconds(wide, view.cluster);
  REQUIRE(a2a16);
  CHECK(*a2a16 == Approx(2 * 15 * 2 * 2 * far).epsilon(1e-9));
  CHECK(*a2a16 > 5 * seconds);
  // The allgather dispatcher runs no all-to-all (the overlap is not legal there), nor does EP 1.
  Recipe ag = r;
  for (auto& arg : ag.args) {
    if (arg.flag == "--moe-token-dispatcher-type") arg.values = {"allgather"};
  }
  CHECK(attune::agents::ExpertAllToAllSeconds(ag, view.cluster) == std::optional<double>(0.0));
  Recipe ep1 = r;
  for (auto& arg : ep1.args) {
    if (arg.flag == kEp) arg.values = {"1"};
  }
  CHECK(attune::agents::ExpertAllToAllSeconds(ep1, view.cluster) == std::optional<double>(0.0));
}

TEST_CASE("a MoE recipe's output layer weighs what the measured rate says, when that is less",
          "[agents][scoring][moe]") {
  // The DeepSeek-V3-like recipe with a 129,280 vocabulary, measured at 1,000 tokens/s/GPU on
  // H100s: the logits GEMM and loss, 6hV FLOPs a token at 60% of 989 TFLOP/s, take under 1% of
  // the GPU time, where the layers' active weights would make them about a layer's worth.
  Recipe r = MoeRecipe("8");
  r.args.push_back({"--vocab-size", {"129280"}});
  r.args.push_back({"--seq-length", {"4096"}});
  CampaignView view = MoeView(r, 110);
  const double flops = attune::agents::OutputLayerInLayers(r, {});
  REQUIRE(flops > 0.5);
  const double share = 1000 * 6 * 7168.0 * 129280 / (0.6 * 989e12);
  const double measured =
      attune::agents::MoeOutputLayerInLayers(r, {}, view.cluster, view.leader_measurement->tokens_per_s_per_gpu);
  CHECK(measured == Approx(share / (1 - share) * 60));
  CHECK(measured < flops);
  // A rate that would make the output layer the larger share keeps the FLOP ratio (min).
  CHECK(attune::agents::MoeOutputLayerInLayers(r, {}, view.cluster, 1e6) == Approx(flops));
  // A dense recipe keeps the FLOP ratio whatever the rate.
  Recipe dense = attune::testing::BaseRecipe();
  dense.args.push_back({"--num-layers", {"32"}});
  dense.args.push_back({"--hidden-size", {"4096"}});
  dense.args.push_back({"--num-attention-heads", {"32"}});
  dense.args.push_back({"--vocab-size", {"128256"}});
  dense.args.push_back({"--seq-length", {"8192"}});
  CHECK(attune::agents::MoeOutputLayerInLayers(dense, {}, view.cluster, 1000) ==
        Approx(attune::agents::OutputLayerInLayers(dense, {})));
}

TEST_CASE("without --vocab-size the output layer is sized by the tokenizer type",
          "[agents][scoring]") {
  // Megatron-LM's Mixtral example names --tokenizer-type Llama2Tokenizer and no --vocab-size: the
  // output layer is Llama 2's 32,000 tokens, not nothing. h = 4096, s = 4096; the layers' active
  // weights are what ReadLayerWeights counts.
  Recipe r = attune::testing::BaseRecipe();
  r.args.push_back({"--num-layers", {"32"}});
  r.args.push_back({"--hidden-size", {"4096"}});
  r.args.push_back({"--num-attention-heads", {"32"}});
  r.args.push_back({"--seq-length", {"4096"}});
  r.args.push_back({"--tokenizer-type", {"Llama2Tokenizer"}});
  REQUIRE(attune::agents::VocabSize(r, {}) == std::optional<double>(32000));
  const double llama = attune::agents::OutputLayerInLayers(r, {});
  CHECK(llama > 0.1);
  Recipe given = r;
  given.args.push_back({"--vocab-size", {"64000"}});
  CHECK(attune::agents::OutputLayerInLayers(given, {}) == Approx(2 * llama));
  // A tokenizer whose vocabulary is in a file says nothing: no output layer is assumed.
  Recipe hf = r;
  for (auto& arg : hf.args) {
    if (arg.flag == "--tokenizer-type") arg.values = {"HuggingFaceTokenizer"};
  }
  CHECK_FALSE(attune::agents::VocabSize(hf, {}).has_value());
  CHECK(attune::agents::OutputLayerInLayers(hf, {}) == 0);
}
