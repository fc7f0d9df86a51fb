// Copyright attune authors.
//
// ClusterInfo: what a launcher tells the engine and stacks about the devices it runs jobs on.
#ifndef ATTUNE_CLUSTER_H_
#define ATTUNE_CLUSTER_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace attune {

struct ClusterInfo {
  std::string device_type;        // "H100", "A100", "cpu"
  double device_memory_gib = 0;   // per device; 0 when unknown
  double peak_tflops = 0;         // dense BF16 per device; 0 when unknown
  int devices_per_node = 1;
  int max_nodes = 1;
  // Generation facts stacks need for validation (e.g. CUDA_DEVICE_MAX_CONNECTIONS before Blackwell).
  int compute_capability_major = 0;  // 8 A100, 9 H100/H200, 10 B200/GB200; 0 not a GPU
  bool virtual_time = false;         // the launcher's clock is simulated (sim launcher)
  // The Kubernetes namespace the launcher's jobs run in ("" when not on Kubernetes). An agent's
  // guard confines kubectl to it unless the agent's own options name one.
  std::string k8s_namespace;
  // Dry runs only (the sim launcher's `sequence_length`): the tokens per sequence to model a recipe
  // with when its data have no fixed length (a dataset of varying lengths, unpacked, whose batches
  // are as long as their longest sample); 0 when not given. A stack's simulation plan uses it only
  // where the recipe states no length of its own.
  int64_t sim_sequence_length = 0;
};

nlohmann::json ClusterInfoToJson(const ClusterInfo& c);
ClusterInfo ClusterInfoFromJson(const nlohmann::json& j);

}  // namespace attune

#endif  // ATTUNE_CLUSTER_H_
