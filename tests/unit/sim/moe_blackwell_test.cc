// Blackwell Ultra GPUs, low-precision recipes, the MoE terms of the step-time model, MoE rows in
// `sim predict`, and the accuracy bench's slices (issue 24).
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "accuracy.h"
#include "csv.h"
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

// Its plan on `world` GPUs, through the Megatron stack's mapping.
TrainingSetup Setup(const Flags& flags, int world) {
  auto s = megatron::ReadSimSetup(MegatronRecipe(flags), world);
  REQUIRE(s.ok());
  return static_cast<const TrainingSetup&>(*s);
}

Flags DenseLlama(Flags extra = {}) {
  Flags f = {{"--num-layers", "32"},          {"--hidden-size", "4096"},
             {"--ffn-hidden-size", "14336"},  {"--num-attention-heads", "32"},
             {"--group-query-attention", ""}, {"--num-query-groups", "8"},
             {"--seq-length", "8192"},        {"--swiglu", ""},
             {"--vocab-size", "128256"},      {"--micro-batch-size", "1"},
             {"--global-batch-size", "64"},   {"--tensor-model-parallel-size", "2"},
             {"--sequence-parallel", ""},     {"--use-distributed-optimizer", ""},
             {"--bf16", ""}};
  f.insert(f.end(), extra.begin(), extra.end());
  return f;
}

// A fine-grained MoE (Qwen3-30B-like) on 16 GPUs with EP 8.
Flags Moe(int experts, Flags extra = {}) {
  Flags f = {{"--num-layers", "24"},           {"--hidden-size", "2048"},
             {"--ffn-hidden-size", "6144"},    {"--num-attention-heads", "32"},
             {"--group-query-attention", ""},  {"--num-query-groups", "4"},
             {"--seq-length", "4096"},         {"--swiglu", ""},
             {"--vocab-size", "151936"},       {"--micro-batch-size", "1"},
             {"--global-batch-size", "256"},   {"--num-experts", std::to_string(experts)},
             {"--moe-router-topk", "8"},       {"--moe-ffn-hidden-size", "768"},
             {"--expert-model-parallel-size", "8"}, {"--moe-grouped-gemm", ""},
             {"--moe-token-dispatcher-type", "alltoall"}, {"--disable-bias-linear", ""},
             {"--use-distributed-optimizer", ""}, {"--bf16", ""}};
  f.insert(f.end(), extra.begin(), extra.end());
  return f;
}

ClusterSpec Cluster(const char* gpu, int world) { return DefaultCluster(*FindGpu(gpu), world); }

TEST_CASE("B300 and GB300 are found under their usual spellings", "[sim][hardware]") {
  for (const char* name : {"B300", "HGX B300", "b300-sxm", "B300-SXM-270GB"}) {
    REQUIRE(FindGpu(name));
    CHECK(FindGpu(name)->name == "B300");
  }
  for (const char* name : {"GB300", "gb300-nvl72", "GB300 NVL72"}) {
    REQUIRE(FindGpu(name));
    CHECK(FindGpu(name)->name == "GB300");
  }
  CHECK(FindGpu("GB200")->name == "GB200");
  CHECK(FindGpu("B200-SXM-180GB")->name == "B200");
  CHECK(FindGpu("H100-SXM-80GB")->name == "H100");
  CHECK(FindGpu("GB300")->nvlink_domain == 72);
  CHECK(FindGpu("B300")->nvlink_domain == 8);
  CHECK_FALSE(FindGpu("MI300X"));
  // The launcher's `with: {gpu: ...}` takes them too.
  auto gb300 = ParseClusterConfig(nlohmann::json{{"gpu", "GB300-NVL72"}, {"nodes", 18}, {"gpus_per_node", 4}}, 1);
  REQUIRE(gb300.ok());
  CHECK(gb300->gpu.name == "GB300");
  CHECK(gb300->NvlinkDomain() == 72);
  auto b300 = ParseClusterConfig(nlohmann::json{{"gpu", "B300"}}, 1);
  REQUIRE(b300.ok());
  CHECK(b300->inter_node_gbit_s == 800);
  CHECK_FALSE(ParseClusterConfig(nlohmann::json{{"gpu", "B400"}}, 1).ok());
}

TEST_CASE("Blackwell Ultra's datasheet advantages show in the step time", "[sim][hardware]") {
  GpuSpec b200 = *FindGpu("B200"), b300 = *FindGpu("B300");
  GpuSpec gb200 = *FindGpu("GB200"), gb300 = *FindGpu("GB300");
  CHECK(b300.peak_fp4_tflops > 1.4 * b200.peak_fp4_tflops);
  CHECK(b300.peak_bf16_tflops == b200.peak_bf16_tflops);
  CHECK(gb300.peak_bf16_tflops >= gb200.peak_bf16_tflops);
  CHECK(b300.memory_gib > 1.4 * b200.memory_gib);
  CHECK(b300.inter_node_gbit_s == 2 * b200.inter_node_gbit_s);
  TrainingSetup fp4 = Setup(DenseLlama({{"--fp4-format", "e2m1"}}), 16);
  CHECK(EstimateStep(fp4, Cluster("B300", 16)).step_s < 0.9 * EstimateStep(fp4, Cluster("B200", 16)).step_s);
  TrainingSetup bf16 = Setup(DenseLlama(), 16);
  CHECK(EstimateStep(bf16, Cluster("GB300", 16)).step_s < EstimateStep(bf16, Cluster("GB200", 16)).step_s);
  // Twice the softmax exponential rate: attention no slower, sometimes faster.
  CHECK(EstimateStep(bf16, Cluster("B300", 16)).attention_s <= EstimateStep(bf16, Cluster("B200", 16)).attention_s);
}

TEST_CASE("NVFP4 GEMMs beat FP8 beat BF16 while attention and communication stay BF16",
          "[sim][precision]") {
  ClusterSpec c = Cluster("GB200", 16);
  StepBreakdown bf16 = EstimateStep(Setup(DenseLlama(), 16), c);
  StepBreakdown fp8 = EstimateStep(Setup(DenseLlama({{"--fp8-format", "hybrid"}}), 16), c);
  StepBreakdown fp4 = EstimateStep(Setup(DenseLlama({{"--fp4-format", "e2m1"}}), 16), c);
  CHECK(fp8.gemm_s < 0.7 * bf16.gemm_s);
  CHECK(fp4.gemm_s < 0.7 * fp8.gemm_s);
  CHECK(fp4.step_s < fp8.step_s);
  CHECK(fp8.step_s < bf16.step_s);
  CHECK(fp8.attention_s == Approx(bf16.attention_s));
  CHECK(fp4.attention_s == Approx(bf16.attention_s));
  CHECK(fp4.tp_comm_s == Approx(bf16.tp_comm_s));
  // Quantization is elementwise traffic the BF16 run does not have.
  CHECK(fp8.elementwise_s > bf16.elementwise_s);
}

TEST_CASE("MXFP8 and NVFP4 need Blackwell, as Transformer Engine checks", "[sim][precision]") {
  // Megatron's checks run in the Megatron stack's mapping (sim_rules.cc): the plan's refusal.
  auto refusal = [](const Flags& flags, const char* gpu) {
    auto plan = megatron::MegatronSimulationPlan(MegatronRecipe(flags), ToClusterInfo(Cluster(gpu, 16)), 16);
    REQUIRE(plan.ok());
    return plan->refusal;
  };
  Flags fp4 = DenseLlama({{"--fp4-format", "e2m1"}});
  auto refused = refusal(fp4, "H100");
  REQUIRE(refused);
  CHECK_THAT(refused->message, Catch::Contains("required for NVFP4 execution"));
  CHECK_FALSE(refusal(fp4, "B200"));
  Flags mx = DenseLlama({{"--fp8-format", "e4m3"}, {"--fp8-recipe", "mxfp8"}});
  REQUIRE(refusal(mx, "H200"));
  CHECK_FALSE(refusal(mx, "GB300"));
}

TEST_CASE("FP8 recipes differ in their quantization traffic, not in the GEMM peak", "[sim][precision]") {
  ClusterSpec c = Cluster("B200", 16);
  auto step = [&](const char* recipe) {
    return EstimateStep(Setup(DenseLlama({{"--fp8-format", "e4m3"}, {"--fp8-recipe", recipe}}), 16), c);
  };
  StepBreakdown delayed = step("delayed"), tensorwise = step("tensorwise"), mx = step("mxfp8");
  CHECK(delayed.gemm_s == Approx(mx.gemm_s));
  CHECK(tensorwise.elementwise_s > delayed.elementwise_s);
  CHECK(mx.elementwise_s > delayed.elementwise_s);
}

TEST_CASE("FP8 parameter all-gather moves half the bytes of BF16", "[sim][precision]") {
  ClusterSpec c = Cluster("H100", 16);
  Flags fp8 = {{"--fp8-format", "hybrid"}};
  StepBreakdown plain = EstimateStep(Setup(DenseLlama(fp8), 16), c);
  fp8.push_back({"--fp8-param-gather", ""});
  StepBreakdown gathered = EstimateStep(Setup(DenseLlama(fp8), 16), c);
  CHECK(gathered.dp_comm_s < plain.dp_comm_s);
}

TEST_CASE("expert load imbalance slows a MoE step; forced balancing removes it", "[sim][moe]") {
  ClusterSpec c = Cluster("H100", 16);
  TrainingSetup s = Setup(Moe(128), 16);
  ModelFactors balanced, skewed;
  balanced.moe_expert_load_cv = 0;
  skewed.moe_expert_load_cv = 0.6;
  CHECK(MoeBusiestLoad(s, skewed) > MoeBusiestLoad(s, balanced));
  CHECK(MoeBusiestLoad(s, balanced) >= 1.0);
  CHECK(EstimateStep(s, c, skewed).step_s > 1.05 * EstimateStep(s, c, balanced).step_s);
  TrainingSetup forced = Setup(Moe(128, {{"--moe-router-force-load-balancing", ""}}), 16);
  CHECK(MoeBusiestLoad(forced, skewed) == 1.0);
  // Token dropping caps the busiest rank at the capacity factor.
  TrainingSetup capped = Setup(Moe(128, {{"--moe-expert-capacity-factor", "1.05"}}), 16);
  CHECK(MoeBusiestLoad(capped, skewed) <= 1.05);
}

TEST_CASE("fewer tokens per expert run the grouped GEMM less efficiently", "[sim][moe]") {
  // Same active FLOPs per token (top-8 of width 768); 32x more experts share the same tokens
  // (128 rows per expert instead of 4096).
  ClusterSpec c = Cluster("H100", 16);
  ModelFactors even;
  even.moe_expert_load_cv = 0;  // isolate the GEMM shape from the routing statistics
  Flags short_sequences = {{"--seq-length", "1024"}};
  StepBreakdown few = EstimateStep(Setup(Moe(16, short_sequences), 16), c, even);
  StepBreakdown many = EstimateStep(Setup(Moe(512, short_sequences), 16), c, even);
  CHECK(many.gemm_s > 1.1 * few.gemm_s);
}

TEST_CASE("all-to-all across nodes costs more than within NVLink", "[sim][moe]") {
  StepBreakdown in_node = EstimateStep(Setup(Moe(128), 16), Cluster("H100", 16));
  ClusterSpec wide = Cluster("H100", 16);
  wide.gpus_per_node = 4;
  wide.nodes = 4;
  wide.gpu.nvlink_domain = 4;
  StepBreakdown across = EstimateStep(Setup(Moe(128), 16), wide);
  CHECK(across.ep_comm_s > 2 * in_node.ep_comm_s);
  // An NVL72 domain keeps the same EP group on NVLink.
  StepBreakdown nvl72 = EstimateStep(Setup(Moe(128), 16), Cluster("GB200", 16));
  CHECK(nvl72.ep_comm_s < across.ep_comm_s);
}

TEST_CASE("the EP all-to-all overlap hides traffic only up to the layer compute it runs under", "[sim][moe]") {
  // The same DeepEP plan on one NVL72 domain, where the dispatch is a fraction of the layer's
  // compute, and on H100 nodes of 2 GPUs, where EP 8 crosses four nodes and the dispatch outweighs
  // the compute.
  const TrainingSetup plain = Setup(Moe(128, {{"--moe-token-dispatcher-type", "flex"}}), 16);
  const TrainingSetup overlapped =
      Setup(Moe(128, {{"--moe-token-dispatcher-type", "flex"}, {"--overlap-moe-expert-parallel-comm", ""}}), 16);
  REQUIRE(overlapped.feat.overlap_moe_comm);
  const ModelFactors factors;
  const ClusterSpec rack = Cluster("GB200", 16);
  const double rack_plain = EstimateStep(plain, rack).ep_comm_s;
  const double rack_overlapped = EstimateStep(overlapped, rack).ep_comm_s;
  CHECK(rack_overlapped == Approx(rack_plain * (1 - factors.comm_overlap_hidden)));
  ClusterSpec nodes = Cluster("H100", 16);
  nodes.gpus_per_node = 2;
  nodes.nodes = 8;
  nodes.gpu.nvlink_domain = 2;
  const StepBreakdown cross_plain = EstimateStep(plain, nodes);
  const StepBreakdown cross_overlapped = EstimateStep(overlapped, nodes);
  const double compute = cross_plain.gemm_s + cross_plain.attention_s + cross_plain.elementwise_s;
  REQUIRE(cross_plain.ep_comm_s > compute);  // more traffic than compute: the case in point
  // At most comm_overlap_hidden of the layers' compute is hidden, not of the traffic.
  CHECK(cross_overlapped.ep_comm_s >= cross_plain.ep_comm_s - factors.comm_overlap_hidden * compute - 1e-9);
  CHECK(cross_overlapped.ep_comm_s > 1.5 * cross_plain.ep_comm_s * (1 - factors.comm_overlap_hidden));
  CHECK(cross_overlapped.ep_comm_s < cross_plain.ep_comm_s);
}

TEST_CASE("NCCL's all-to-all runs below the bus bandwidth only across a multi-node NVLink domain",
          "[sim][moe]") {
  // The alltoall dispatcher (Moe's default here) among 16 EP-group GPUs of one NVL72 domain pays
  // mnnvl_alltoall_efficiency; DeepEP/HybridEP (flex) does not, nor does an 8-GPU board.
  ModelFactors full;
  full.mnnvl_alltoall_efficiency = 1.0;
  const TrainingSetup a2a = Setup(Moe(128), 16);
  const StepBreakdown nvl72 = EstimateStep(a2a, Cluster("GB200", 16));
  const StepBreakdown nvl72_full = EstimateStep(a2a, Cluster("GB200", 16), full);
  CHECK(nvl72.ep_comm_s > 1.5 * nvl72_full.ep_comm_s);
  CHECK(nvl72.step_s > nvl72_full.step_s);
  const TrainingSetup flex = Setup(Moe(128, {{"--moe-token-dispatcher-type", "flex"}}), 16);
  CHECK(EstimateStep(flex, Cluster("GB200", 16)).ep_comm_s ==
        Approx(EstimateStep(flex, Cluster("GB200", 16), full).ep_comm_s));
  CHECK(EstimateStep(a2a, Cluster("H100", 16)).ep_comm_s ==
        Approx(EstimateStep(a2a, Cluster("H100", 16), full).ep_comm_s));
}

TEST_CASE("The token dispatchers move tokens within the expert ETP x EP grid", "[sim][moe]") {
  // Megatron's dispatchers work in the expert grid: allgather gathers over ETP x EP (not over the
  // attention's TP x EP), alltoall adds an all-gather over ETP after its EP all-to-all, and flex
  // sends each token to every ETP rank of its experts. Splitting the experts by ETP therefore
  // costs dispatch traffic with every dispatcher.
  // Moe(128) with these flags set (replaced where Moe gives them).
  auto moe = [](const Flags& set) {
    Flags f = Moe(128);
    for (const auto& [key, value] : set) {
      auto it = std::find_if(f.begin(), f.end(), [&](const auto& kv) { return kv.first == key; });
      if (it != f.end()) it->second = value;
      else f.emplace_back(key, value);
    }
    return f;
  };
  // Megatron accepts each of these plans; their EP communication per iteration.
  auto ep_comm = [&](const char* dispatcher, int etp) {
    Flags set = {{"--expert-model-parallel-size", "4"},
                 {"--moe-token-dispatcher-type", dispatcher},
                 {"--expert-tensor-parallel-size", std::to_string(etp)}};
    const TrainingSetup setup = Setup(moe(set), 16);
    INFO(dispatcher << " ETP " << etp << ": " << (setup.refusal ? setup.refusal->message : ""));
    REQUIRE_FALSE(setup.refusal);
    REQUIRE(setup.par.etp == etp);
    return EstimateStep(setup, Cluster("H100", 16)).ep_comm_s;
  };
  // Allgather: 4 ranks of one board at ETP 1; 16 ranks over two nodes at ETP 4.
  const double allgather1 = ep_comm("allgather", 1), allgather4 = ep_comm("allgather", 4);
  CHECK(allgather4 > 4 * allgather1);
  const double alltoall1 = ep_comm("alltoall", 1), alltoall2 = ep_comm("alltoall", 2);
  CHECK(alltoall2 > 1.5 * alltoall1);
  const double flex1 = ep_comm("flex", 1), flex2 = ep_comm("flex", 2);
  CHECK(flex2 > 1.5 * flex1);
  // The attention's TP does not widen the allgather when the experts are not split: TP 2 with
  // ETP 1 gathers over EP alone, half the tokens per micro-batch in twice the micro-batches, so
  // the step moves what TP 1 moves (over EP x TP it would move 7/3 times as much).
  Flags tp2 = {{"--expert-model-parallel-size", "4"},
               {"--moe-token-dispatcher-type", "allgather"},
               {"--expert-tensor-parallel-size", "1"},
               {"--tensor-model-parallel-size", "2"},
               {"--sequence-parallel", ""}};
  const double tp2_comm = EstimateStep(Setup(moe(tp2), 16), Cluster("H100", 16)).ep_comm_s;
  CHECK(tp2_comm < 1.3 * allgather1);
}

const char* kHeader =
    "source,model,params_b,layers,hidden,ffn_hidden,heads,kv_heads,vocab,seq_len,moe_experts,"
    "moe_topk,gpu,num_gpus,tp,pp,vpp,cp,ep,dp,mbs,gbs,precision,recompute,seq_parallel,"
    "dist_optimizer,measured_tflops_per_gpu,measured_tokens_per_sec_per_gpu,mfu,notes,etp,"
    "moe_ffn_hidden,moe_shared_ffn_hidden,moe_layer_freq_or_dense_layers,attention,fp8_recipe,"
    "framework,url\n";

CalibrationRow Row(const std::string& line) {
  auto table = ParseCsvTable(std::string(kHeader) + line + "\n");
  REQUIRE(table.ok());
  REQUIRE(table->rows.size() == 1);
  return table->rows[0];
}

const char* kMoeRow =
    "test,Mixtral-like,47,32,4096,14336,32,8,32000,4096,8,2,H100-SXM-80GB,64,2,4,,1,8,8,1,256,"
    "BF16,,,,,1500,,NOTES,,14336,,,gqa,,megatron-lm,";

std::string WithNotes(const std::string& notes) {
  std::string row = kMoeRow;
  return row.replace(row.find("NOTES"), 5, notes);
}

TEST_CASE("a MoE row with TP > 1 runs without linear biases and is modelled", "[sim][predict][moe]") {
  Prediction p = PredictRow(0, Row(WithNotes("")));
  CHECK(p.status == "ok");
  CHECK(p.tokens_per_s_per_gpu > 0);
  CHECK_THAT(p.assumptions, Catch::Contains("etp=1"));
  auto model = ModelFromCalibrationRow(Row(WithNotes("")));
  REQUIRE(model.ok());
  CHECK_FALSE(model->setup.feat.add_bias_linear);  // --disable-bias-linear
  // With ETP = TP = 2 stated, the row is still modelled without biases...
  std::string etp2 = WithNotes("");
  etp2.replace(etp2.find(",,14336,"), 8, ",2,14336,");
  Prediction sharded = PredictRow(0, Row(etp2));
  CHECK(sharded.status == "ok");
  // ...and a row that says its experts have biases is refused as Megatron refuses it.
  std::string biased_row = WithNotes("add-bias-linear");
  biased_row.replace(biased_row.find(",,14336,"), 8, ",2,14336,");
  Prediction biased = PredictRow(0, Row(biased_row));
  CHECK_THAT(biased.status, Catch::Contains("Bias in Moe is only supported when ETP==1"));
}

TEST_CASE("predict reads the precision and FP8 recipe of a row", "[sim][predict][precision]") {
  std::string row = WithNotes("");
  auto with = [&](const std::string& precision, const std::string& recipe) {
    std::string r = row;
    r.replace(r.find("BF16"), 4, precision);
    size_t gqa = r.find("gqa,");
    r.replace(gqa, 4, "gqa," + recipe);
    auto m = ModelFromCalibrationRow(Row(r));
    REQUIRE(m.ok());
    return m->setup;
  };
  CHECK(with("FP8 (blockwise)", "").feat.fp8_recipe == Fp8Recipe::kBlockwise);
  CHECK(with("FP8-CS", "").feat.fp8_recipe == Fp8Recipe::kTensorwise);
  // MXFP8 needs Blackwell: refused on the row's H100, modelled on a GB200.
  std::string mx = row;
  mx.replace(mx.find("BF16"), 4, "MXFP8");
  CHECK_THAT(PredictRow(0, Row(mx)).status, Catch::Contains("required for MXFP8 execution"));
  mx.replace(mx.find("H100-SXM-80GB"), 13, "GB200");
  auto on_blackwell = ModelFromCalibrationRow(Row(mx));
  REQUIRE(on_blackwell.ok());
  CHECK(on_blackwell->setup.feat.fp8_recipe == Fp8Recipe::kMxfp8);
  CHECK(with("FP8", "").feat.fp8_recipe == Fp8Recipe::kDelayed);  // Hopper: Megatron's default
  std::string nvfp4 = row;
  nvfp4.replace(nvfp4.find("BF16"), 4, "NVFP4");
  nvfp4.replace(nvfp4.find("H100-SXM-80GB"), 13, "GB300");
  auto fp4_model = ModelFromCalibrationRow(Row(nvfp4));
  REQUIRE(fp4_model.ok());
  const TrainingSetup& fp4 = fp4_model->setup;
  CHECK(fp4.feat.fp4);
  CHECK_FALSE(fp4.feat.fp8);
}

TEST_CASE("sim_accuracy slices rows by generation, dense or MoE, and precision", "[sim][accuracy]") {
  std::string text = std::string(kHeader) +
      // Hopper dense BF16, scored.
      "test,dense,8,32,4096,14336,32,8,128256,8192,,,H100-SXM-80GB,8,1,1,,1,,8,1,16,BF16,,,,,"
      "9000,,,,,,,gqa,,megatron-lm,\n" +
      // Blackwell MoE FP8, scored.
      "test,moe,47,32,4096,14336,32,8,32000,4096,8,2,GB200,64,1,4,,1,8,16,1,256,MXFP8,,,,,"
      "4000,,,1,14336,,,gqa,mxfp8,megatron-lm,\n" +
      // Blackwell MoE FP8 from another framework: measured, not modelled.
      "test,titan,30,48,2048,6144,32,4,151936,4096,128,8,GB200,64,1,1,,1,8,64,1,512,MXFP8,,,,,"
      "900,,,1,768,,,gqa,mxfp8,torchtitan,\n" +
      // No measurement: left out.
      "test,none,8,32,4096,14336,32,8,128256,8192,,,H100-SXM-80GB,8,1,1,,1,,8,1,16,BF16,,,,,,,,,,,,gqa,,,\n" +
      // Measured, but the GPU count is not stated: no model can score it.
      "test,nogpus,8,32,4096,14336,32,8,128256,8192,,,H100-SXM-80GB,,1,1,,1,,8,1,16,BF16,,,,,"
      "9000,,,,,,,gqa,,megatron-lm,\n";
  auto table = ParseCsvTable(text);
  REQUIRE(table.ok());
  auto rows = accuracy::ScoreTable(*table, "tiny.csv");
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].slice == "Hopper / dense / BF16");
  CHECK(rows[1].slice == "Blackwell / MoE / FP8");
  CHECK_THAT(rows[2].prediction.status, Catch::Contains("not modelled: framework 'torchtitan'"));
  auto slices = accuracy::GroupBy(rows, accuracy::SliceKey);
  REQUIRE(slices.size() == 2);
  CHECK(slices["Hopper / dense / BF16"].scored == 1);
  CHECK(slices["Hopper / dense / BF16"].measured == 2);
  CHECK(slices["Blackwell / MoE / FP8"].measured == 2);
  CHECK(slices["Blackwell / MoE / FP8"].scored == 1);
  const accuracy::GroupStats& moe = slices["Blackwell / MoE / FP8"];
  CHECK(moe.mape == Approx(std::abs(rows[1].signed_error_pct)));
  CHECK(moe.mean_signed_pct == Approx(rows[1].signed_error_pct));
  auto overall = accuracy::GroupBy(rows, accuracy::OverallKey);
  CHECK(overall["overall"].measured == 4);
  CHECK(overall["overall"].scored == 2);
  // The row without a GPU count leaves the denominator of "rows that state a configuration";
  // the other framework's row stays in it.
  CHECK_THAT(rows[4].prediction.status, Catch::Contains("num_gpus not stated"));
  auto stated = accuracy::GroupBy(rows, accuracy::StatedKey);
  CHECK(stated["overall"].measured == 3);
  CHECK(stated["overall"].scored == 2);
  std::ostringstream printed;
  accuracy::PrintTables(rows, printed);
  CHECK_THAT(printed.str(), Catch::Contains("2 of 4 rows modelled (50.0%)") &&
                                Catch::Contains("state GPU, GPU count, TP and PP: 2 of 3 modelled (66.7%)"));
}

}  // namespace
}  // namespace attune::sim

namespace attune::sim {
namespace {

TEST_CASE("multi-latent attention counts DeepSeek-V3's projection parameters", "[sim][mla]") {
  Flags mla = {{"--num-layers", "1"},       {"--hidden-size", "7168"},
               {"--num-attention-heads", "128"}, {"--seq-length", "4096"},
               {"--ffn-hidden-size", "18432"}, {"--swiglu", ""},
               {"--vocab-size", "128"},     {"--make-vocab-size-divisible-by", "1"},
               {"--micro-batch-size", "1"}, {"--global-batch-size", "8"},
               {"--multi-latent-attention", ""}, {"--q-lora-rank", "1536"},
               {"--kv-lora-rank", "512"},   {"--qk-head-dim", "128"},
               {"--qk-pos-emb-head-dim", "64"}, {"--v-head-dim", "128"},
               {"--position-embedding-type", "rope"}};
  TrainingSetup s = Setup(mla, 8);
  double h = 7168, mlp = h * 18432 * 3, embed = 128 * h, norms = 2 * h;
  double attention = CountParams(s).total - mlp - embed - norms;
  // q: 1536·(7168 + 128·192 + 1); kv: 512·(7168 + 128·256 + 1) + 7168·64; out: 128·128·7168.
  CHECK(attention == Approx(1536.0 * (7168 + 128 * 192 + 1) + 512.0 * (7168 + 128 * 256 + 1) +
                            7168.0 * 64 + 128.0 * 128 * 7168));
  CHECK(attention == Approx(187.1e6).epsilon(0.01));
  // The model runs it: the MLA step differs from a 56-wide-head MHA of the same size.
  Flags mha(mla.begin(), mla.begin() + 10);
  StepBreakdown with_mla = EstimateStep(s, Cluster("H100", 8));
  StepBreakdown without = EstimateStep(Setup(mha, 8), Cluster("H100", 8));
  CHECK(with_mla.attention_s > 2 * without.attention_s);  // 192/128-wide heads, not 56
}

}  // namespace
}  // namespace attune::sim
