#include "attune/support/torch_text.h"

#include <algorithm>

#include "attune/support/printf.h"

namespace attune::support {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;


}  // namespace

std::string TorchOutOfMemoryLine(const sim::SimMemory& m) {
  return support::StrFormat(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a total "
      "capacity of %.2f GiB of which %.2f MiB is free. Including non-PyTorch memory, this process "
      "has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and "
      "%.2f MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is "
      "large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
      "fragmentation.  See documentation for Memory Management  "
      "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
      m.tried_to_allocate_b / kGiB, m.capacity_b / kGiB, m.free_b / kMiB, m.in_use_b / kGiB,
      m.allocated_b / kGiB, m.reserved_unallocated_b / kMiB);
}

std::vector<std::string> NcclWatchdogLines(double at_s, int64_t sequence, int64_t numel,
                                           double timeout_s) {
  long long seq = static_cast<long long>(sequence);
  long long n = static_cast<long long>(numel);
  long long ms = static_cast<long long>(timeout_s * 1000);
  // "[E1203 10:00:00...]": glog's month-day and time.
  std::string stamp = sim::VirtualTimestamp(at_s).substr(5, 5);
  stamp.erase(std::remove(stamp.begin(), stamp.end(), '-'), stamp.end());
  std::string prefix = "[rank0]:[E" + stamp + " ProcessGroupNCCL.cpp:632] [Rank 0] ";
  return {
      prefix + support::StrFormat("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%lld, "
                      "OpType=ALLREDUCE, NumelIn=%lld, NumelOut=%lld, Timeout(ms)=%lld) ran for "
                      "%lld milliseconds before timing out.",
                      seq, n, n, ms, ms + 81),
      support::StrFormat("[rank0]:[E ProcessGroupNCCL.cpp:2271] [PG ID 2 PG GUID 3 Rank 0] failure detected "
             "by watchdog at work sequence id: %lld PG status: last enqueued work: %lld, last "
             "completed work: %lld",
             seq, seq + 1, seq - 1),
      "[rank0]:[E ProcessGroupNCCL.cpp:670] Some NCCL operations have failed or timed out. Due to "
      "the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
      "corrupted/incomplete data.",
      "[rank0]:[E ProcessGroupNCCL.cpp:676] To avoid data inconsistency, we are taking the entire "
      "process down.",
      "terminate called after throwing an instance of 'c10::DistBackendError'"};
}

std::vector<std::string> TorchrunChildFailedLines(double at_s, const std::string& script,
                                                  int exit_code, const std::string& signal) {
  return {"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
          "============================================================",
          script + " FAILED",
          "------------------------------------------------------------",
          "Root Cause (first observed failure):",
          "[0]:",
          "  time      : " + sim::VirtualTimestamp(at_s).substr(0, 19) + "_",
          "  rank      : 0 (local_rank: 0)",
          support::StrFormat("  exitcode  : %d (pid: 4242)", exit_code),
          "  error_file: <N/A>",
          signal.empty() ? "  traceback : To enable traceback see: "
                           "https://pytorch.org/docs/stable/elastic/errors.html"
                         : "  traceback : " + signal,
          "============================================================"};
}

}  // namespace attune::support
