// Copyright attune authors.
//
// Multi-node torchrun recipes on KubeRay. A RayJob runs its entrypoint once, on the head pod, so a
// torchrun recipe whose GPUs are on worker pods runs under a Ray driver, torchrun_on_ray.py (this
// folder; its source is compiled into the plugin), that starts one torchrun per worker node with
// its own rendezvous (docs/kuberay.md, "Multi-node torchrun recipes"). The driver travels inside
// the entrypoint, base64-encoded in a `python3 -c` line, so the image needs only Ray and PyTorch.
//
// Pure functions; thread-safe.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_TORCHRUN_DRIVER_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_TORCHRUN_DRIVER_H_

#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::kuberay {

// torchrun_on_ray.py, exactly (generated at build time).
extern const char kTorchrunDriverSource[];

// `torchrun ...` or `python3 -m torch.distributed.run ...`.
bool IsTorchrun(const std::vector<std::string>& argv);

// The argv that runs the torchrun command `argv` on `nodes` worker nodes of `gpus_per_node` GPUs:
//   python3 -c '<decode and run the next word>' <driver, base64> --nnodes N --gpus-per-node G --
//       torchrun <the recipe's options without --nnodes, --node-rank, --master-addr,
//                 --master-port, --rdzv-*, --standalone> <script> <args>
// Fails (kInvalidArgument, with what to change) when --nproc-per-node is not `gpus_per_node`, or
// the recipe's --nnodes is not `nodes`.
Result<std::vector<std::string>> TorchrunOnRay(const std::vector<std::string>& argv, int nodes,
                                               int gpus_per_node);

// RFC 4648 base64 (with padding).
std::string Base64(const std::string& bytes);

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_TORCHRUN_DRIVER_H_
