// Copyright attune authors.
//
// Device memory of a Megatron-LM run per pipeline stage: weights, gradients and optimizer state
// (sharded by the distributed optimizer), activations after Korthikanti et al. 2022 for each
// recompute / sequence-parallel setting, the micro-batches the 1F1B or interleaved schedule keeps
// in flight, logits, workspaces and allocator fragmentation. docs/sim.md has the derivation.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_MEMORY_MODEL_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_MEMORY_MODEL_H_

#include "hardware.h"
#include "setup.h"

namespace attune::sim {

// Share of allocated memory the caching allocator holds on top as reserved-but-unallocated.
inline constexpr double kFragmentation = 0.10;

struct StageMemory {
  int stage = 0;
  double params = 0;             // elements on one GPU of this stage
  double weight_optimizer_b = 0; // params, grads, optimizer state (bytes)
  double activation_b = 0;       // activations kept for backward at the peak
  double transient_b = 0;        // workspaces, logits, one layer's gradients during backward
  double max_allocated_b = 0;
  double max_reserved_b = 0;
  double non_pytorch_b = 0;      // CUDA context, NCCL and cuBLAS outside the caching allocator
  double largest_allocation_b = 0;
};

struct MemoryEstimate {
  StageMemory worst;             // the stage with the largest reserved + non-PyTorch memory
  double capacity_b = 0;
  bool fits = true;
  double PeakGib() const;        // worst.max_reserved_b + worst.non_pytorch_b in GiB
};

// Korthikanti's activation bytes of one transformer layer for one micro-batch on one GPU, with
// nothing recomputed (the `moe` variant for a MoE layer). Exposed for the tests.
double LayerActivationBytes(const TrainingSetup& setup, bool moe);

StageMemory EstimateStageMemory(const TrainingSetup& setup, const ClusterSpec& cluster, int stage);
MemoryEstimate EstimateMemory(const TrainingSetup& setup, const ClusterSpec& cluster);

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_MEMORY_MODEL_H_
