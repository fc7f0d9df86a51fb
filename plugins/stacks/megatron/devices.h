// Copyright attune authors.
//
// Which devices a lever works on. levers.yaml marks levers that need CUDA (CUDA graphs, fused
// CUDA/Transformer Engine kernels, NCCL and CUDA environment variables) with `devices: [gpu]`;
// on a CPU cluster LegalMoves never offers them and Validate refuses their command-line flags.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_DEVICES_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_DEVICES_H_

#include <vector>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "knowledge.h"
#include "validate.h"

namespace attune::megatron {

// The kind of a cluster's devices: ClusterInfo::device_type "cpu" (any case) is kCpu, an empty
// device type is kUnknown (nothing is filtered), anything else ("H100", "gpu") is kGpu.
DeviceKind ClusterDeviceKind(const ClusterInfo& cluster);

// True when the lever may be used on devices of this kind (always for kUnknown).
bool LeverRunsOn(const LeverSpec& spec, DeviceKind kind);

// Rule "dev.gpu_only": one violation per command-line key of a lever that does not run on the
// cluster's devices and is set in the recipe. Environment keys of such levers are not refused: a
// CPU process ignores CUDA/NCCL variables, and recipes written for GPUs often carry them.
std::vector<Violation> DeviceViolations(const std::vector<LeverSpec>& levers, const Recipe& recipe,
                                        const ClusterInfo& cluster);

// ValidateRecipe's combination rules and DeviceViolations: what a legal move must not violate.
std::vector<Violation> ClusterViolations(const Knowledge& knowledge, const Recipe& recipe,
                                         const ClusterInfo& cluster);

// ClusterViolations and the flags that are no Megatron-LM argument (UnknownArguments, rule
// "args.known"), in one InvalidArgument message: Stack::Validate. Moves need not repeat the
// argument check: they change only lever keys, which are Megatron-LM arguments (arguments_test).
Status ValidateForCluster(const Knowledge& knowledge, const Recipe& recipe,
                          const ClusterInfo& cluster);

// The device and argument rules in words, for Describe().
ConstraintInfo DeviceConstraint();
ConstraintInfo ArgumentsConstraint();

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_DEVICES_H_
