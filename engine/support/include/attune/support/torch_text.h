// Copyright attune authors.
//
// The failure texts PyTorch, its NCCL watchdog and torchrun print, whatever the training framework
// on top: for the simulated logs every stack renders (attune/sim_plan.h). Formats follow PyTorch's
// own messages (reference §4), which the stacks' triage files match.
#ifndef ATTUNE_SUPPORT_TORCH_TEXT_H_
#define ATTUNE_SUPPORT_TORCH_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "attune/sim_plan.h"

namespace attune::support {

// "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate X GiB. GPU 0 has a total
// capacity of ..." for the failing allocation `memory` describes.
std::string TorchOutOfMemoryLine(const sim::SimMemory& memory);

// The watchdog's lines for a collective of `numel` elements that timed out after `timeout_s`,
// printed at virtual second `at_s`, ending with the DistBackendError termination.
std::vector<std::string> NcclWatchdogLines(double at_s, int64_t sequence, int64_t numel,
                                           double timeout_s);

// torchrun's ChildFailedError block for `script` (exit code; `signal` such as "Signal 6
// (SIGABRT) received by PID 4242", or "").
std::vector<std::string> TorchrunChildFailedLines(double at_s, const std::string& script,
                                                  int exit_code, const std::string& signal);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_TORCH_TEXT_H_
