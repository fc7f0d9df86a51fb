// Copyright attune authors.
//
// The simulated cluster's hardware: GPU generations and the cluster a workflow describes in its
// launcher `with:` block. Figures are the vendors' published ones (see docs/sim.md and
// ../shared/calibration/README.md); nothing here is fitted.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_HARDWARE_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_HARDWARE_H_

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attune/cluster.h"
#include "attune/status.h"

namespace attune::sim {

// One GPU generation.
struct GpuSpec {
  std::string name;              // "A100", "H100", "H200", "B200", "GB200", "B300", "GB300"
  double peak_bf16_tflops = 0;   // dense
  double peak_fp8_tflops = 0;    // dense; 0 when the GPU has no FP8 tensor cores
  double peak_fp4_tflops = 0;    // dense NVFP4; 0 before Blackwell
  double memory_gib = 0;         // what the driver reports as total capacity
  double hbm_tb_s = 0;           // HBM bandwidth, TB/s
  double nvlink_gb_s = 0;        // NVLink bandwidth per GPU, both directions together, GB/s
  int nvlink_domain = 8;         // GPUs that share one NVLink domain
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  double inter_node_gbit_s = 0;  // default network per GPU (InfiniBand/RoCE), Gb/s
  // Softmax exponentials per second (SFU EX2), in units of 10^12; flash attention on Blackwell
  // is bounded by them as much as by its matrix multiplies (docs/sim.md, "Attention").
  double exp_tera_per_s = 0;
};

// The GPU generation named by `name` (case-insensitive; "H100-SXM-80GB" finds H100, "HGX B300"
// and "B300-SXM" find B300, "GB300-NVL72" finds GB300).
std::optional<GpuSpec> FindGpu(const std::string& name);

// Failure probabilities per job (each in [0, 1]; their sum at most 1).
struct FailureRates {
  double nccl_timeout = 0;
  double hang = 0;
  double node_failure = 0;
};

// The cluster described by the launcher's `with:` block.
struct ClusterSpec {
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  double inter_node_gbit_s = 0;     // per GPU
  double inter_node_latency_us = 5;
  double startup_s = 90;            // job start-up before the first iteration
  double queue_s = 0;               // wait between submit and start
  double noise_cv = 0.01;           // step-time coefficient of variation
  uint64_t seed = 0;                // noise/failure stream (0: the campaign seed)
  FailureRates failures;
  // The RL workload's mean prompt and response lengths (`with.rollout`); 0: the stack's defaults.
  int64_t rollout_prompt_tokens = 0;
  int64_t rollout_response_tokens = 0;
  // Tokens per sequence for recipes whose data have no fixed length (`with.sequence_length`); 0:
  // none, and such a recipe is refused by its stack.
  int64_t sequence_length = 0;

  int WorldSize() const { return nodes * gpus_per_node; }
  // GPUs that reach each other over NVLink.
  int NvlinkDomain() const;
  // Bandwidths in bytes/s as NCCL sees them (bus bandwidth per GPU).
  double NvlinkBusBytesPerS() const;
  double InterNodeBusBytesPerS() const;
};

// Parses the `with:` JSON. Unknown keys are errors naming the known ones. Defaults: 1 node of
// 8 H100, the GPU's usual network, 90 s start-up, 1% noise, no failures.
Result<ClusterSpec> ParseClusterConfig(const nlohmann::json& with, uint64_t campaign_seed);

// The engine's view of the cluster.
ClusterInfo ToClusterInfo(const ClusterSpec& cluster);

// A default cluster for a GPU generation (used by `attune sim predict`).
ClusterSpec DefaultCluster(const GpuSpec& gpu, int world_size);

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_HARDWARE_H_
