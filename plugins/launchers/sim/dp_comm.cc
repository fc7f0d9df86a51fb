// Copyright attune authors.
//
// The step model's data-parallel communication (docs/sim.md): gradient reduction and parameter
// gathers over the data-parallel groups, replicated, with the distributed optimizer, or fully
// sharded (FSDP) per micro-batch, and what the compute hides of them.
#include <algorithm>
#include <cstdint>

#include "perf_model.h"
#include "perf_terms.h"

namespace attune::sim::step_internal {
namespace {

double ParamBytes(double params, bool bf16_grads) { return params * (bf16_grads ? 2.0 : 4.0); }

// The distributed optimizer all-gathers the updated parameters in BF16, or already quantized with
// --fp8-param-gather (1 byte) / --fp4-param-gather (half a byte and its block scales).
double GatherBytesPerParam(const Features& f) {
  if (f.fp4_param_gather) return 0.5 + 1.0 / 16;
  if (f.fp8_param_gather) return 1.0;
  return kBytesBf16;
}

// Communication `c` behind `window` seconds of compute: what the compute cannot hide, and at least
// a tenth of it (the first bucket, the last one, the launch).
double Hidden(double c, double window) { return c <= 0 ? 0.0 : std::max(0.1 * c, c - window); }

}  // namespace

// Exposed data-parallel communication per iteration (grad reduce and param all-gather). The
// windows are one micro-batch's forward and backward compute.
double DataParallelComm(const Ctx& x, const ParamCounts& pc, double window_bwd, double window_fwd) {
  const Parallelism& p = x.s.par;
  const Features& f = x.s.feat;
  double dp_dense = static_cast<double>(p.dp) * p.cp;
  double dp_expert = std::max(1.0, static_cast<double>(p.world) / (p.etp * p.ep * p.pp));
  double grad = 0, gather = 0;
  auto group = [&](double params, double n, double stride) {
    if (n <= 1 || params <= 0) return;
    Link l = GroupLink(x, stride, n);
    // Frozen weights have no gradients to reduce (the adapters' are not modelled).
    double bytes = f.frozen_base ? 0.0 : ParamBytes(params, f.grad_reduce_in_bf16);
    if (f.fsdp || f.distributed_optimizer) {
      grad += AllGather(l, n, bytes);  // a reduce-scatter moves the same bytes
      gather += AllGather(l, n, params * GatherBytesPerParam(f));
    } else {
      grad += AllReduce(l, n, bytes);
    }
  };
  group(pc.dense_per_gpu, dp_dense, x.tp);
  group(pc.expert_per_gpu, dp_expert, static_cast<double>(p.etp) * p.ep);
  if (f.fsdp) {
    // Fully sharded: each micro-batch gathers the parameters for its forward, prefetched behind the
    // forward's compute, and (resharded after the forward) again for its backward, where the
    // gradients' reduce-scatter shares the backward's compute with them; only the last
    // micro-batch reduces when the sync is deferred.
    const double m = static_cast<double>(std::max<int64_t>(1, p.MicroBatches()));
    const double forward = f.overlap_param_gather ? Hidden(gather, window_fwd) : gather;
    const double bwd_gather = f.fsdp_reshard_after_forward ? gather : 0.0;
    auto backward = [&](bool reduce) {
      const double rs = reduce ? grad : 0.0;
      return f.overlap_grad_reduce ? Hidden(bwd_gather + rs, window_bwd)
                                   : Hidden(bwd_gather, window_bwd) + rs;
    };
    return m * forward + (m - 1) * backward(!f.fsdp_defer_grad_sync) + backward(true);
  }
  double exposed_grad = f.overlap_grad_reduce ? Hidden(grad, window_bwd) : grad;
  double exposed_gather = f.overlap_param_gather ? Hidden(gather, window_fwd) : gather;
  return exposed_grad + exposed_gather;
}

}  // namespace attune::sim::step_internal
