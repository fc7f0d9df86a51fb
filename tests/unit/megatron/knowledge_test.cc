// The knowledge files load, malformed ones are refused with file:line:col, Describe() shows them,
// and every combination rule of Validate fires with its rule id.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "knowledge.h"
#include "sim_mapping.h"
#include "test_support.h"
#include "validate.h"

namespace attune::megatron {
namespace {

using testing::H100;
using testing::B200;
using testing::DenseRecipe;
using testing::MoeRecipe;
using testing::Stack;
using testing::With;

bool Violates(const Recipe& r, const ClusterInfo& c, const std::string& rule) {
  for (const auto& v : Violations(r, c)) {
    if (v.rule_id == rule) return true;
  }
  return false;
}

TEST_CASE("the shipped knowledge files load with every lever of the reference", "[megatron][knowledge]") {
  const auto& levers = Stack().Levers();
  std::set<std::string> ids;
  for (const auto& l : levers) ids.insert(l.id);
  for (const char* id : {"tensor_parallel", "pipeline_parallel", "virtual_pipeline_stages", "context_parallel",
                         "expert_parallel", "expert_tensor_parallel", "sequence_parallel",
                         "distributed_optimizer", "overlap_grad_reduce", "overlap_param_gather",
                         "tp_comm_overlap", "recompute", "micro_batch_size", "attention_backend",
                         "moe_token_dispatcher", "moe_grouped_gemm", "moe_ep_overlap", "cuda_graphs", "manual_gc",
                         "cuda_device_max_connections", "nccl_nvls_enable", "nccl_ib_qps_per_connection"}) {
    INFO(id);
    CHECK(ids.count(id) == 1);
  }
  CHECK(Stack().knowledge().triage.signatures.size() >= 10);
  CHECK(Stack().knowledge().objective.conditional.size() >= 7);
}

TEST_CASE("a lever with an unknown type is refused with file:line:col", "[megatron][knowledge]") {
  auto r = ParseLevers("version: 1\nlevers:\n  - id: x\n    keys: [--x]\n    type: knob\n", "levers.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("levers.yaml:5:11") && Catch::Contains("unknown lever type 'knob'"));
}

TEST_CASE("an unknown lever field is refused with its path and the allowed fields", "[megatron][knowledge]") {
  auto r = ParseLevers("version: 1\nlevers:\n  - id: x\n    keys: [--x]\n    type: switch\n    adresses: [oom]\n",
                       "levers.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("levers.yaml:6:5") && Catch::Contains("levers[0]") &&
                                       Catch::Contains("unknown key 'adresses'"));
}

TEST_CASE("a YAML syntax error names the file, line and column", "[megatron][knowledge]") {
  auto r = ParseObjective("version: 1\nobjective: [\n  - id: a\n", "objective.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::StartsWith("objective.yaml:"));
}

TEST_CASE("an unknown condition in a conditional rule is refused", "[megatron][knowledge]") {
  auto r = ParseObjective("version: 1\nconditional:\n  - id: c\n    when_changed: [--a]\n    refuse_if: {sometimes: --b}\n",
                          "objective.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("objective.yaml:5:") && Catch::Contains("unknown condition 'sometimes'"));
}

TEST_CASE("a triage signature with a broken regex or kind is refused", "[megatron][knowledge]") {
  auto bad_regex = ParseTriage("version: 1\nsignatures:\n  - {id: a, kind: oom, regex: '(', hint: h}\n", "triage.yaml");
  REQUIRE_FALSE(bad_regex.ok());
  CHECK_THAT(bad_regex.status().message(), Catch::Contains("triage.yaml:3:") && Catch::Contains("invalid regular expression"));
  auto bad_kind = ParseTriage("version: 1\nsignatures:\n  - {id: a, kind: boom, regex: 'x', hint: h}\n", "triage.yaml");
  REQUIRE_FALSE(bad_kind.ok());
  CHECK_THAT(bad_kind.status().message(), Catch::Contains("unknown failure kind 'boom'"));
}

TEST_CASE("a missing data directory is a clear error", "[megatron][knowledge]") {
  auto r = MegatronStack::Open("/nonexistent");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("/nonexistent/stacks/megatron/levers.yaml"));
}

TEST_CASE("Describe lists levers, objective rules, conditions and constraints", "[megatron][describe]") {
  auto j = Stack().Describe();
  CHECK(j["stack"] == "megatron");
  CHECK(j["levers"].size() == Stack().Levers().size());
  CHECK(j["objective"]["objective"].size() >= 10);
  CHECK(j["objective"]["conditional"][0].contains("refuse_if"));
  CHECK(j["objective"]["fail_closed"]["id"] == "fail_closed.unknown_key");
  // The code's combination rules plus dev.gpu_only, which reads the lever data (devices_test.cc),
  // and args.known, which reads the argument list (arguments_test.cc).
  CHECK(j["constraints"].size() == ConstraintCatalog().size() + 2);
  CHECK(j["triage"].size() == Stack().knowledge().triage.signatures.size());
}

TEST_CASE("the reference recipes are valid", "[megatron][validate]") {
  CHECK(Stack().Validate(DenseRecipe(), H100()).ok());
  CHECK(Stack().Validate(MoeRecipe(), H100()).ok());
  CHECK(Stack().Validate(testing::TinyRecipe(), H100()).ok());
}

struct RuleCase {
  const char* rule;
  std::vector<std::pair<std::string, std::optional<std::string>>> set;
  bool moe = false;
  int compute_capability = 9;
};

TEST_CASE("every combination rule refuses with its rule id", "[megatron][validate]") {
  using V = std::optional<std::string>;
  const std::vector<RuleCase> cases = {
      {"values.types", {{"--tensor-model-parallel-size", V("1 # Not explicitly set")}}},
      {"values.types", {{"--lr", V("3e-4,")}}},
      {"data.declaration", {{"data:loss_mask", V("sometimes")}}},
      {"par.positive_sizes", {{"--tensor-model-parallel-size", V("0")}}},
      {"par.world_divisible", {{"--tensor-model-parallel-size", V("3")}}},
      {"par.expert_grid", {{"--expert-model-parallel-size", V("8")}, {"--expert-tensor-parallel-size", V("2")}, {"--pipeline-model-parallel-size", V("2")}}, true},
      {"par.heads_tp", {{"--num-attention-heads", V("33")}}},
      {"par.query_groups_tp", {{"--group-query-attention", V("")}, {"--num-query-groups", V("3")}}},
      {"par.ffn_tp", {{"--ffn-hidden-size", V("11001")}}},
      {"par.moe_ffn_etp", {{"--moe-ffn-hidden-size", V("1001")}, {"--expert-tensor-parallel-size", V("2")}, {"--tensor-model-parallel-size", V("2")}, {"env:CUDA_DEVICE_MAX_CONNECTIONS", V("1")}}, true},
      {"par.layers_pp", {{"--num-layers", V("31")}}},
      {"par.uneven_split", {{"--pipeline-model-parallel-size", V("4")}, {"--decoder-first-pipeline-num-layers", V("6")}}},
      // A pipeline layout with 31 decoder layers for 32, with 3 stages for PP 2, or with a letter
      // Megatron does not know.
      {"par.layout", {{"--pipeline-model-parallel-layout", V("Et*16|t*15,L")}}},
      {"par.layout", {{"--pipeline-model-parallel-layout", V("Et*10|t*11|t*11L")}}},
      {"par.layout", {{"--pipeline-model-parallel-layout", V("Et*16|t*16X")}}},
      {"vpp.at_most_one", {{"--num-virtual-stages-per-pipeline-rank", V("2")}, {"--num-layers-per-virtual-pipeline-stage", V("8")}}},
      {"vpp.requires_pp", {{"--pipeline-model-parallel-size", V("1")}, {"--num-virtual-stages-per-pipeline-rank", V("2")}}},
      // Layers per virtual stage that give a rank two stages; a layout with two stages a rank.
      {"vpp.requires_pp", {{"--pipeline-model-parallel-size", V("1")}, {"--num-layers-per-virtual-pipeline-stage", V("16")}}},
      {"vpp.requires_pp", {{"--pipeline-model-parallel-size", V("1")}, {"--pipeline-model-parallel-layout", V("Et*16|t*16L")}}},
      {"vpp.layers_divisible", {{"--num-virtual-stages-per-pipeline-rank", V("3")}}},
      // PP 4, first 6 and last 10 of 32 layers, middle 8: the first stage's 6 do not divide by 4.
      {"vpp.layers_divisible", {{"--pipeline-model-parallel-size", V("4")}, {"--decoder-first-pipeline-num-layers", V("6")}, {"--decoder-last-pipeline-num-layers", V("10")}, {"--num-virtual-stages-per-pipeline-rank", V("4")}}},
      // Megatron asks an uneven split for the virtual stages per rank, not the layers per stage.
      {"vpp.layers_divisible", {{"--pipeline-model-parallel-size", V("4")}, {"--decoder-first-pipeline-num-layers", V("6")}, {"--decoder-last-pipeline-num-layers", V("10")}, {"--num-layers-per-virtual-pipeline-stage", V("2")}}},
      {"vpp.micro_batches", {{"--num-virtual-stages-per-pipeline-rank", V("2")}, {"--global-batch-size", V("4")}}},
      {"cp.seq_divisible", {{"--context-parallel-size", V("2")}, {"--pipeline-model-parallel-size", V("1")}, {"--seq-length", V("4098")}}},
      {"cp.comm_type", {{"--cp-comm-type", V("a2a+p2p")}}},
      // Megatron turns sequence parallelism off at TP 1, and then refuses TP comm overlap.
      {"tpov.requires_sp", {{"--tensor-model-parallel-size", V("1")}, {"--tp-comm-overlap", V("")}}},
      {"sp.seq_divisible_tp", {{"--seq-length", V("4095")}}},
      {"batch.mbs_required", {{"--micro-batch-size", std::nullopt}}},
      {"batch.gbs_divisible", {{"--global-batch-size", V("250")}}},
      // Megatron-LM's own GPT-3 example gives both (examples/gpt3 at d98e8a64).
      {"batch.schedule_or_gbs", {{"--step-batch-size-schedule", V("0:16 2.4B:320 12B:1536")}}},
      {"moe.experts_ep", {{"--expert-model-parallel-size", V("3")}}, true},
      {"moe.requires_experts", {{"--overlap-moe-expert-parallel-comm", V("")}}},
      {"moe.bias_etp", {{"--disable-bias-linear", std::nullopt}, {"--expert-tensor-parallel-size", V("2")}}, true},
      {"moe.grouped_gemm_cc", {{"--moe-grouped-gemm", V("")}}, true, 7},
      {"moe.dispatcher_deps", {{"--moe-shared-expert-overlap", V("")}, {"--moe-shared-expert-intermediate-size", V("1024")}}, true},
      {"moe.dispatcher_deps", {{"--moe-flex-dispatcher-backend", V("ncclep")}}, true},
      {"moe.ep_overlap", {{"--overlap-moe-expert-parallel-comm", V("")}}, true},
      {"tpov.requires_sp", {{"--tp-comm-overlap", V("")}, {"--sequence-parallel", std::nullopt}}},
      {"det.forbids", {{"--deterministic-mode", V("")}, {"--cross-entropy-loss-fusion", V("")}}},
      {"dp.param_gather_prereqs", {{"--overlap-param-gather", V("")}, {"--use-distributed-optimizer", std::nullopt}}},
      {"dp.param_gather_with_opt_step", {{"--overlap-param-gather-with-optimizer-step", V("")}}},
      {"env.cuda_device_max_connections", {{"env:CUDA_DEVICE_MAX_CONNECTIONS", std::nullopt}}},
      {"env.fsdp_max_connections", {{"--use-megatron-fsdp", V("")}}},
      {"fsdp2.prereqs", {{"--use-torch-fsdp2", V("")}}},
      {"rc.method_layers", {{"--recompute-granularity", V("full")}}},
      {"rc.distribute_saved", {{"--distribute-saved-activations", V("")}}},
      {"rc.cpu_offload", {{"--cpu-offloading-num-layers", V("2")}}},
      {"cg.combination", {{"--cuda-graph-impl", V("transformer_engine")}, {"env:PYTORCH_CUDA_ALLOC_CONF", V("expandable_segments:True")}}},
      {"attn.local_spec", {{"--attention-backend", V("local")}}},
      {"ce.te_fusion", {{"--cross-entropy-loss-fusion", V("")}, {"--cross-entropy-fusion-impl", V("te")}}},
      {"pp.defer_embedding", {{"--defer-embedding-wgrad-compute", V("")}, {"--pipeline-model-parallel-size", V("1")}}},
  };
  std::set<std::string> covered;
  for (const auto& c : cases) {
    Recipe r = c.moe ? MoeRecipe() : DenseRecipe();
    for (const auto& [k, v] : c.set) r = With(r, k, v);
    INFO(c.rule << " on " << DescribeChanges(Diff(c.moe ? MoeRecipe() : DenseRecipe(), r)));
    ClusterInfo cluster = H100();
    cluster.compute_capability_major = c.compute_capability;
    CHECK(Violates(r, cluster, c.rule));
    auto status = Stack().Validate(r, cluster);
    CHECK_FALSE(status.ok());
    CHECK_THAT(status.message(), Catch::Contains(c.rule));
    covered.insert(c.rule);
  }
  for (const auto& rule : ConstraintCatalog()) {
    INFO("no test case for " << rule.id);
    CHECK(covered.count(rule.id) == 1);
  }
}

TEST_CASE("a pipeline layout that places every layer on a multiple of PP stages is valid", "[megatron][validate]") {
  for (const char* layout : {"Et*16|t*16,L", "Et*8|(t*8|)*2t*8L", "E(tttt|)*7,ttttL"}) {
    INFO(layout);
    Recipe r = With(DenseRecipe(), "--pipeline-model-parallel-layout", layout);
    CHECK_FALSE(Violates(r, H100(), "par.layout"));
  }
  auto status = Stack().Validate(With(DenseRecipe(), "--pipeline-model-parallel-layout", "Et*16|t*15,L"), H100());
  CHECK_THAT(status.message(), Catch::Contains("31 decoder layers") && Catch::Contains("--num-layers is 32"));
}

TEST_CASE("a virtual pipeline divides each stage's layers as Megatron splits them", "[megatron][validate]") {
  // 30 layers with the embedding and the loss each counted as a layer: 32 over PP 2, 16 a rank.
  Recipe accounted = With(With(With(DenseRecipe(), "--num-layers", "30"), "--account-for-embedding-in-pipeline-split", ""),
                          "--account-for-loss-in-pipeline-split", "");
  CHECK_FALSE(Violates(With(accounted, "--num-virtual-stages-per-pipeline-rank", "8"), H100(), "vpp.layers_divisible"));
  CHECK_FALSE(Violates(With(accounted, "--num-layers-per-virtual-pipeline-stage", "4"), H100(), "vpp.layers_divisible"));
  CHECK(Violates(With(With(DenseRecipe(), "--num-layers", "30"), "--num-virtual-stages-per-pipeline-rank", "8"), H100(),
                 "vpp.layers_divisible"));
  // An uneven split: PP 4, first 6 and last 10 of 32 layers, 8 in each middle stage; 2 divides all.
  Recipe uneven = With(With(With(DenseRecipe(), "--pipeline-model-parallel-size", "4"),
                            "--decoder-first-pipeline-num-layers", "6"), "--decoder-last-pipeline-num-layers", "10");
  CHECK(Stack().Validate(With(uneven, "--num-virtual-stages-per-pipeline-rank", "2"), H100()).ok());
  auto refused = Stack().Validate(With(uneven, "--num-virtual-stages-per-pipeline-rank", "4"), H100());
  CHECK_THAT(refused.message(), Catch::Contains("layers of a pipeline stage 6 is not divisible by VPP 4"));
}

TEST_CASE("sequence parallel at TP 1 is accepted as Megatron runs it, off, and never toggled", "[megatron][validate]") {
  // Megatron-LM's own Mixtral example sets --sequence-parallel with TP 1; Megatron warns and runs
  // without it.
  Recipe tp1 = With(DenseRecipe(), "--tensor-model-parallel-size", "1");
  CHECK(Stack().Validate(tp1, H100()).ok());
  for (const Move& m : Stack().LegalMoves(tp1, H100())) CHECK(m.lever_id != "sequence_parallel");
  bool offered_at_tp2 = false;
  for (const Move& m : Stack().LegalMoves(DenseRecipe(), H100())) offered_at_tp2 |= m.lever_id == "sequence_parallel";
  CHECK(offered_at_tp2);
  auto overlap = Stack().Validate(With(tp1, "--tp-comm-overlap", ""), H100());
  CHECK_THAT(overlap.message(), Catch::Contains("turns off at TP 1"));
}

TEST_CASE("a violation message names the values and the fix", "[megatron][validate]") {
  auto status = Stack().Validate(With(DenseRecipe(), "--global-batch-size", "250"), H100());
  CHECK_THAT(status.message(), Catch::Contains("250") && Catch::Contains("MBS*DP = 1*4 = 4") &&
                                   Catch::Contains("choose an MBS"));
}

TEST_CASE("CUDA_DEVICE_MAX_CONNECTIONS=1 is required before Blackwell only", "[megatron][validate]") {
  Recipe r = With(DenseRecipe(), "env:CUDA_DEVICE_MAX_CONNECTIONS", std::nullopt);
  CHECK(Violates(r, H100(), "env.cuda_device_max_connections"));
  CHECK_FALSE(Violates(r, B200(), "env.cuda_device_max_connections"));
  Recipe tp1 = With(With(r, "--tensor-model-parallel-size", "1"), "--sequence-parallel", std::nullopt);
  CHECK_FALSE(Violates(tp1, H100(), "env.cuda_device_max_connections"));
}

TEST_CASE("selective recompute refuses a method; full needs a layer count; none ignores both", "[megatron][validate]") {
  Recipe sel = With(With(DenseRecipe(), "--recompute-granularity", "selective"), "--recompute-method", "uniform");
  CHECK(Violates(sel, H100(), "rc.method_layers"));
  Recipe full = With(With(With(DenseRecipe(), "--recompute-granularity", "full"), "--recompute-method", "block"),
                     "--recompute-num-layers", "0");
  CHECK(Violates(full, H100(), "rc.method_layers"));
  // Megatron caps a count above the layers of a stage (32 layers / PP 2 = 16) instead of refusing.
  CHECK_FALSE(Violates(With(full, "--recompute-num-layers", "17"), H100(), "rc.method_layers"));
  // The recompute count moves only up to the 16 layers a stage holds: larger ones repeat a move.
  long most = 0;
  for (const Move& m : Stack().LegalMoves(With(full, "--recompute-num-layers", "1"), H100())) {
    if (m.lever_id == "recompute_num_layers") most = std::max(most, std::stol(m.changes.at(0).to.value()));
  }
  CHECK(most == 16);
  // Left behind with the granularity commented out: Megatron ignores them.
  Recipe leftover = With(With(DenseRecipe(), "--recompute-method", "uniform"), "--recompute-num-layers", "1");
  CHECK(Stack().Validate(leftover, H100()).ok());
}

// Recipes Megatron-LM accepts (validate_args, TransformerConfig) that an earlier rule set refused.
TEST_CASE("recipes Megatron accepts are valid", "[megatron][validate]") {
  using V = std::optional<std::string>;
  struct Accepted {
    const char* why;
    std::vector<std::pair<std::string, V>> set;
    bool moe = false;
  };
  const std::vector<Accepted> cases = {
      {"a virtual pipeline of one stage is none", {{"--pipeline-model-parallel-size", V("1")}, {"--num-virtual-stages-per-pipeline-rank", V("1")}}},
      {"one virtual stage from layers per stage", {{"--pipeline-model-parallel-size", V("1")}, {"--num-layers-per-virtual-pipeline-stage", V("32")}}},
      {"MoE settings on a dense model are ignored", {{"--moe-grouped-gemm", V("")}, {"--moe-token-dispatcher-type", V("alltoall")}, {"--moe-permute-fusion", V("")}}},
      {"--num-experts 0 is a dense model", {{"--num-experts", V("0")}}},
      {"--num-query-groups without GQA is ignored", {{"--num-query-groups", V("6")}}},
      {"a flex backend other than ncclep is ignored", {{"--moe-token-dispatcher-type", V("alltoall")}, {"--moe-flex-dispatcher-backend", V("deepep")}}, true},
      {"shared-expert overlap without a shared expert", {{"--moe-shared-expert-overlap", V("")}}, true},
      {"a list of aux-loss coefficients", {{"--moe-router-load-balancing-type", V("seq_aux_loss global_aux_loss")}, {"--moe-aux-loss-coeff", V("1e-4 1e-3")}}, true},
      {"Python's 1_000", {{"--train-iters", V("1_000")}}},
      {"--cuda-graph-impl none beside --enable-cuda-graph", {{"--cuda-graph-impl", V("none")}, {"--enable-cuda-graph", V("")}}},
      {"dist_muon shards like the distributed optimizer", {{"--use-distributed-optimizer", std::nullopt}, {"--optimizer", V("dist_muon")}, {"--overlap-param-gather", V("")}}},
      {"a hybrid pattern places the layers", {{"--num-layers", V("30")}, {"--hybrid-layer-pattern", V("M*M-M*M-")}}},
  };
  for (const auto& c : cases) {
    Recipe r = c.moe ? MoeRecipe() : DenseRecipe();
    for (const auto& [k, v] : c.set) r = With(r, k, v);
    INFO(c.why << ": " << Stack().Validate(r, H100()).ToString());
    CHECK(Stack().Validate(r, H100()).ok());
  }
  // A one-stage virtual pipeline is accepted, but never offered as a move: it changes nothing.
  for (const Move& m : Stack().LegalMoves(With(DenseRecipe(), "--pipeline-model-parallel-size", "1"), H100())) {
    INFO(m.summary);
    CHECK(m.lever_id.rfind("virtual_pipeline", 0) != 0);
  }
  // Accepted, but never offered as moves on a dense model: they would change nothing.
  for (const Move& m : Stack().LegalMoves(DenseRecipe(), H100())) {
    INFO(m.summary);
    CHECK(m.lever_id.rfind("moe_", 0) != 0);
    CHECK(m.lever_id.rfind("expert_", 0) != 0);
  }
  bool offered_on_moe = false;
  for (const Move& m : Stack().LegalMoves(MoeRecipe(), H100())) offered_on_moe |= m.lever_id == "moe_grouped_gemm";
  CHECK(offered_on_moe);
  // Offloading with whole-iteration CUDA graphs (PP 1, no recompute).
  Recipe offload = With(With(DenseRecipe(), "--pipeline-model-parallel-size", "1"), "--cpu-offloading-num-layers", "2");
  offload = With(With(offload, "--cuda-graph-impl", "full_iteration"), "--no-check-for-nan-in-loss-and-grad", "");
  CHECK_FALSE(Violates(offload, H100(), "rc.cpu_offload"));
  CHECK(Violates(With(offload, "--cuda-graph-impl", "local"), H100(), "rc.cpu_offload"));
  // A layout with two stages a rank is a virtual pipeline for the EP overlap's rule.
  Recipe layout = With(With(MoeRecipe(), "--pipeline-model-parallel-size", "2"), "--pipeline-model-parallel-layout", "Et*4|t*4|t*4|t*4L");
  layout = With(With(layout, "--overlap-moe-expert-parallel-comm", ""), "--moe-token-dispatcher-type", "alltoall");
  layout = With(layout, "--expert-model-parallel-size", "4");
  INFO(Stack().Validate(layout, H100()).ToString());
  CHECK_FALSE(Violates(layout, H100(), "moe.ep_overlap"));
  CHECK(Violates(With(layout, "--pipeline-model-parallel-layout", "Et*8|t*8L"), H100(), "moe.ep_overlap"));
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

TEST_CASE("triage regexes get a literal pre-check only when every alternative has one", "[megatron][knowledge]") {
  CHECK(RequiredLiterals("CUDA out of memory|OutOfMemoryError") ==
        std::vector<std::string>{"CUDA out of memory", "OutOfMemoryError"});
  CHECK(RequiredLiterals("Cuda failure( 2)? 'out of memory'") == std::vector<std::string>{" 'out of memory'"});
  CHECK(RequiredLiterals("NCCL Error \\d+:|exitcode\\s*:\\s*-9\\b") == std::vector<std::string>{"NCCL Error ", "exitcode"});
  CHECK(RequiredLiterals("a|\\d+").empty());
  CHECK(RequiredLiterals("colou?r") == std::vector<std::string>{"colo"});
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

TEST_CASE("ETP absent means the recipe's TP: moves say so and moving to it is no move", "[megatron][knowledge]") {
  Recipe moe = testing::With(testing::With(testing::MoeRecipe(), "--tensor-model-parallel-size", "2"),
                             "--sequence-parallel", "");
  moe.env.push_back({"CUDA_DEVICE_MAX_CONNECTIONS", "1"});
  bool saw_up = false;
  std::string etp_moves;
  for (const Move& m : testing::Stack().LegalMoves(moe, testing::H100())) {
    if (m.lever_id == "expert_tensor_parallel") etp_moves += m.summary + "; ";
    if (m.lever_id != "expert_tensor_parallel") continue;
    REQUIRE(m.changes.size() >= 1);
    const Change& c = m.changes[0];
    CHECK_FALSE(c.from.has_value());
    CHECK(c.to != std::optional<std::string>("2"));  // absent already is TP 2
    REQUIRE(m.defaults.count("--expert-tensor-parallel-size") == 1);
    CHECK(m.defaults.at("--expert-tensor-parallel-size") == "2");
    if (c.to == std::optional<std::string>("4")) saw_up = true;
  }
  INFO("ETP moves: " << etp_moves << " validate: " << testing::Stack().Validate(moe, testing::H100()).ToString());
  CHECK(saw_up);
  // Without a TP flag, absent ETP is TP's own default, 1.
  for (const Move& m : testing::Stack().LegalMoves(testing::MoeRecipe(), testing::H100())) {
    if (m.lever_id != "expert_tensor_parallel") continue;
    CHECK(m.defaults.at("--expert-tensor-parallel-size") == "1");
    CHECK(m.changes[0].to != std::optional<std::string>("1"));
  }
}

TEST_CASE("a virtual pipeline may take any divisor of a stage's layers, not only powers of two", "[megatron][moves]") {
  // 126 layers (Llama-3.1-405B): PP 2 leaves 63 a stage, which no power of two above 1 divides.
  Recipe r = testing::With(testing::DenseRecipe(), "--num-layers", "126");
  auto values = [](const Recipe& recipe, const std::string& lever) {
    std::set<std::string> out;
    for (const Move& m : testing::Stack().LegalMoves(recipe, testing::H100())) {
      if (m.lever_id == lever) out.insert(m.changes.at(0).to.value_or("absent"));
    }
    return out;
  };
  CHECK(values(r, "virtual_pipeline_stages") == std::set<std::string>{"3", "7", "9"});
  CHECK(values(r, "virtual_pipeline_layers").count("21") == 1);
  CHECK(values(r, "virtual_pipeline_layers").count("2") == 0);
  // PP 9 (TP 2 x PP 9 on 18 GPUs, 288 micro-batches): 14 a stage, so 2, 7 and 14 virtual stages.
  Recipe pp9 = testing::With(testing::With(r, "--pipeline-model-parallel-size", "9"), "--global-batch-size", "288");
  pp9.topology = {2, 9, "H100"};
  CHECK(values(pp9, "virtual_pipeline_stages") == std::set<std::string>{"2", "7", "14"});

  // The form is checked like the others: both bounds, each a number or a generator.
  auto missing = ParseLevers("version: 1\nlevers:\n  - id: x\n    keys: [--x]\n    type: int\n"
                             "    values: {divisors_of: layers_per_stage}\n", "levers.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("levers.yaml:6") && Catch::Contains("up_to"));
  auto unknown = ParseLevers("version: 1\nlevers:\n  - id: x\n    keys: [--x]\n    type: int\n"
                             "    values: {divisors_of: layers, up_to: 8}\n", "levers.yaml");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.status().message(), Catch::Contains("found 'layers'"));
}

TEST_CASE("TP may grow past a compute tray inside a GB200 or GB300 NVL72 rack, not past a node elsewhere", "[megatron][moves]") {
  // 16 trays of 4 GPUs, TP 4 x PP 2 (DP 8).
  Recipe rack = testing::With(testing::DenseRecipe(), "--tensor-model-parallel-size", "4");
  rack.topology = {16, 4, "GB200"};
  ClusterInfo gb200 = testing::B200();
  gb200.device_type = "GB200";
  auto tp_values = [](const Recipe& r, const ClusterInfo& c) {
    std::set<std::string> out;
    for (const Move& m : testing::Stack().LegalMoves(r, c)) {
      if (m.lever_id == "tensor_parallel") out.insert(m.changes.at(0).to.value_or("absent"));
    }
    return out;
  };
  std::set<std::string> in_rack = tp_values(rack, gb200);
  CHECK(in_rack.count("8") == 1);
  CHECK(in_rack.count("2") == 1);
  Recipe nodes = rack;
  nodes.topology.gpu_type = "B200";
  std::set<std::string> in_nodes = tp_values(nodes, testing::B200());
  CHECK(in_nodes.count("8") == 0);
  CHECK(in_nodes.count("2") == 1);

  // TP 8 in the rack is not "TP across nodes"; on B200 nodes of 4 it is.
  Measurement m;
  m.step_time_s = 2;
  m.peak_memory_gib = 100;
  auto spans = [&](const Recipe& r, const ClusterInfo& c) {
    for (const Diagnosis& d : testing::Stack().Diagnose(testing::With(r, "--tensor-model-parallel-size", "8"), m, {}, c)) {
      if (d.evidence.find("spans NVLink domains") != std::string::npos) return true;
    }
    return false;
  };
  CHECK_FALSE(spans(rack, gb200));
  CHECK(spans(nodes, testing::B200()));
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

// The pipeline moves from `recipe`, by the PP they move to.
std::map<std::string, Move> PipelineMoves(const Recipe& recipe) {
  std::map<std::string, Move> out;
  for (const Move& m : testing::Stack().LegalMoves(recipe, testing::H100())) {
    if (m.lever_id == "pipeline_parallel") out[m.changes.at(0).to.value_or("absent")] = m;
  }
  return out;
}

std::optional<std::string> ChangeTo(const Move& m, const std::string& key) {
  for (const Change& c : m.changes) {
    if (c.key == key) return c.to.value_or("removed");
  }
  return std::nullopt;
}

TEST_CASE("a pipeline move keeps an uneven split's end stages as light as they were", "[megatron][moves]") {
  const std::string first = "--decoder-first-pipeline-num-layers";
  const std::string last = "--decoder-last-pipeline-num-layers";
  // 62 layers, TP 2 x PP 4: 14 + 17 + 17 + 14, each end 3 layers lighter for its embedding or loss.
  Recipe r = testing::With(testing::With(testing::DenseRecipe(), "--num-layers", "62"), "--pipeline-model-parallel-size", "4");
  r = testing::With(testing::With(r, first, "14"), last, "14");
  REQUIRE(testing::Stack().Validate(r, testing::H100()).ok());
  auto moves = PipelineMoves(r);
  // PP 8: 8.5 layers of work a stage at best; 4 + 9×6 + 4 makes the busiest stage 9 (an end's 4 + 3).
  REQUIRE(moves.count("8") == 1);
  CHECK(ChangeTo(moves["8"], first) == std::optional<std::string>("4"));
  CHECK(ChangeTo(moves["8"], last) == std::optional<std::string>("4"));
  // PP 1 drops the split; PP 2 has no middle stage and 14 + 14 is not 62, so it is no move.
  REQUIRE(moves.count("1") == 1);
  CHECK(ChangeTo(moves["1"], first) == std::optional<std::string>("removed"));
  CHECK(ChangeTo(moves["1"], last) == std::optional<std::string>("removed"));
  CHECK(moves.count("2") == 0);
  // With the first stage alone given: 62 at PP 2 as 30 + 32, the first 2 layers lighter; PP 4
  // makes it 14 + 16×3, the busiest stage 16.
  Recipe one_end = testing::With(testing::With(testing::DenseRecipe(), "--num-layers", "62"), first, "30");
  REQUIRE(testing::Stack().Validate(one_end, testing::H100()).ok());
  auto one_end_moves = PipelineMoves(one_end);
  REQUIRE(one_end_moves.count("4") == 1);
  CHECK(ChangeTo(one_end_moves["4"], first) == std::optional<std::string>("14"));
  CHECK_FALSE(ChangeTo(one_end_moves["4"], last));
}

TEST_CASE("a pipeline move re-spreads a layout's layers over the new stages", "[megatron][moves]") {
  const std::string layout = "--pipeline-model-parallel-layout";
  // 30 layers on PP 2 with two virtual stages a rank; the first stage is 2 layers lighter for the
  // embedding, the last carries an MTP depth and the loss.
  Recipe r = testing::With(testing::With(testing::DenseRecipe(), "--num-layers", "30"), layout, "Et*6|(t*8|)*2t*8mL");
  REQUIRE(testing::Stack().Validate(r, testing::H100()).ok());
  auto moves = PipelineMoves(r);
  // PP 4: 8 stages of 32 layers of work at best, 4 each: 2 + 4×6 + 4 decoder layers.
  REQUIRE(moves.count("4") == 1);
  auto to = ChangeTo(moves["4"], layout);
  REQUIRE(to);
  CHECK(*to == "Et*2|(t*4|)*6t*4mL");
  auto stages = UnrollPipelineLayout(*to);
  REQUIRE(stages);
  CHECK(stages->size() == 8);
  // PP 1 drops the layout, as it would drop any virtual pipeline.
  REQUIRE(moves.count("1") == 1);
  CHECK(ChangeTo(moves["1"], layout) == std::optional<std::string>("removed"));
}

TEST_CASE("a pipeline move keeps a virtual pipeline, refitting its value to the new PP", "[megatron][moves]") {
  const std::string stages = "--num-virtual-stages-per-pipeline-rank";
  const std::string layers = "--num-layers-per-virtual-pipeline-stage";
  // 32 layers, TP 2 x PP 2 on 16 GPUs: 16 layers a rank.
  SECTION("virtual stages per rank") {
    auto moves = PipelineMoves(testing::With(testing::DenseRecipe(), stages, "8"));
    REQUIRE(moves.count("4") == 1);
    CHECK_FALSE(ChangeTo(moves["4"], stages));  // 8 layers a rank still divide into 8 stages
    REQUIRE(moves.count("8") == 1);
    CHECK(ChangeTo(moves["8"], stages) == std::optional<std::string>("4"));  // 4 layers a rank
    REQUIRE(moves.count("1") == 1);
    CHECK(ChangeTo(moves["1"], stages) == std::optional<std::string>("removed"));
  }
  SECTION("layers per virtual stage") {
    auto moves = PipelineMoves(testing::With(testing::DenseRecipe(), layers, "8"));  // 2 stages a rank
    REQUIRE(moves.count("4") == 1);
    CHECK(ChangeTo(moves["4"], layers) == std::optional<std::string>("4"));  // 8 a rank: keep 2 stages
    REQUIRE(moves.count("8") == 1);
    CHECK(ChangeTo(moves["8"], layers) == std::optional<std::string>("2"));
    REQUIRE(moves.count("1") == 1);
    CHECK(ChangeTo(moves["1"], layers) == std::optional<std::string>("removed"));
  }
  SECTION("a value that divides nothing is dropped") {
    // 8 layers: PP 8 leaves one layer a rank, too few for two virtual stages.
    Recipe r = testing::With(testing::With(testing::DenseRecipe(), "--num-layers", "8"), stages, "4");
    auto moves = PipelineMoves(r);
    REQUIRE(moves.count("8") == 1);
    CHECK(ChangeTo(moves["8"], stages) == std::optional<std::string>("removed"));
    Recipe moved = r;
    REQUIRE(ApplyChanges(&moved, moves["8"].changes).ok());
    CHECK(testing::Stack().Validate(moved, testing::H100()).ok());
  }
  SECTION("an uneven split: the virtual stages divide every stage") {
    // 52 layers, the first stage 4 lighter: 24 + 28 at PP 2, which 4 virtual stages divide. PP 4
    // refits the split to 10 + 14×3, which only 2 do.
    Recipe r = testing::With(testing::With(testing::DenseRecipe(), "--num-layers", "52"),
                             "--decoder-first-pipeline-num-layers", "24");
    r = testing::With(r, stages, "4");
    REQUIRE(testing::Stack().Validate(r, testing::H100()).ok());
    auto moves = PipelineMoves(r);
    REQUIRE(moves.count("4") == 1);
    CHECK(ChangeTo(moves["4"], "--decoder-first-pipeline-num-layers") == std::optional<std::string>("10"));
    CHECK(ChangeTo(moves["4"], stages) == std::optional<std::string>("2"));
  }
  SECTION("the nearest divisor") {
    // 80 layers at 4 layers a virtual stage; PP 8 leaves 10 a rank, divided by 2 or 5 layers.
    Recipe r = testing::With(testing::With(testing::DenseRecipe(), "--num-layers", "80"), layers, "4");
    auto moves = PipelineMoves(r);
    REQUIRE(moves.count("8") == 1);
    CHECK(ChangeTo(moves["8"], layers) == std::optional<std::string>("5"));
  }
}

}  // namespace
}  // namespace attune::megatron
