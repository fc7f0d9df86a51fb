// Device awareness: levers marked `devices: [gpu]` are never proposed on a CPU cluster and their
// flags are refused there by Validate (rule dev.gpu_only); GPU clusters, and clusters of unknown
// type, see the whole catalog as before.
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>

#include "devices.h"
#include "knowledge.h"
#include "test_support.h"

namespace attune::megatron {
namespace {

using testing::Cpu;
using testing::DenseRecipe;
using testing::H100;
using testing::MinigptRecipe;
using testing::Stack;
using testing::With;

// One GPU, so the minigpt recipe's topology (1 x 1) fits.
ClusterInfo OneGpu() {
  ClusterInfo c = H100();
  c.devices_per_node = 1;
  return c;
}

const LeverSpec& Spec(const std::string& id) {
  for (const auto& s : Stack().knowledge().levers) {
    if (s.lever.id == id) return s;
  }
  FAIL("no lever " << id);
  throw std::logic_error("unreachable");
}

bool GpuOnly(const LeverSpec& s) {
  return s.devices.size() == 1 && s.devices[0] == DeviceKind::kGpu;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Keys that mean CUDA whatever the catalog says: the cross-check of the data below.
bool CudaKey(const std::string& key) {
  for (const char* prefix : {"env:CUDA_", "env:NCCL_", "env:TORCH_NCCL_", "env:PYTORCH_CUDA_",
                             "--cuda-graph", "--tp-comm-overlap", "--attention-backend"}) {
    if (StartsWith(key, prefix)) return true;
  }
  return false;
}

std::set<std::string> LeverIds(const std::vector<Move>& moves) {
  std::set<std::string> ids;
  for (const auto& m : moves) ids.insert(m.lever_id);
  return ids;
}

TEST_CASE("the catalog marks the CUDA-only levers gpu and leaves the portable ones unmarked",
          "[megatron][devices]") {
  for (const char* id : {"cuda_graphs", "attention_backend", "tp_comm_overlap", "empty_unused_memory_level",
                         "masked_softmax_fusion", "gradient_accumulation_fusion", "moe_grouped_gemm",
                         "cuda_device_max_connections", "nccl_nvls_enable", "torch_nccl_avoid_record_streams",
                         "pytorch_cuda_alloc_conf"}) {
    INFO(id);
    CHECK(GpuOnly(Spec(id)));
  }
  for (const char* id : {"tensor_parallel", "micro_batch_size", "recompute", "recompute_num_layers",
                         "manual_gc", "distributed_optimizer", "moe_token_dispatcher"}) {
    INFO(id);
    CHECK(Spec(id).devices.empty());
  }
  for (const auto& s : Stack().knowledge().levers) {
    for (const auto& key : s.lever.keys) {
      INFO(s.lever.id << " " << key);
      if (CudaKey(key)) CHECK(GpuOnly(s));
    }
  }
}

TEST_CASE("the cluster's device type decides its kind; an empty type filters nothing", "[megatron][devices]") {
  ClusterInfo c;
  CHECK(ClusterDeviceKind(c) == DeviceKind::kUnknown);
  c.device_type = "CPU";
  CHECK(ClusterDeviceKind(c) == DeviceKind::kCpu);
  CHECK(ClusterDeviceKind(Cpu()) == DeviceKind::kCpu);
  c.device_type = "gpu";
  CHECK(ClusterDeviceKind(c) == DeviceKind::kGpu);
  CHECK(ClusterDeviceKind(H100()) == DeviceKind::kGpu);
  CHECK(LeverRunsOn(Spec("cuda_graphs"), DeviceKind::kUnknown));
  CHECK_FALSE(LeverRunsOn(Spec("cuda_graphs"), DeviceKind::kCpu));
  CHECK(LeverRunsOn(Spec("recompute"), DeviceKind::kCpu));
}

TEST_CASE("on a CPU cluster LegalMoves offers no GPU-only lever but keeps recompute, micro-batch and GC",
          "[megatron][devices][moves]") {
  Recipe recipe = MinigptRecipe();
  auto moves = Stack().LegalMoves(recipe, Cpu());
  REQUIRE(moves.size() >= 5);
  for (const auto& m : moves) {
    INFO(m.summary);
    CHECK_FALSE(GpuOnly(Spec(m.lever_id)));
    for (const auto& c : m.changes) CHECK_FALSE(CudaKey(c.key));
    Recipe next = recipe;
    REQUIRE(ApplyChanges(&next, m.changes).ok());
    CHECK(Stack().Validate(next, Cpu()).ok());
  }
  auto ids = LeverIds(moves);
  CHECK(ids.count("recompute") == 1);
  CHECK(ids.count("recompute_num_layers") == 1);
  CHECK(ids.count("micro_batch_size") == 1);
  CHECK(ids.count("manual_gc") == 1);
  CHECK(ids.count("cuda_graphs") == 0);
  CHECK(ids.count("pytorch_cuda_alloc_conf") == 0);
}

TEST_CASE("on a GPU cluster, or one of unknown type, the same recipe still gets CUDA graphs",
          "[megatron][devices][moves]") {
  for (const ClusterInfo& cluster : {OneGpu(), ClusterInfo{}}) {
    INFO("device type '" << cluster.device_type << "'");
    auto ids = LeverIds(Stack().LegalMoves(MinigptRecipe(), cluster));
    CHECK(ids.count("cuda_graphs") == 1);
    CHECK(ids.count("attention_backend") == 1);
    CHECK(ids.count("pytorch_cuda_alloc_conf") == 1);
    CHECK(ids.count("recompute") == 1);
  }
  auto dense = LeverIds(Stack().LegalMoves(DenseRecipe(), H100()));
  CHECK(dense.count("cuda_graphs") == 1);
  CHECK(dense.count("nccl_nvls_enable") == 1);
}

TEST_CASE("data-parallel levers are not offered at data-parallel size 1, and are at DP above 1",
          "[megatron][moves]") {
  const std::set<std::string> dp_levers = {"distributed_optimizer", "overlap_grad_reduce",
                                           "overlap_param_gather", "ddp_bucket_size"};
  for (const auto& id : dp_levers) CHECK(Spec(id).needs_data_parallel);
  CHECK_FALSE(Spec("micro_batch_size").needs_data_parallel);
  for (const ClusterInfo& cluster : {Cpu(), OneGpu()}) {
    INFO("device type '" << cluster.device_type << "'");
    for (const auto& id : LeverIds(Stack().LegalMoves(MinigptRecipe(), cluster))) {
      CHECK(dp_levers.count(id) == 0);  // minigpt runs on one device: DP 1
    }
  }
  auto dense = LeverIds(Stack().LegalMoves(DenseRecipe(), H100()));  // TP 2 x PP 2 on more GPUs
  size_t offered = 0;
  for (const auto& id : dp_levers) offered += dense.count(id);
  CHECK(offered >= 2);
}

TEST_CASE("Validate refuses --cuda-graph-impl on a CPU cluster with rule dev.gpu_only", "[megatron][devices][validate]") {
  Recipe graphs = With(MinigptRecipe(), "--cuda-graph-impl", "local");
  auto status = Stack().Validate(graphs, Cpu());
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(status.message(),
             Catch::Contains("dev.gpu_only") && Catch::Contains("--cuda-graph-impl (lever cuda_graphs)") &&
                 Catch::Contains("works only on gpu devices") &&
                 Catch::Contains("the cluster's device type is 'cpu'") &&
                 Catch::Contains("remove --cuda-graph-impl"));
  CHECK(Stack().Validate(MinigptRecipe(), Cpu()).ok());
  CHECK(Stack().Validate(graphs, OneGpu()).ok());
  CHECK(Stack().Validate(graphs, ClusterInfo{}).ok());
  auto fusion = Stack().Validate(With(MinigptRecipe(), "--no-masked-softmax-fusion", ""), Cpu());
  CHECK_THAT(fusion.message(), Catch::Contains("dev.gpu_only") && Catch::Contains("--no-masked-softmax-fusion"));
}

TEST_CASE("a CPU cluster ignores CUDA variables: they are not refused and TP needs no max-connections",
          "[megatron][devices][validate]") {
  Recipe alloc = With(MinigptRecipe(), "env:PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  CHECK(Stack().Validate(alloc, Cpu()).ok());
  Recipe tp2 = With(MinigptRecipe(), "--tensor-model-parallel-size", "2");
  tp2.topology.gpus_per_node = 2;
  CHECK(Stack().Validate(tp2, Cpu()).ok());
  CHECK_FALSE(NeedsMaxConnectionsOne(tp2, Cpu()));
  CHECK_THAT(Stack().Validate(tp2, OneGpu()).message(), Catch::Contains("env.cuda_device_max_connections"));
}

TEST_CASE("levers.yaml devices must be a non-empty list of cpu and gpu", "[megatron][devices][knowledge]") {
  const std::string head = "version: 1\nlevers:\n  - id: x\n    keys: [--x]\n    type: switch\n";
  auto ok = ParseLevers(head + "    devices: [gpu]\n", "levers.yaml");
  REQUIRE(ok.ok());
  CHECK(ok.value()[0].devices == std::vector<DeviceKind>{DeviceKind::kGpu});
  auto tpu = ParseLevers(head + "    devices: [gpu, tpu]\n", "levers.yaml");
  REQUIRE_FALSE(tpu.ok());
  CHECK_THAT(tpu.status().message(), Catch::Contains("levers.yaml:6:") && Catch::Contains("levers[0].devices[1]") &&
                                         Catch::Contains("unknown device 'tpu'"));
  auto empty = ParseLevers(head + "    devices: []\n", "levers.yaml");
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.status().message(), Catch::Contains("at least one of cpu, gpu"));
}

TEST_CASE("Describe shows a lever's devices and the device rule", "[megatron][devices][describe]") {
  auto d = Stack().Describe();
  bool found_lever = false;
  for (const auto& l : d["levers"]) {
    if (l["id"] == "cuda_graphs") {
      found_lever = true;
      CHECK(l["devices"] == nlohmann::json::array({"gpu"}));
    }
    if (l["id"] == "recompute") CHECK_FALSE(l.contains("devices"));
  }
  CHECK(found_lever);
  bool found_rule = false;
  for (const auto& c : d["constraints"]) found_rule = found_rule || c["id"] == "dev.gpu_only";
  CHECK(found_rule);
}

}  // namespace
}  // namespace attune::megatron
