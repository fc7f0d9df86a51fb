// Copyright attune authors.
//
// How long a Megatron recipe's data-parallel gradient reduce takes, estimated from the model's
// shape and the fabric a cluster of its GPU type usually has.
//
// ClusterInfo names the device type but not the links, so the bandwidths are the reference
// systems' (DGX / HGX / NVL72 datasheets): NVLink per GPU one way — A100 300 GB/s, H100 and H200
// 450 GB/s, Blackwell 900 GB/s — and one NIC per GPU between nodes — 200 Gb/s (HDR) on A100,
// 400 Gb/s (NDR / ConnectX-7) on Hopper, B200 and GB200, 800 Gb/s (ConnectX-8) on B300 and GB300
// — with NCCL reaching kBusEfficiency of them. A GB200 or GB300 system is an NVL72 rack: its
// NVLink reaches 72 GPUs, not only the 4 of a compute tray, so a group within 72 consecutive ranks
// talks over NVLink. A cluster with slower links makes the estimate too small; the heuristic then
// tries the overlap later, not never.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_COMM_ESTIMATE_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_COMM_ESTIMATE_H_

#include <map>
#include <optional>
#include <string>

#include "attune/cluster.h"
#include "attune/recipe.h"

namespace attune::agents {

struct Fabric {
  double nvlink_bytes_per_s = 0;  // per GPU, one way, as NCCL reaches it
  double nic_bytes_per_s = 0;     // per GPU between nodes, as NCCL reaches it
  int nvlink_domain = 0;          // GPUs one NVLink fabric joins; 0: one node's
};

// The GPUs a group can span and still talk over NVLink: the fabric's NVLink domain, or the node.
int NvlinkReach(const Fabric& f, int gpus_per_node);
// The same for `cluster`'s device type (its node's GPUs when the type is not known).
int NvlinkReach(const ClusterInfo& cluster, int gpus_per_node);

// The fabric assumed for `cluster`'s device type (the header says which); std::nullopt for a
// device that is not a known NVIDIA data-centre GPU.
std::optional<Fabric> AssumedFabric(const ClusterInfo& cluster);

// The dense BF16 tensor-core peak (FLOP/s per GPU) of `cluster`'s device type, from the vendors'
// datasheets (without sparsity): A100 312 T, H100 and H200 989 T, B200 and B300 2,250 T, GB200
// 2,450 T, GB300 2,500 T; std::nullopt for another device.
std::optional<double> AssumedBf16Peak(const ClusterInfo& cluster);

// Seconds per iteration of the gradient reduce (a reduce-scatter under the distributed
// optimizer, an all-reduce without) of `recipe`'s busiest stage over its data-parallel groups,
// dense and expert; std::nullopt without the model's shape or a known fabric.
std::optional<double> GradReduceSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                        const std::map<std::string, std::string>& defaults = {});

// Seconds per iteration of the data-parallel communication a step of `recipe` leaves exposed: the
// gradient reduce (GradReduceSeconds) without --overlap-grad-reduce, and under the distributed
// optimizer the parameter all-gather (BF16: half the bytes of FP32 gradients) without
// --overlap-param-gather; a tenth of each with its overlap on (the share the simulated cluster
// leaves exposed too). std::nullopt without the model's shape or a known fabric.
std::optional<double> ExposedDataParallelSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                                 const std::map<std::string, std::string>& defaults = {});

// Seconds per iteration of the tensor-parallel collectives of `recipe`'s busiest pipeline stage,
// the transfers --tp-comm-overlap pipelines with the GEMMs. With sequence parallelism each layer's
// forward all-gathers its input before the QKV and FC1 GEMMs and reduce-scatters after the
// projection and FC2 (4 collectives); its backward reduce-scatters the input gradients of the
// two column-parallel GEMMs, all-gathers the output gradients of the two row-parallel ones and
// gathers the column-parallel inputs again for their weight gradients (6); full recomputation
// runs the forward's 4 again. Each moves (TP-1)/TP of the micro-batch's activations (sequence /
// CP × micro-batch × hidden, 2 bytes) per GPU, over NVLink while TP fits in a node. In a MoE
// layer only the attention's half of them is tensor-parallel unless the experts are too (ETP >
// 1). Without sequence parallelism the all-reduces move about the same. std::nullopt without TP
// > 1, the model's shape, the global batch or a known fabric.
std::optional<double> TpCollectiveSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                          const std::map<std::string, std::string>& defaults = {});

// Seconds per iteration of the token traffic of `recipe`'s MoE layers (busiest stage) that
// depends on the expert tensor-parallel size, the collectives Megatron's dispatchers run in the
// expert grid (ETP peers adjacent, EP peers ETP apart): with the alltoall and flex dispatchers the
// all-gather of the routed rows (m/TP·k·h·2 bytes per rank, m the micro-batch's tokens) over ETP
// in the dispatch and its reduce-scatter before the combine; with the allgather dispatcher the
// gather of every token of the ETP×EP group and its reduce-scatter. Each moves (n-1)/n of the
// gathered bytes, in the forward, the backward and a full recomputation's forward. 0 for a dense
// model or ETP 1 without the allgather dispatcher; std::nullopt without the model's shape, the
// global batch or a known fabric.
std::optional<double> ExpertDispatchSeconds(const Recipe& recipe, const ClusterInfo& cluster,
                                            const std::map<std::string, std::string>& defaults = {});

// Seconds per iteration of the expert-parallel all-to-all of `recipe`'s MoE layers (busiest stage)
// under the alltoall and flex dispatchers, the transfers --overlap-moe-expert-parallel-comm runs
// under another micro-batch's compute: each rank sends its routed rows (m/TP·k·h·2 bytes, m the
// micro-batch's tokens) to the EP group in the dispatch and takes them back in the combine, in
// the forward, the backward and a full recomputation's forward; (EP-1)/EP of the rows leave the
// rank. The EP group spans EP×ETP consecutive ranks, EP peers ETP apart: the rows to peers in the
// rank's NVLink domain go over NVLink, the rest over the rank's NIC, at the same time. 0 for a
// dense model, EP 1 or the allgather dispatcher; std::nullopt without the model's shape, the
// global batch or a known fabric.
std::optional<double> ExpertAllToAllSeconds(
    const Recipe& recipe, const ClusterInfo& cluster,
    const std::map<std::string, std::string>& defaults = {});

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_COMM_ESTIMATE_H_
