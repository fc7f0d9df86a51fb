#include "sim_log.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <cstdio>

#include "attune/support/printf.h"
#include "attune/support/torch_text.h"
#include "sim_mapping.h"

namespace attune::megatron {
namespace {

using sim::Parallelism;
using sim::RaisedAt;
using sim::RunControl;
using sim::SimEnd;
using sim::SimStageMemory;
using sim::SimulatedRun;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr const char* kRoot = "/workspace/megatron-lm";


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

// Accumulates the log of one job as its virtual clock advances.
class LogWriter {
 public:
  LogWriter(const SimSetup& setup, const SimulatedRun& run) : setup_(setup), run_(run), now_(run.start_s) {}

  double now() const { return now_; }
  void Advance(double seconds) { now_ += seconds; }
  void AdvanceTo(double at) { now_ = std::max(now_, at); }
  const std::string& text() const { return text_; }

  void WorldSizeLine();
  void Startup(double setup_s);
  void Iterations();
  void Finish(bool exit_interval_reached);
  void ArgumentError(const sim::PlanRefusal& error);
  void OutOfMemory();
  void NcclTimeout(int64_t iteration, double timeout_s);
  void NodeFailure();

 private:
  void Line(const std::string& line);
  void DatetimeMarker(const std::string& marker);
  void MemoryReport(int64_t iteration);
  void IterationLine(int64_t iteration, double interval_s, int64_t interval_iters,
                     double loss_sum, double aux_sum, const sim::SimIteration& last);
  void Traceback(const std::vector<std::pair<std::string, std::string>>& frames);
  void ChildFailed(int exit_code, const std::string& signal);

  const SimSetup& setup_;
  const SimulatedRun& run_;
  double now_;
  std::string text_;
  // The log-interval accumulators (not reset after iteration 1, as in training_log).
  double interval_s_ = 0, loss_sum_ = 0, aux_sum_ = 0;
  int64_t interval_iters_ = 0;
  bool memory_reported_again_ = false;
};

}  // namespace

std::string FormatTimestamp(double virtual_s) { return sim::VirtualTimestamp(virtual_s); }

void LogWriter::Line(const std::string& line) {
  text_ += line;
  text_ += '\n';
}

void LogWriter::DatetimeMarker(const std::string& marker) {
  Line("[" + marker + "] datetime: " + FormatTimestamp(now_) + " ");
}

void LogWriter::WorldSizeLine() {
  const Parallelism& p = setup_.par;
  Line(support::StrFormat("using world size: %d, data-parallel size: %d, context-parallel size: %d, "
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
  Line(support::StrFormat("> initialized tensor model parallel with size %d", p.tp));
  Line(support::StrFormat("> initialized pipeline model parallel with size %d", p.pp));
  Line(support::StrFormat("> setting random seeds to %lld ...", LL(setup_.run.seed)));
  int64_t dummy = setup_.model.vocab - setup_.model.vocab_unpadded;
  Line(support::StrFormat(" > padded vocab (size: %lld) with %lld dummy tokens (new size: %lld)",
          LL(setup_.model.vocab_unpadded), LL(std::max<int64_t>(0, dummy)), LL(setup_.model.vocab)));
  Advance(setup_s * 0.4);
  DatetimeMarker("after megatron is initialized");
  for (int stage = 0; stage < p.pp; ++stage) {
    double params = stage == 0 ? run_.params_first_stage_per_gpu : run_.params_last_stage_per_gpu;
    for (int t = 0; t < p.tp; ++t) {
      Line(support::StrFormat(" > number of parameters on (tensor, gtp_weight_remat, pipeline) model "
             "parallel rank (%d, 0, %d): %lld",
             t, stage, LL(static_cast<int64_t>(params + run_.params_expert_per_gpu))));
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
                              double loss_sum, double aux_sum, const sim::SimIteration& last) {
  const RunControl& run = setup_.run;
  double n = static_cast<double>(std::max<int64_t>(1, interval_iters));
  double ms = interval_s * 1000.0 / n;
  std::string out = " [" + FormatTimestamp(now_) + "]";
  out += support::StrFormat(" iteration %8lld/%8lld |", LL(iteration),
           LL(run.train_iters > 0 ? run.train_iters : run.IterationsToRun()));
  out += support::StrFormat(" consumed samples: %12lld |", LL(iteration * setup_.par.global_batch));
  out += support::StrFormat(" elapsed time per iteration (ms): %.1f |", ms);
  if (run.log_throughput) {
    out += support::StrFormat(" throughput per GPU (TFLOP/s/GPU): %.1f |",
             run_.model_flops_per_iteration / (ms / 1000.0) / 1e12 / setup_.par.world);
  }
  out += support::StrFormat(" learning rate: %.6E |", last.learning_rate);
  out += support::StrFormat(" global batch size: %5lld |", LL(setup_.par.global_batch));
  out += support::StrFormat(" lm loss: %.6E |", loss_sum / n);
  if (aux_sum > 0) out += support::StrFormat(" load_balancing_loss: %.6E |", aux_sum / n);
  // Megatron logs each MTP depth's loss after the MoE losses; predicting a token further ahead is
  // harder, so the simulated depth-i loss sits 5%·i above the main one.
  for (int64_t depth = 1; depth <= setup_.model.mtp_layers; ++depth) {
    out += support::StrFormat(" mtp_%lld loss: %.6E |", LL(depth),
             loss_sum / n * (1.0 + 0.05 * static_cast<double>(depth)));
  }
  out += support::StrFormat(" loss scale: %.1f |", setup_.feat.fp16 ? 65536.0 : 1.0);
  out += support::StrFormat(" grad norm: %.3f |", last.grad_norm);
  out += support::StrFormat(" number of skipped iterations: %3d |", 0);
  out += support::StrFormat(" number of nan iterations: %3d |", 0);
  Line(out);
}

void LogWriter::MemoryReport(int64_t iteration) {
  const Parallelism& p = setup_.par;
  const SimStageMemory& worst = run_.memory.worst;
  Line(support::StrFormat("Theoretical memory footprints: weight and optimizer=%.2f MB, "
          "activation=%.2f MB, total=%.2f MB",
                   worst.weight_optimizer_b / kMiB, worst.activation_b / kMiB,
                   (worst.weight_optimizer_b + worst.activation_b) / kMiB));
  const std::vector<SimStageMemory>& stages = run_.memory.stages;
  if (stages.empty()) return;
  // Ranks with data-parallel rank 0, in rank order (tp-cp-ep-dp-pp).
  for (int stage = 0; stage < p.pp; ++stage) {
    for (int c = 0; c < p.cp; ++c) {
      for (int t = 0; t < p.tp; ++t) {
        int rank = t + p.tp * (c + p.cp * (p.dp * stage));
        const SimStageMemory& m = stages[std::min<size_t>(stage, stages.size() - 1)];
        Line(support::StrFormat("[Rank %d] (after %lld iterations) memory (MB) | allocated: %.2f | "
               "max allocated: %.2f | reserved: %.2f | max reserved: %.2f",
               rank, LL(iteration), m.weight_optimizer_b / kMiB, m.max_allocated_b / kMiB,
                         m.max_reserved_b / kMiB, m.max_reserved_b / kMiB));
      }
    }
  }
}

void LogWriter::Iterations() {
  for (size_t k = 0; k < run_.iterations.size(); ++k) {
    const sim::SimIteration& iteration = run_.iterations[k];
    int64_t it = 1 + static_cast<int64_t>(k);
    Advance(iteration.seconds);
    interval_s_ += iteration.seconds;
    loss_sum_ += iteration.loss;
    aux_sum_ += iteration.aux_loss;
    ++interval_iters_;
    bool first_iteration = it == 1;
    if (!first_iteration && it % setup_.run.log_interval != 0) continue;
    IterationLine(it, interval_s_, interval_iters_, loss_sum_, aux_sum_, iteration);
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
    Line(support::StrFormat("[exiting program at iteration %lld] datetime: %s ", LL(setup_.run.IterationsToRun()),
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
    Line(support::StrFormat("  File \"%s/%s\", line %d, in %s", kRoot, where.substr(0, colon).c_str(), line,
           where.substr(colon + 1).c_str()));
    Line("    " + code);
    line += 137;
  }
}

void LogWriter::ChildFailed(int exit_code, const std::string& signal) {
  for (const auto& line : support::TorchrunChildFailedLines(now_, "pretrain_gpt.py", exit_code, signal)) Line(line);
}

void LogWriter::ArgumentError(const sim::PlanRefusal& error) {
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

void LogWriter::OutOfMemory() {
  Traceback({{"pretrain_gpt.py:<module>", "pretrain("},
             {"megatron/training/training.py:pretrain", "iteration, num_floating_point_operations_so_far = train("},
             {"megatron/training/training.py:train_step", "losses_reduced = forward_backward_func("},
             {"megatron/core/pipeline_parallel/schedules.py:forward_step", "output_tensor, loss_func = forward_step_func(data_iterator, model)"}});
  Line(support::TorchOutOfMemoryLine(run_.memory));
  ChildFailed(1, "");
}

void LogWriter::NcclTimeout(int64_t iteration, double timeout_s) {
  int64_t seq = iteration * 40 + 17;
  int64_t numel = setup_.model.hidden * setup_.model.seq_length * setup_.par.micro_batch;
  Advance(timeout_s);
  for (const auto& line : support::NcclWatchdogLines(now_, seq, numel, timeout_s)) Line(line);
  ChildFailed(-6, "Signal 6 (SIGABRT) received by PID 4242");
}

void LogWriter::NodeFailure() {
  Line("srun: error: Node failure on node-0003");
  Line("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.");
}

std::string RenderMegatronLog(const Recipe& recipe, const SimulatedRun& run) {
  SimSetup setup;
  static_cast<sim::ParallelPlan&>(setup) = run.plan;
  for (const auto& arg : recipe.args) {
    std::string joined;
    for (const auto& v : arg.values) joined += (joined.empty() ? "" : " ") + v;
    setup.flags[arg.flag] = joined;
  }
  LogWriter log(setup, run);
  const double startup_end = run.start_s + run.startup_s;
  if (run.end == SimEnd::kRefused && run.plan.refusal) {
    const sim::PlanRefusal& refusal = *run.plan.refusal;
    if (refusal.raised_at != RaisedAt::kArgparse) log.WorldSizeLine();
    if (refusal.raised_at == RaisedAt::kFirstIteration) log.Startup(run.startup_s);
    log.AdvanceTo(run.failure_s);
    log.ArgumentError(refusal);
    return log.text();
  }
  log.WorldSizeLine();
  log.Startup(run.startup_s);
  log.AdvanceTo(startup_end);
  if (run.end == SimEnd::kOutOfMemory) {
    log.AdvanceTo(run.failure_s);
    log.OutOfMemory();
    return log.text();
  }
  log.Iterations();
  switch (run.end) {
    case SimEnd::kFinished: log.Finish(false); break;
    case SimEnd::kExitInterval: log.Finish(true); break;
    case SimEnd::kNcclTimeout:
      log.NcclTimeout(static_cast<int64_t>(run.iterations.size()), std::max(0.0, run.failure_s - log.now()));
      break;
    case SimEnd::kNodeFailure:
      log.AdvanceTo(run.failure_s);
      log.NodeFailure();
      break;
    default: break;  // a hang or the time limit: the log just stops
  }
  return log.text();
}

}  // namespace attune::megatron
