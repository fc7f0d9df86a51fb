#include "hardware.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "attune/support/json_schema.h"
#include "options_schema.h"

namespace attune::sim {
namespace {

// Share of a link's bandwidth that NCCL collectives reach as bus bandwidth (nccl-tests reach
// ~230 of 300 GB/s per direction on A100 NVLink and ~23 of 25 GB/s on HDR InfiniBand).
constexpr double kNcclBusEfficiency = 0.8;

// Vendor figures (dense, i.e. without 2:4 sparsity; docs/sim.md cites each). Memory is what the
// driver reports (nvidia-smi total), in GiB. Columns: name, BF16, FP8, FP4 TFLOP/s, memory GiB,
// HBM TB/s, NVLink GB/s, NVLink domain, compute capability, network Gb/s per GPU, exp/s (10^12).
const std::array<GpuSpec, 7>& GpuTable() {
  static const std::array<GpuSpec, 7> table = {{
      {"A100", 312, 0, 0, 80.0, 2.0, 600, 8, 8, 0, 200, 1.7},
      {"H100", 989, 1979, 0, 79.6, 3.35, 900, 8, 9, 0, 400, 3.9},
      {"H200", 989, 1979, 0, 140.4, 4.8, 900, 8, 9, 0, 400, 3.9},
      {"B200", 2250, 4500, 9000, 179.1, 8.0, 1800, 8, 10, 0, 400, 5.0},
      {"GB200", 2450, 4900, 9800, 184.0, 8.0, 1800, 72, 10, 0, 400, 5.0},
      // Blackwell Ultra: FP4 1.5x and softmax exponentials 2x Blackwell; BF16/FP8 as B200
      // (HGX B300) or GB200 NVL72 (GB300 NVL72); 288 GB HBM3e packages of which the systems
      // report ~270 GB (B300) and 279 GB (GB300); ConnectX-8 at 800 Gb/s per GPU.
      {"B300", 2250, 4500, 13500, 269.0, 8.0, 1800, 8, 10, 3, 800, 10.7},
      {"GB300", 2500, 5000, 15000, 277.0, 8.0, 1800, 72, 10, 3, 800, 10.7},
  }};
  return table;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Result<double> NumberField(const nlohmann::json& with, const char* key, double fallback,
                           double min_value) {
  if (!with.contains(key)) return fallback;
  const auto& v = with.at(key);
  if (!v.is_number()) {
    return Status::InvalidArgument(std::string("sim launcher: with.") + key +
                                   ": expected a number, found " + v.dump());
  }
  double d = v.get<double>();
  if (d < min_value) {
    return Status::InvalidArgument(std::string("sim launcher: with.") + key + ": expected >= " +
                                   std::to_string(min_value) + ", found " + v.dump());
  }
  return d;
}

Result<FailureRates> ParseFailures(const nlohmann::json& with) {
  FailureRates rates;
  if (!with.contains("failures")) return rates;
  const auto& f = with.at("failures");
  if (!f.is_object()) {
    return Status::InvalidArgument("sim launcher: with.failures: expected a map such as "
                                   "{nccl_timeout: 0.05, hang: 0.02, node_failure: 0.01}");
  }
  for (const auto& [key, value] : f.items()) {
    if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 1) {
      return Status::InvalidArgument("sim launcher: with.failures." + key +
                                     ": expected a probability in [0, 1], found " + value.dump());
    }
    double p = value.get<double>();
    if (key == "nccl_timeout") rates.nccl_timeout = p;
    else if (key == "hang") rates.hang = p;
    else if (key == "node_failure") rates.node_failure = p;
    else
      return Status::InvalidArgument("sim launcher: with.failures." + key +
                                     ": unknown failure (known: nccl_timeout, hang, node_failure)");
  }
  if (rates.nccl_timeout + rates.hang + rates.node_failure > 1.0) {
    return Status::InvalidArgument("sim launcher: with.failures: probabilities sum to more than 1");
  }
  return rates;
}

}  // namespace

std::optional<GpuSpec> FindGpu(const std::string& name) {
  std::string upper = Upper(name);
  // Longest names first, so "GB200" is not read as "B200" nor "GB300" as "B300".
  for (const char* key : {"GB300", "GB200", "B300", "B200", "H200", "H100", "A100"}) {
    if (upper.find(key) == std::string::npos) continue;
    for (const auto& gpu : GpuTable()) {
      if (gpu.name == key) return gpu;
    }
  }
  return std::nullopt;
}

int ClusterSpec::NvlinkDomain() const { return std::max(gpu.nvlink_domain, gpus_per_node); }

double ClusterSpec::NvlinkBusBytesPerS() const {
  return gpu.nvlink_gb_s / 2.0 * 1e9 * kNcclBusEfficiency;
}

double ClusterSpec::InterNodeBusBytesPerS() const {
  return inter_node_gbit_s / 8.0 * 1e9 * kNcclBusEfficiency;
}

Result<ClusterSpec> ParseClusterConfig(const nlohmann::json& with_or_null, uint64_t campaign_seed) {
  // No `with:` at all (a CLI context) means the defaults.
  const nlohmann::json with = with_or_null.is_null() ? nlohmann::json::object() : with_or_null;
  // The declared schema checks keys, types and ranges (the same check `attune validate` makes).
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(kOptionsSchema, with, "sim launcher"));
  ClusterSpec c;
  std::string gpu_name = with.value("gpu", std::string("H100"));
  auto gpu = FindGpu(gpu_name);
  if (!gpu) {
    return Status::InvalidArgument("sim launcher: with.gpu: unknown GPU '" + gpu_name +
                                   "' (known: A100, H100, H200, B200, GB200, B300, GB300)");
  }
  c.gpu = *gpu;
  ATTUNE_ASSIGN_OR_RETURN(double nodes, NumberField(with, "nodes", 1, 1));
  ATTUNE_ASSIGN_OR_RETURN(double per_node, NumberField(with, "gpus_per_node", 8, 1));
  c.nodes = static_cast<int>(nodes);
  c.gpus_per_node = static_cast<int>(per_node);
  ATTUNE_ASSIGN_OR_RETURN(c.inter_node_gbit_s,
                          NumberField(with, "inter_node_gbit_s", c.gpu.inter_node_gbit_s, 1));
  ATTUNE_ASSIGN_OR_RETURN(c.inter_node_latency_us,
                          NumberField(with, "inter_node_latency_us", 5, 0));
  ATTUNE_ASSIGN_OR_RETURN(c.startup_s, NumberField(with, "startup_s", 90, 0));
  ATTUNE_ASSIGN_OR_RETURN(c.queue_s, NumberField(with, "queue_s", 0, 0));
  ATTUNE_ASSIGN_OR_RETURN(c.noise_cv, NumberField(with, "noise_cv", 0.01, 0));
  ATTUNE_ASSIGN_OR_RETURN(c.gpu.memory_gib, NumberField(with, "memory_gib", c.gpu.memory_gib, 1));
  ATTUNE_ASSIGN_OR_RETURN(c.gpu.peak_bf16_tflops,
                          NumberField(with, "peak_tflops", c.gpu.peak_bf16_tflops, 1));
  ATTUNE_ASSIGN_OR_RETURN(double seed, NumberField(with, "seed", 0, 0));
  c.seed = seed > 0 ? static_cast<uint64_t>(seed) : campaign_seed;
  ATTUNE_ASSIGN_OR_RETURN(c.failures, ParseFailures(with));
  ATTUNE_ASSIGN_OR_RETURN(double sequence_length, NumberField(with, "sequence_length", 0, 1));
  c.sequence_length = static_cast<int64_t>(sequence_length);
  if (auto rollout = with.find("rollout"); rollout != with.end()) {
    c.rollout_prompt_tokens = rollout->value("prompt_tokens", int64_t{0});
    c.rollout_response_tokens = rollout->value("response_tokens", int64_t{0});
  }
  return c;
}

ClusterInfo ToClusterInfo(const ClusterSpec& cluster) {
  ClusterInfo info;
  info.device_type = cluster.gpu.name;
  info.device_memory_gib = cluster.gpu.memory_gib;
  info.peak_tflops = cluster.gpu.peak_bf16_tflops;
  info.devices_per_node = cluster.gpus_per_node;
  info.max_nodes = cluster.nodes;
  info.compute_capability_major = cluster.gpu.compute_capability_major;
  info.virtual_time = true;
  info.sim_sequence_length = cluster.sequence_length;
  return info;
}

ClusterSpec DefaultCluster(const GpuSpec& gpu, int world_size) {
  ClusterSpec c;
  c.gpu = gpu;
  c.gpus_per_node = std::min(world_size, 8);
  c.nodes = std::max(1, world_size / c.gpus_per_node);
  c.inter_node_gbit_s = gpu.inter_node_gbit_s;
  return c;
}

}  // namespace attune::sim
