// Copyright attune authors.
//
// The terms the step-time model is built from, shared by its three files: perf_model.cc (the
// layer, the pipeline, the optimizer), moe_model.cc (routing, the experts' GEMMs and their
// dispatch) and dp_comm.cc (data-parallel communication). Internal to the model: nothing outside
// those files includes this.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_PERF_TERMS_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_PERF_TERMS_H_

#include <algorithm>
#include <cmath>

#include "perf_model.h"

namespace attune::sim::step_internal {

// Share of HBM bandwidth that streaming (elementwise) kernels reach.
inline constexpr double kHbmEfficiency = 0.8;
// Host time per kernel with CUDA graphs, relative to eager launches.
inline constexpr double kGraphHostShare = 0.1;
// torch.compile (AutoModel's compile.enabled) fuses the elementwise chains between GEMMs and
// launches fewer, larger kernels: assumed, not fitted (no calibration row runs compiled), a third
// less elementwise traffic and 60% of the eager host time.
inline constexpr double kCompiledElementwiseShare = 0.67;
inline constexpr double kCompiledHostShare = 0.6;
inline constexpr double kBytesBf16 = 2;
// Fixed cost of one expert GEMM launched from SequentialMLP's Python loop.
inline constexpr double kSequentialExpertKernelS = 10e-6;

// Large-GEMM efficiency by generation (the order cuBLAS reaches on big BF16 shapes; the A100
// value is fitted to the A100 calibration rows; docs/sim.md).
inline double GemmPeakFraction(const GpuSpec& gpu, const ModelFactors& f) {
  if (gpu.compute_capability_major <= 8) return 0.72;
  if (gpu.compute_capability_major == 9) return 0.72;
  return f.blackwell_gemm_efficiency;
}

// What the GEMMs of a layer run in (attention, elementwise and communication stay BF16).
enum class GemmPrecision { kBf16, kFp8, kFp4 };

struct Ctx {
  const TrainingSetup& s;
  const ClusterSpec& c;
  const ModelFactors& f;
  double b, seq, cp, tp, tokens;  // tokens = b·s/CP handled by one GPU per micro-batch
  double peak, hbm;               // BF16 FLOP/s, bytes/s
  GemmPrecision prec = GemmPrecision::kBf16;
  double moe_load = 1;            // busiest EP rank's routed load relative to balanced
  double ew = 1;                  // elementwise_traffic, less under torch.compile

  Ctx(const TrainingSetup& setup, const ClusterSpec& cluster, const ModelFactors& factors)
      : s(setup), c(cluster), f(factors) {
    b = static_cast<double>(setup.par.micro_batch);
    seq = static_cast<double>(setup.model.seq_length);
    cp = setup.par.cp;
    tp = setup.par.tp;
    tokens = b * seq / cp;
    peak = cluster.gpu.peak_bf16_tflops * 1e12;
    hbm = cluster.gpu.hbm_tb_s * 1e12 * kHbmEfficiency;
    if (setup.feat.fp4 && cluster.gpu.peak_fp4_tflops > 0) prec = GemmPrecision::kFp4;
    else if (setup.feat.fp8 && cluster.gpu.peak_fp8_tflops > 0) prec = GemmPrecision::kFp8;
    moe_load = MoeBusiestLoad(setup, factors);
    ew = factors.elementwise_traffic * (setup.feat.compiled ? kCompiledElementwiseShare : 1.0);
  }
};

inline double Sat(double x, double half) { return x / (x + half); }

// Bytes per element of a GEMM operand in the layer's precision: FP8 1, NVFP4 half a byte plus
// one FP8 scale per 16 values.
inline double OperandBytes(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp8: return 1.0;
    case GemmPrecision::kFp4: return 0.5 + 1.0 / 16;
    case GemmPrecision::kBf16: break;
  }
  return kBytesBf16;
}

// Seconds for one forward GEMM (m×k)·(k×n): the larger of its tensor-core time (peak of the
// precision × large-GEMM efficiency × σ per dimension) and the time to stream its operands and
// BF16 output through HBM (the roofline; small per-expert GEMMs reach it).
inline double GemmTime(const Ctx& x, double m, double n, double k) {
  double frac = GemmPeakFraction(x.c.gpu, x.f) * Sat(m, x.f.gemm_half_dim) *
                Sat(n, x.f.gemm_half_dim) * Sat(k, x.f.gemm_half_dim);
  double peak = x.peak;
  if (x.prec == GemmPrecision::kFp8) {
    peak = x.c.gpu.peak_fp8_tflops * 1e12;
    frac *= x.f.fp8_gemm_fraction;
  } else if (x.prec == GemmPrecision::kFp4) {
    peak = x.c.gpu.peak_fp4_tflops * 1e12;
    frac *= x.f.fp4_gemm_fraction;
  }
  double compute = 2.0 * m * n * k / (peak * frac);
  double memory = ((m * k + k * n) * OperandBytes(x.prec) + m * n * kBytesBf16) / x.hbm;
  return std::max(compute, memory);
}

// Bandwidth (bytes/s) and latency (s) of a group of `size` ranks `stride` apart.
struct Link {
  double bw;
  double latency;
};
// A ring that leaves the NVLink domain crosses it through the NICs of the group's members in
// each domain: NCCL runs one channel per NIC, so the group's inter-node bus bandwidth per rank
// is the per-GPU network times the members per domain, up to the NVLink bandwidth.
inline Link GroupLink(const Ctx& x, double stride, double size) {
  double domain = static_cast<double>(x.c.NvlinkDomain());
  if (stride * size <= domain) return {x.c.NvlinkBusBytesPerS(), 2e-6};
  double members = std::max(1.0, std::min(size, std::floor(domain / stride)));
  double bw = std::min(x.c.NvlinkBusBytesPerS(), x.c.InterNodeBusBytesPerS() * members);
  return {bw, x.c.inter_node_latency_us * 1e-6};
}

inline double AllReduce(const Link& l, double n, double bytes) {
  if (n <= 1) return 0;
  return 2 * (n - 1) / n * bytes / l.bw + 2 * (n - 1) * l.latency;
}
inline double AllGather(const Link& l, double n, double bytes_out) {
  if (n <= 1) return 0;
  return (n - 1) / n * bytes_out / l.bw + (n - 1) * l.latency;
}

// One layer's forward cost for one micro-batch on one GPU.
struct LayerCost {
  double gemm = 0, attention = 0, elementwise = 0, tp = 0, cp = 0, ep = 0;
  double scores = 0;  // unfused attention's softmax/dropout passes (part of elementwise)
  double moe = 0;     // router and token permutation (memory-bound)
  double shared = 0;  // shared experts' GEMMs (part of gemm)
  double mlp = 0;     // the MLP's (dense) or routed experts' (MoE) GEMMs (part of gemm)
  double norms = 0;   // the two LayerNorms (part of elementwise)
  double act = 0;     // the activation function (part of elementwise)
};

inline double MlpFactor(const ModelShape& m) { return m.swiglu ? 3.0 : 2.0; }

// MoE terms (moe_model.cc): the routed experts' and shared experts' GEMMs of one MoE layer, the
// router and the token permutation, and the dispatch and combine.
void AddExperts(const Ctx& x, LayerCost* cost);
void AddRouterAndPermutation(const Ctx& x, LayerCost* cost);
void AddExpertComm(const Ctx& x, LayerCost* cost);

// Data-parallel communication (dp_comm.cc): the seconds of an iteration's gradient reduction and
// parameter gathers that the compute leaves exposed, given one micro-batch's forward and backward
// compute windows.
double DataParallelComm(const Ctx& x, const ParamCounts& pc, double window_bwd, double window_fwd);

}  // namespace attune::sim::step_internal

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_PERF_TERMS_H_
