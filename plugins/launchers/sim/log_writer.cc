#include "log_writer.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include <cstdarg>
#include <cstdio>

#include "perf_model.h"

namespace attune::sim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;
constexpr std::time_t kVirtualEpoch = 1767225600;  // 2026-01-01 00:00:00 UTC
constexpr const char* kRoot = "/workspace/megatron-lm";

// printf into a std::string (plugins link only attune::api, so no fmt).
__attribute__((format(printf, 1, 2))) std::string F(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(static_cast<size_t>(std::max(0, n)) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), format, args);
  va_end(args);
  out.resize(static_cast<size_t>(std::max(0, n)));
  return out;
}

long long LL(int64_t v) { return static_cast<long long>(v); }

std::string ArgName(const std::string& flag) {
  std::string name = flag.substr(flag.find_first_not_of('-'));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string FormatTimestamp(double virtual_s) {
  double whole = std::floor(virtual_s);
  std::time_t t = kVirtualEpoch + static_cast<std::time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  int micros = static_cast<int>(std::min(999999.0, (virtual_s - whole) * 1e6));
  return F("%s.%06d", buf, micros);
}

LogWriter::LogWriter(const TrainingSetup& setup, const ClusterSpec& cluster, double start_s)
    : setup_(setup), cluster_(cluster), curve_(setup), now_(start_s) {}

void LogWriter::Line(const std::string& line) {
  text_ += line;
  text_ += '\n';
}

void LogWriter::DatetimeMarker(const std::string& marker) {
  Line("[" + marker + "] datetime: " + FormatTimestamp(now_) + " ");
}

void LogWriter::WorldSizeLine() {
  const Parallelism& p = setup_.par;
  Line(F("using world size: %d, data-parallel size: %d, context-parallel size: %d, "
                   "hierarchical context-parallel sizes: None, tensor-model-parallel size: %d, "
                   "pipeline-model-parallel size: %d",
                   p.world, p.dp, p.cp, p.tp, p.pp));
}

void LogWriter::Startup(double setup_s) {
  const Parallelism& p = setup_.par;
  Line("Number of virtual stages per pipeline stage: " +
       (p.vpp > 1 ? std::to_string(p.vpp) : std::string("None")));
  if (!setup_.feat.fp16) {
    Line("using torch.bfloat16 for parameters ...");
    Line("accumulate and all-reduce gradients in fp32 for bfloat16 data type.");
  }
  Line("------------------------ arguments ------------------------");
  std::map<std::string, std::string> args;
  for (const auto& [flag, value] : setup_.flags) args[Lower(ArgName(flag))] = value.empty() ? "True" : value;
  args["data_parallel_size"] = std::to_string(p.dp);
  args["world_size"] = std::to_string(p.world);
  for (const auto& [name, value] : args) {
    Line("  " + name + " " + std::string(name.size() < 48 ? 48 - name.size() : 1, '.') + " " + value);
  }
  Line("-------------------- end of arguments ---------------------");
  Line("> initializing torch distributed ...");
  Line(F("> initialized tensor model parallel with size %d", p.tp));
  Line(F("> initialized pipeline model parallel with size %d", p.pp));
  Line(F("> setting random seeds to %lld ...", LL(setup_.run.seed)));
  int64_t dummy = setup_.model.vocab - setup_.model.vocab_unpadded;
  Line(F(" > padded vocab (size: %lld) with %lld dummy tokens (new size: %lld)",
          LL(setup_.model.vocab_unpadded), LL(std::max<int64_t>(0, dummy)), LL(setup_.model.vocab)));
  Advance(setup_s * 0.4);
  DatetimeMarker("after megatron is initialized");
  ParamCounts pc = CountParams(setup_);
  for (int stage = 0; stage < p.pp; ++stage) {
    double params = stage == 0 ? pc.first_stage_per_gpu : pc.last_stage_per_gpu;
    for (int t = 0; t < p.tp; ++t) {
      Line(F(" > number of parameters on (tensor, gtp_weight_remat, pipeline) model "
             "parallel rank (%d, 0, %d): %lld",
             t, stage, LL(static_cast<int64_t>(params + pc.expert_per_gpu))));
    }
  }
  Advance(setup_s * 0.4);
  DatetimeMarker("after model, optimizer, and learning rate scheduler are built");
  Advance(setup_s * 0.2);
  DatetimeMarker("after dataloaders are built");
  Line("done with setup ...");
  Line("training ...");
  DatetimeMarker("before the start of training step");
}

void LogWriter::IterationLine(int64_t iteration, double interval_s, int64_t interval_iters,
                              double loss_sum, double aux_sum, double tflops_per_step) {
  const RunControl& run = setup_.run;
  double n = static_cast<double>(std::max<int64_t>(1, interval_iters));
  double ms = interval_s * 1000.0 / n;
  std::string out = " [" + FormatTimestamp(now_) + "]";
  out += F(" iteration %8lld/%8lld |", LL(iteration),
           LL(run.train_iters > 0 ? run.train_iters : run.IterationsToRun()));
  out += F(" consumed samples: %12lld |", LL(iteration * setup_.par.global_batch));
  out += F(" elapsed time per iteration (ms): %.1f |", ms);
  if (run.log_throughput) {
    out += F(" throughput per GPU (TFLOP/s/GPU): %.1f |",
             tflops_per_step / (ms / 1000.0) / 1e12 / setup_.par.world);
  }
  out += F(" learning rate: %.6E |", curve_.LearningRateAt(iteration));
  out += F(" global batch size: %5lld |", LL(setup_.par.global_batch));
  out += F(" lm loss: %.6E |", loss_sum / n);
  if (aux_sum > 0) out += F(" load_balancing_loss: %.6E |", aux_sum / n);
  out += F(" loss scale: %.1f |", setup_.feat.fp16 ? 65536.0 : 1.0);
  out += F(" grad norm: %.3f |", curve_.GradNormAt(iteration));
  out += F(" number of skipped iterations: %3d |", 0);
  out += F(" number of nan iterations: %3d |", 0);
  Line(out);
}

void LogWriter::MemoryReport(int64_t iteration) {
  const Parallelism& p = setup_.par;
  MemoryEstimate total = EstimateMemory(setup_, cluster_);
  Line(F("Theoretical memory footprints: weight and optimizer=%.2f MB, "
          "activation=%.2f MB, total=%.2f MB",
                   total.worst.weight_optimizer_b / kMiB, total.worst.activation_b / kMiB,
                   (total.worst.weight_optimizer_b + total.worst.activation_b) / kMiB));
  std::vector<StageMemory> stages;
  for (int s = 0; s < p.pp; ++s) stages.push_back(EstimateStageMemory(setup_, cluster_, s));
  // Ranks with data-parallel rank 0, in rank order (tp-cp-ep-dp-pp).
  for (int stage = 0; stage < p.pp; ++stage) {
    for (int c = 0; c < p.cp; ++c) {
      for (int t = 0; t < p.tp; ++t) {
        int rank = t + p.tp * (c + p.cp * (p.dp * stage));
        const StageMemory& m = stages[stage];
        Line(F("[Rank %d] (after %lld iterations) memory (MB) | allocated: %.2f | "
               "max allocated: %.2f | reserved: %.2f | max reserved: %.2f",
               rank, LL(iteration), m.weight_optimizer_b / kMiB, m.max_allocated_b / kMiB,
                         m.max_reserved_b / kMiB, m.max_reserved_b / kMiB));
      }
    }
  }
}

void LogWriter::Iterations(int64_t first, const std::vector<double>& seconds, double tflops_per_step) {
  for (size_t k = 0; k < seconds.size(); ++k) {
    int64_t it = first + static_cast<int64_t>(k);
    Advance(seconds[k]);
    interval_s_ += seconds[k];
    loss_sum_ += curve_.LossAt(it);
    aux_sum_ += curve_.LoadBalancingLossAt(it);
    ++interval_iters_;
    bool first_iteration = it == 1;
    if (!first_iteration && it % setup_.run.log_interval != 0) continue;
    IterationLine(it, interval_s_, interval_iters_, loss_sum_, aux_sum_, tflops_per_step);
    if (first_iteration) {
      MemoryReport(it);
      continue;  // training_log keeps the accumulators after iteration 1
    }
    if (!memory_reported_again_) {
      MemoryReport(it);
      memory_reported_again_ = true;
    }
    interval_s_ = loss_sum_ = aux_sum_ = 0;
    interval_iters_ = 0;
  }
}

void LogWriter::Finish(bool exit_interval_reached) {
  if (exit_interval_reached) {
    Line(F("[exiting program at iteration %lld] datetime: %s ", LL(setup_.run.IterationsToRun()),
           FormatTimestamp(now_).c_str()));
  } else {
    DatetimeMarker("after training is done");
  }
}

void LogWriter::Traceback(const std::vector<std::pair<std::string, std::string>>& frames) {
  Line("Traceback (most recent call last):");
  int line = 300;
  for (const auto& [where, code] : frames) {
    auto colon = where.find(':');
    Line(F("  File \"%s/%s\", line %d, in %s", kRoot, where.substr(0, colon).c_str(), line,
           where.substr(colon + 1).c_str()));
    Line("    " + code);
    line += 137;
  }
}

void LogWriter::ChildFailed(int exit_code, const std::string& signal) {
  Line("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ");
  Line("============================================================");
  Line("pretrain_gpt.py FAILED");
  Line("------------------------------------------------------------");
  Line("Root Cause (first observed failure):");
  Line("[0]:");
  Line("  time      : " + FormatTimestamp(now_).substr(0, 19) + "_");
  Line("  rank      : 0 (local_rank: 0)");
  Line(F("  exitcode  : %d (pid: 4242)", exit_code));
  Line("  error_file: <N/A>");
  Line(signal.empty() ? "  traceback : To enable traceback see: "
                        "https://pytorch.org/docs/stable/elastic/errors.html"
                      : "  traceback : " + signal);
  Line("============================================================");
}

void LogWriter::ArgumentError(const sim::ArgumentError& error) {
  if (error.raised_at == RaisedAt::kArgparse) {
    Line("usage: pretrain_gpt.py [-h] [--num-layers NUM_LAYERS] [--hidden-size HIDDEN_SIZE] ...");
    Line(error.message);
    ChildFailed(2, "");
    return;
  }
  std::vector<std::pair<std::string, std::string>> frames = {
      {"pretrain_gpt.py:<module>", "pretrain("},
      {"megatron/training/training.py:pretrain", "initialize_megatron("},
      {"megatron/training/initialize.py:initialize_megatron", "validate_args(args, args_defaults)"}};
  if (error.raised_at == RaisedAt::kFirstIteration) {
    frames = {{"pretrain_gpt.py:<module>", "pretrain("},
              {"megatron/training/training.py:pretrain", "iteration, num_floating_point_operations_so_far = train("},
              {"megatron/training/training.py:train_step", "losses_reduced = forward_backward_func("}};
  }
  // The failing frame shows the statement that raised, as Python prints it.
  std::string statement = error.exception == "AssertionError" ? "assert condition, msg"
                                                              : "raise " + error.exception + "(msg)";
  frames.push_back({error.file + ":" + error.function, statement});
  Traceback(frames);
  Line(error.exception + ": " + error.message);
  ChildFailed(1, "");
}

void LogWriter::OutOfMemory(const MemoryEstimate& memory) {
  Traceback({{"pretrain_gpt.py:<module>", "pretrain("},
             {"megatron/training/training.py:pretrain", "iteration, num_floating_point_operations_so_far = train("},
             {"megatron/training/training.py:train_step", "losses_reduced = forward_backward_func("},
             {"megatron/core/pipeline_parallel/schedules.py:forward_step", "output_tensor, loss_func = forward_step_func(data_iterator, model)"}});
  const StageMemory& w = memory.worst;
  double capacity = memory.capacity_b;
  double in_use = std::min(capacity - 0.3 * kGiB, w.max_reserved_b + w.non_pytorch_b - w.largest_allocation_b);
  double reserved = std::max(0.0, in_use - w.non_pytorch_b);
  double allocated = reserved / (1 + kFragmentation);
  double free_b = std::max(0.0, capacity - in_use);
  Line(F("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 "
          "has a total capacity of %.2f GiB of which %.2f MiB is free. Including "
          "non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated "
          "memory %.2f GiB is allocated by PyTorch, and %.2f MiB is reserved by PyTorch "
                   "but unallocated. If reserved but unallocated memory is large try setting "
                   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
                   "documentation for Memory Management  "
                   "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
                   w.largest_allocation_b / kGiB, capacity / kGiB, free_b / kMiB, in_use / kGiB,
                   allocated / kGiB, (reserved - allocated) / kMiB));
  ChildFailed(1, "");
}

void LogWriter::NcclTimeout(int64_t iteration, double timeout_s) {
  int64_t seq = iteration * 40 + 17;
  int64_t numel = setup_.model.hidden * setup_.model.seq_length * setup_.par.micro_batch;
  int64_t ms = static_cast<int64_t>(timeout_s * 1000);
  Advance(timeout_s);
  std::string prefix = "[rank0]:[E" + FormatTimestamp(now_).substr(5, 5) + " ProcessGroupNCCL.cpp:632] [Rank 0] ";
  prefix.erase(std::remove(prefix.begin(), prefix.end(), '-'), prefix.end());
  Line(prefix + F("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%lld, "
                  "OpType=ALLREDUCE, NumelIn=%lld, NumelOut=%lld, Timeout(ms)=%lld) ran for %lld "
                  "milliseconds before timing out.",
                  LL(seq), LL(numel), LL(numel), LL(ms), LL(ms + 81)));
  Line(F("[rank0]:[E ProcessGroupNCCL.cpp:2271] [PG ID 2 PG GUID 3 Rank 0] failure "
         "detected by watchdog at work sequence id: %lld PG status: last enqueued work: "
         "%lld, last completed work: %lld", LL(seq), LL(seq + 1), LL(seq - 1)));
  Line("[rank0]:[E ProcessGroupNCCL.cpp:670] Some NCCL operations have failed or timed out. Due to "
       "the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
       "corrupted/incomplete data.");
  Line("[rank0]:[E ProcessGroupNCCL.cpp:676] To avoid data inconsistency, we are taking the entire "
       "process down.");
  Line("terminate called after throwing an instance of 'c10::DistBackendError'");
  ChildFailed(-6, "Signal 6 (SIGABRT) received by PID 4242");
}

void LogWriter::NodeFailure() {
  Line("srun: error: Node failure on node-0003");
  Line("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.");
}

}  // namespace attune::sim
