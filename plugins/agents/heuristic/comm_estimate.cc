// Copyright attune authors.
#include "comm_estimate.h"

#include <algorithm>
#include <cmath>

#include "attune/support/nvlink.h"
#include "param_memory.h"
#include "reading.h"

namespace attune::agents {
namespace {

constexpr double kGB = 1e9;
constexpr double kBusEfficiency = 0.8;

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// A ring over `n` ranks `stride` apart: inside one NVLink domain over NVLink; across domains
// through the NICs of the group's members in each node (NCCL runs a channel per NIC), up to
// NVLink's rate.
double RingBandwidth(const Fabric& f, int gpus_per_node, double stride, double n) {
  if (stride * n <= NvlinkReach(f, gpus_per_node)) return f.nvlink_bytes_per_s;
  const double per_node = std::max(1, gpus_per_node);
  const double members = std::clamp(std::floor(per_node / stride), 1.0, n);
  return std::min(f.nvlink_bytes_per_s, f.nic_bytes_per_s * members);
}

}  // namespace

int NvlinkReach(const Fabric& f, int gpus_per_node) {
  return std::max({1, gpus_per_node, f.nvlink_domain});
}

std::optional<Fabric> AssumedFabric(const ClusterInfo& cluster) {
  const std::string& t = cluster.device_type;
  double nvlink = 0, nic_gbit = 0;
  if (StartsWith(t, "A100")) {
    nvlink = 300, nic_gbit = 200;
  } else if (StartsWith(t, "H100") || StartsWith(t, "H200") || StartsWith(t, "H800") ||
             StartsWith(t, "H20")) {
    nvlink = 450, nic_gbit = 400;
  } else if (StartsWith(t, "B300") || StartsWith(t, "GB300")) {
    nvlink = 900, nic_gbit = 800;
  } else if (StartsWith(t, "B200") || StartsWith(t, "GB200")) {
    nvlink = 900, nic_gbit = 400;
  } else {
    return std::nullopt;
  }
  return Fabric{nvlink * kGB * kBusEfficiency, nic_gbit / 8 * kGB * kBusEfficiency,
                support::NvlinkRackGpus(t)};
}

std::optional<double> AssumedBf16Peak(const ClusterInfo& cluster) {
  const std::string& t = cluster.device_type;
  double tflops = 0;
  if (StartsWith(t, "A100")) {
    tflops = 312;
  } else if (StartsWith(t, "H100") || StartsWith(t, "H200") || StartsWith(t, "H800")) {
    tflops = 989;
  } else if (StartsWith(t, "GB300")) {
    tflops = 2500;
  } else if (StartsWith(t, "GB200")) {
    tflops = 2450;
  } else if (StartsWith(t, "B300") || StartsWith(t, "B200")) {
    tflops = 2250;
  } else {
    return std::nullopt;
  }
  return tflops * 1e12;
}

namespace {

// What the per-layer collective estimates read: the fabric, the recipe's parallel shape, and
// the layers, width, sequence and micro-batches of its busiest stage.
struct StageShape {
  Fabric fabric;
  RecipeShape shape;
  double layers = 0, h = 0, seq = 0;
  int micro_batches = 0;
  int per_node = 1;
};

std::optional<StageShape> ReadStage(const Recipe& recipe, const ClusterInfo& cluster,
                                    const std::map<std::string, std::string>& defaults) {
  std::optional<Fabric> fabric = AssumedFabric(cluster);
  std::optional<double> layers = PositiveFlag(recipe, defaults, "--num-layers");
  std::optional<double> h = PositiveFlag(recipe, defaults, "--hidden-size");
  std::optional<double> seq = PositiveFlag(recipe, defaults, "--seq-length");
  const RecipeShape shape = ReadShape(recipe);
  std::optional<int> micro_batches = shape.MicroBatches();
  if (!fabric || !layers || !h || !seq || !micro_batches) return std::nullopt;
  return StageShape{*fabric, shape, *layers, *h, *seq, *micro_batches,
                    std::max(1, recipe.topology.gpus_per_node)};
}

// The recipe's token dispatcher (Megatron's default when it sets none and the stack says none).
std::string Dispatcher(const Recipe& recipe, const std::map<std::string, std::string>& defaults) {
  const char* key = "--moe-token-dispatcher-type";
  return GetValue(recipe, key).value_or(defaults.count(key) ? defaults.at(key) : "allgather");
}

// How many times an iteration runs a MoE layer's dispatch on the busiest stage: each micro-batch's
// forward, backward and a full recomputation's forward, in each of the stage's MoE layers.
double MoePasses(const Recipe& recipe, const std::map<std::string, std::string>& defaults,
                 const StageShape& st) {
  const std::optional<std::string> granularity = GetValue(recipe, "--recompute-granularity");
  const double forwards = granularity && *granularity == "full" ? 3 : 2;
  const double moe_share = 1 / PositiveFlag(recipe, defaults, "--moe-layer-freq").value_or(1);
  return st.micro_batches * st.layers / std::max(1, st.shape.pp) * moe_share * forwards;
}

}  // namespace

int NvlinkReach(const ClusterInfo& cluster, int gpus_per_node) {
  std::optional<Fabric> f = AssumedFabric(cluster);
  return f ? NvlinkReach(*f, gpus_per_node) : std::max(1, gpus_per_node);
}

std::optional<double> GradReduceSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                        const std::map<std::string, std::string>& defaults) {
  std::optional<Fabric> fabric = AssumedFabric(cluster);
  std::optional<ParameterCounts> c = CountParameters(recipe, defaults);
  if (!fabric || !c) return std::nullopt;
  const int per_node = std::max(1, recipe.topology.gpus_per_node);
  // A reduce-scatter moves (n-1)/n of the gradients once; an all-reduce twice.
  const double passes = c->distributed_optimizer ? 1 : 2;
  auto ring = [&](double params, double n, double stride) {
    if (n <= 1 || params <= 0) return 0.0;
    return passes * (n - 1) / n * params * c->grad_bytes /
           RingBandwidth(*fabric, per_node, stride, n);
  };
  return ring(c->dense, c->dense_dp, c->dense_dp_stride) +
         ring(c->expert, c->expert_dp, c->expert_dp_stride);
}

std::optional<double> ExposedDataParallelSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                                 const std::map<std::string, std::string>& defaults) {
  std::optional<double> reduce = GradReduceSeconds(recipe, cluster, defaults);
  std::optional<ParameterCounts> counts = CountParameters(recipe, defaults);
  if (!reduce || !counts) return std::nullopt;
  const auto exposed = [](bool overlapped, double t) { return overlapped ? 0.1 * t : t; };
  double t = exposed(GetValue(recipe, "--overlap-grad-reduce").has_value(), *reduce);
  if (counts->distributed_optimizer) {
    t += exposed(GetValue(recipe, "--overlap-param-gather").has_value(), *reduce * 2 / counts->grad_bytes);
  }
  return t;
}

std::optional<double> TpCollectiveSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                          const std::map<std::string, std::string>& defaults) {
  auto flag = [&](const std::string& key) { return PositiveFlag(recipe, defaults, key); };
  std::optional<StageShape> st = ReadStage(recipe, cluster, defaults);
  if (!st || st->shape.tp <= 1) return std::nullopt;
  const RecipeShape& shape = st->shape;
  const double tp = shape.tp;
  const double bandwidth = shape.tp <= NvlinkReach(st->fabric, st->per_node)
                               ? st->fabric.nvlink_bytes_per_s
                               : st->fabric.nic_bytes_per_s;
  const std::optional<std::string> granularity = GetValue(recipe, "--recompute-granularity");
  const double dense = granularity && *granularity == "full" ? 14 : 10;
  // A MoE layer: the attention's collectives, and the experts' only when they are split by ETP.
  const double etp = flag("--expert-tensor-parallel-size").value_or(tp);
  const double moe = dense / 2 + (etp > 1 ? dense / 2 : 0);
  const double experts = flag("--num-experts").value_or(0);
  const double moe_share = experts > 0 ? 1 / flag("--moe-layer-freq").value_or(1) : 0;
  const double per_layer = (1 - moe_share) * dense + moe_share * moe;
  const double bytes = (tp - 1) / tp * (st->seq / shape.cp) * shape.mbs * st->h * 2;
  const double stage_layers = st->layers / std::max(1, shape.pp);
  return st->micro_batches * stage_layers * per_layer * bytes / bandwidth;
}

std::optional<double> ExpertDispatchSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                            const std::map<std::string, std::string>& defaults) {
  auto flag = [&](const std::string& key) { return PositiveFlag(recipe, defaults, key); };
  if (ReadShape(recipe).experts <= 0) return 0.0;
  std::optional<StageShape> st = ReadStage(recipe, cluster, defaults);
  if (!st) return std::nullopt;
  const RecipeShape& shape = st->shape;
  const std::string dispatcher = Dispatcher(recipe, defaults);
  const bool allgather = dispatcher == "allgather";
  const double etp = shape.etp, ep = shape.ep;
  if (etp <= 1 && !allgather) return 0.0;
  const double tokens = st->seq / shape.cp * shape.mbs / shape.tp;  // per rank, sequence-parallel
  const double row = st->h * 2;
  double n = 0, gathered = 0;
  if (allgather) {
    n = etp * ep;
    gathered = n * tokens * row;
  } else {
    n = etp;
    gathered = n * tokens * flag("--moe-router-topk").value_or(2) * row;
  }
  if (n <= 1) return 0.0;
  const double collective = (n - 1) / n * gathered / RingBandwidth(st->fabric, st->per_node, 1, n);
  return MoePasses(recipe, defaults, *st) * 2 * collective;
}

std::optional<double> ExpertAllToAllSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                            const std::map<std::string, std::string>& defaults) {
  auto flag = [&](const std::string& key) { return PositiveFlag(recipe, defaults, key); };
  if (ReadShape(recipe).experts <= 0) return 0.0;
  std::optional<StageShape> st = ReadStage(recipe, cluster, defaults);
  if (!st) return std::nullopt;
  const RecipeShape& shape = st->shape;
  const std::string dispatcher = Dispatcher(recipe, defaults);
  const double ep = shape.ep, etp = std::max(1, shape.etp);
  if (ep <= 1 || dispatcher == "allgather") return 0.0;
  const double tokens = st->seq / shape.cp * shape.mbs / shape.tp;  // per rank, sequence-parallel
  const double rows = tokens * flag("--moe-router-topk").value_or(2) * st->h * 2;
  // Peers in the rank's NVLink domain (EP peers sit ETP ranks apart), the rest across the network.
  const double in_domain =
      std::clamp(std::floor(NvlinkReach(st->fabric, st->per_node) / etp), 1.0, ep);
  const double near = (in_domain - 1) / ep * rows, far = (ep - in_domain) / ep * rows;
  const double transfer =
      std::max(near / st->fabric.nvlink_bytes_per_s, far / st->fabric.nic_bytes_per_s);
  return MoePasses(recipe, defaults, *st) * 2 * transfer;  // dispatch and combine
}

}  // namespace attune::agents
