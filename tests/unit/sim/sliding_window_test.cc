// Sliding-window attention in the simulated cluster: Megatron's --window-size and
// --window-attn-skip-freq in the mapping, the flash kernels' smaller span in the step time, the
// FLOP count, and calibration rows that state their window (issue 24).
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "hardware.h"
#include "perf_model.h"
#include "predict.h"
#include "setup.h"
#include "sim_mapping.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

using testing::Flags;
using testing::MegatronRecipe;

TrainingSetup Setup(Flags extra, int world = 8) {
  // gpt-oss-20b's attention (64 heads of 64, 8 KV groups) on a dense stand-in, long sequences.
  Flags f = {{"--num-layers", "24"},          {"--hidden-size", "2880"},
             {"--ffn-hidden-size", "8192"},   {"--num-attention-heads", "64"},
             {"--kv-channels", "64"},         {"--group-query-attention", ""},
             {"--num-query-groups", "8"},     {"--seq-length", "16384"},
             {"--swiglu", ""},                {"--vocab-size", "201088"},
             {"--micro-batch-size", "1"},     {"--global-batch-size", "64"},
             {"--tensor-model-parallel-size", "2"}, {"--sequence-parallel", ""},
             {"--use-distributed-optimizer", ""},   {"--bf16", ""}};
  f.insert(f.end(), extra.begin(), extra.end());
  auto s = megatron::ReadSimSetup(MegatronRecipe(f), world);
  REQUIRE(s.ok());
  return static_cast<const TrainingSetup&>(*s);
}

TEST_CASE("the Megatron mapping reads the window and which layers use it", "[sim][window]") {
  CHECK(Setup({}).model.attention_window == 0);
  auto every = Setup({{"--window-size", "128,0"}});
  CHECK(every.model.attention_window == 128);
  CHECK(every.model.windowed_layers == 24);
  // An integer N: every Nth layer (1-based) attends to the whole sequence.
  auto alternating = Setup({{"--window-size", "128,0"}, {"--window-attn-skip-freq", "2"}});
  CHECK(alternating.model.windowed_layers == 12);
  auto one_in_four = Setup({{"--window-size", "4096,0"}, {"--window-attn-skip-freq", "4"}});
  CHECK(one_in_four.model.windowed_layers == 18);
  // A list pattern marks the windowed layers with 1.
  auto listed = Setup({{"--window-size", "1024,0"}, {"--window-attn-skip-freq", "([1]*5+[0]*1)*4"}});
  CHECK(listed.model.windowed_layers == 20);
  // -1 is Megatron's unbounded window: full attention.
  CHECK(Setup({{"--window-size", "-1,0"}}).model.attention_window == 0);
  // The same list grammar serves --moe-layer-freq, with repeats of groups.
  auto moe = Setup({{"--num-experts", "8"}, {"--moe-layer-freq", "([0]*1+[1]*3)*6"}});
  CHECK(moe.model.MoeLayers() == 18);
  CHECK(Setup({{"--num-experts", "8"}, {"--moe-layer-freq", "[0,1,1,1]*6"}}).model.MoeLayers() == 18);
  CHECK(Setup({{"--num-experts", "8"}, {"--moe-layer-freq", "([0]*3+[1]*21)"}}).model.MoeLayers() == 21);
}

TEST_CASE("windowed layers cost the attention of their window, not of the sequence", "[sim][window]") {
  ClusterSpec cluster = DefaultCluster(*FindGpu("H100"), 8);
  StepBreakdown full = EstimateStep(Setup({}), cluster);
  StepBreakdown half = EstimateStep(Setup({{"--window-size", "128,0"}, {"--window-attn-skip-freq", "2"}}), cluster);
  StepBreakdown all = EstimateStep(Setup({{"--window-size", "128,0"}}), cluster);
  REQUIRE(full.attention_s > 0);
  // At 16k tokens a 128-token window (plus one partly masked key tile) is ~3% of causal attention:
  // all layers windowed leave a few percent, half of them a little over half.
  CHECK(all.attention_s < 0.06 * full.attention_s);
  CHECK(half.attention_s == Approx(0.5 * (full.attention_s + all.attention_s)).epsilon(0.01));
  CHECK(all.step_s < half.step_s);
  CHECK(half.step_s < full.step_s);
  // A window as long as the sequence is full attention.
  StepBreakdown wide = EstimateStep(Setup({{"--window-size", "16384,0"}}), cluster);
  CHECK(wide.attention_s == Approx(full.attention_s));
  // The FLOP count (Megatron's convention) drops with the window, the GEMMs' share stays.
  CHECK(half.model_flops < full.model_flops);
  CHECK(half.model_flops > 0.5 * full.model_flops);
}

TEST_CASE("a calibration row with a stated window is modelled, one without is not", "[sim][window][predict]") {
  CalibrationRow row = {{"source", "test"}, {"model", "gpt-oss-20b"}, {"layers", "24"},
                        {"hidden", "2880"}, {"heads", "64"}, {"kv_heads", "8"}, {"head_dim", "64"},
                        {"vocab", "201088"}, {"seq_len", "8192"}, {"moe_experts", "32"},
                        {"moe_topk", "4"}, {"moe_ffn_hidden", "2880"}, {"gpu", "B200"},
                        {"num_gpus", "64"}, {"tp", "1"}, {"pp", "1"}, {"cp", "1"}, {"ep", "8"},
                        {"mbs", "1"}, {"gbs", "128"}, {"precision", "BF16"},
                        {"attention", "gqa (alternating sliding-window 128 / full)"}};
  auto unstated = ModelFromCalibrationRow(row);
  REQUIRE_FALSE(unstated.ok());
  CHECK_THAT(unstated.status().message(), Catch::Contains("not modelled: attention"));
  row.insert_or_assign("attention_window", "128");
  row.insert_or_assign("window_attn_skip_freq", "2");
  auto stated = ModelFromCalibrationRow(row);
  REQUIRE(stated.ok());
  CHECK(stated->setup.model.attention_window == 128);
  CHECK(stated->setup.model.windowed_layers == 12);
  CHECK(stated->setup.model.kv_channels == 64);
  CHECK(stated->setup.model.swiglu);  // gated experts when the row gives no dense width
  // Linear attention stays unmodelled whatever the window.
  row.insert_or_assign("attention", "gqa (hybrid with linear attention)");
  CHECK_FALSE(ModelFromCalibrationRow(row).ok());
}

}  // namespace
}  // namespace attune::sim
