// Copyright attune authors.
//
// slime's Ray driver log for a simulated job (dry_run.h): the formats of the slime_* fixtures and
// reference §6.4. Actor lines carry Ray's "(Class pid=N)" prefix and slime's
// "[date time] file.py:line - " logger prefix; SGLang's own lines carry its "[date time TPn]".
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "attune/support/printf.h"
#include "attune/support/torch_text.h"
#include "dry_run.h"

namespace attune::slime {
namespace {

using support::StrFormat;

constexpr const char* kTrainer = "(MegatronTrainRayActor pid=2811)";
constexpr const char* kManager = "(RolloutManager pid=2377)";
constexpr const char* kEngine = "(SGLangEngine pid=2519)";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

class LogWriter {
 public:
  explicit LogWriter(double now) : now_(now) {}
  void At(double t) { now_ = t; }
  void Advance(double s) { now_ += s; }
  double now() const { return now_; }
  // "(Actor pid=N) [date time] file.py:line - message"
  void Actor(const char* actor, const char* where, const std::string& message) {
    text_ += std::string(actor) + " [" + Stamp() + "] " + where + " - " + message + "\n";
  }
  // "(SGLangEngine pid=N) [date time TP0] message"
  void Engine(const std::string& message) { text_ += std::string(kEngine) + " [" + Stamp() + " TP0] " + message + "\n"; }
  void Raw(const std::string& line) { text_ += line + "\n"; }
  std::string Take() { return std::move(text_); }

 private:
  std::string Stamp() const { return sim::VirtualTimestamp(now_).substr(0, 19); }
  double now_;
  std::string text_;
};

// A Python dict literal as slime prints it: {'key': value, ...} in the given order.
std::string PyDict(const std::vector<std::pair<std::string, double>>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += "'" + items[i].first + "': " + StrFormat("%.10g", items[i].second);
  }
  return out + "}";
}

void JobBanner(LogWriter& w, bool ok) {
  w.Raw("");
  w.Raw("------------------------------------------");
  w.Raw(std::string("Job 'raysubmit_sim0001' ") + (ok ? "succeeded" : "failed"));
  w.Raw("------------------------------------------");
}

void RenderRefusal(LogWriter& w, const sim::PlanRefusal& refusal) {
  if (refusal.raised_at == sim::RaisedAt::kArgparse) {
    std::string message = refusal.message;
    if (size_t at = message.find("pretrain_gpt.py: "); at != std::string::npos) {
      message.replace(at, 17, "train.py: ");
    }
    w.Raw("usage: train.py [-h] [--num-layers NUM_LAYERS] ...");
    w.Raw(message);
  } else {
    w.Raw("Traceback (most recent call last):");
    w.Raw("  File \"/root/slime/train.py\", line 110, in <module>");
    w.Raw("    train(args)");
    w.Raw("  File \"/root/slime/" + refusal.file + "\", line 1, in " + refusal.function);
    w.Raw(refusal.exception + ": " + refusal.message);
  }
  JobBanner(w, false);
}

// SGLang cannot fit its weights and a KV cache in its memory share: the engine's scheduler
// raises, slime's engine wrapper sees the server die, and the RolloutManager's creation fails.
void RenderEngineOutOfMemory(LogWriter& w, const sim::SimulatedRun& run) {
  const sim::RolloutPlan& r = run.plan.rollout;
  w.Engine(StrFormat("Load weight end. dtype=torch.bfloat16, avail mem=%.2f GB, mem usage=%.2f GB.",
                     std::max(0.0, run.gpu_memory_gib - run.rollout.weights_per_gpu_b / kGiB),
                     run.rollout.weights_per_gpu_b / kGiB));
  w.Engine("Scheduler hit an exception: Traceback (most recent call last):");
  w.Raw(std::string(kEngine) + "   File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line 1523, in init_memory_pool");
  w.Raw(std::string(kEngine) + StrFormat(" RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                                         "Current value: mem_fraction_static=%g", r.mem_fraction));
  w.Raw(std::string(kEngine) + " Exception: Server process terminated unexpectedly.");
  w.Raw("ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation task, "
        "ray::RolloutManager.__init__() (pid=2377, ip=10.0.0.1)");
  JobBanner(w, false);
}

void RenderTrainingOutOfMemory(LogWriter& w, const sim::SimulatedRun& run) {
  w.Raw(std::string(kTrainer) + " [rank0]: " + support::TorchOutOfMemoryLine(run.memory));
  w.Raw("ray.exceptions.RayTaskError(OutOfMemoryError): ray::MegatronTrainRayActor.train() (pid=2811, "
        "ip=10.0.0.1, repr=<slime.backends.megatron_utils.actor.MegatronTrainRayActor object at 0x7f0000000000>)");
  JobBanner(w, false);
}

void RenderStartup(LogWriter& w, const sim::SimulatedRun& run) {
  const sim::ParallelPlan& plan = run.plan;
  const sim::Parallelism& p = plan.par;
  w.Raw(StrFormat("using world size: %d, data-parallel size: %d, context-parallel size: %d, tensor-model-parallel "
                  "size: %d, pipeline-model-parallel size: %d",
                  p.world, p.dp, p.cp, p.tp, p.pp));
  if (!plan.rollout.enabled()) return;
  const sim::SimRollout& e = run.rollout;
  w.Actor(kManager, "rollout.py:96", StrFormat("Launching %d SGLang engines (%d GPUs each)%s", e.engines,
                                               plan.rollout.gpus_per_engine,
                                               plan.rollout.colocated ? ", colocated with the actors" : ""));
  if (!e.fits) return;
  w.Engine(StrFormat("Load weight end. dtype=torch.bfloat16, mem usage=%.2f GB.", e.weights_per_gpu_b / kGiB));
  w.Engine(StrFormat("KV Cache is allocated. #tokens: %lld", static_cast<long long>(e.kv_cache_tokens)));
  w.Engine(StrFormat("max_total_num_tokens=%lld, max_running_requests=%lld", static_cast<long long>(e.kv_cache_tokens),
                     static_cast<long long>(e.concurrency)));
}

// The rollout's generation seconds as the RolloutManager times them: what the trainer waited for,
// or, when generation overlaps training (train_async.py), the decode time it hid.
double GenerationSeconds(const sim::SimulatedRun& run, const sim::SimIteration& it) {
  const sim::RolloutPlan& r = run.plan.rollout;
  if (!r.overlapped || run.rollout.decode_tokens_per_s <= 0) return it.rollout_s;
  double decode = run.rollout.generated_tokens / std::max(1, run.rollout.engines) / run.rollout.decode_tokens_per_s;
  return std::max(it.rollout_s, decode);
}

// slime's timers of the plan's log-probability passes, in the order they run.
std::vector<std::string> LogProbTimers(const sim::RolloutPlan& r) {
  std::vector<std::string> out;
  if (r.reference_logprobs) out.push_back("ref_log_probs");
  if (r.actor_logprobs) out.push_back("log_probs");
  return out;
}

struct RolloutRecord {
  int64_t id = 0;
  double update_prev_s = -1;  // the previous rollout's weight update (< 0: none yet)
};

void RenderRollout(LogWriter& w, const sim::SimulatedRun& run, const sim::SimIteration& it, const RolloutRecord& rec) {
  const sim::ParallelPlan& plan = run.plan;
  const sim::RolloutPlan& r = plan.rollout;
  const double samples = static_cast<double>(r.Samples());
  const double seq = static_cast<double>(r.prompt_tokens + r.response_tokens);
  const double generation = GenerationSeconds(run, it);
  w.Advance(it.rollout_s);
  w.Actor(kManager, "rollout.py:251", StrFormat("Final collected %lld samples from rollout to train",
                                               static_cast<long long>(samples)));
  w.Actor(kManager, "rollout.py:720",
          StrFormat("perf %lld: ", static_cast<long long>(rec.id)) +
              PyDict({{"rollout/response_len/mean", static_cast<double>(r.response_tokens)},
                      {"rollout/response_len/max", static_cast<double>(r.max_response_tokens)},
                      {"perf/rollout_time", generation},
                      {"perf/tokens_per_gpu_per_sec", run.rollout.generated_tokens / generation / std::max(1, r.gpus)}}));
  // A constant schedule stays at --lr (the simulated curve decays over the run's own length).
  const double lr = plan.run.lr_decay_style == "constant" ? plan.run.lr : it.learning_rate;
  // The log-probability passes run first, inside the trainer's `train` timer, each as long as
  // the others: the reference model's, then the actor's (slime's timer names).
  const std::vector<std::string> passes = LogProbTimers(r);
  const double per_pass = passes.empty() ? 0.0 : it.log_probs_s / static_cast<double>(passes.size());
  for (const std::string& timer : passes) {
    w.Advance(per_pass);
    w.Actor(kTrainer, "timer.py:32", StrFormat("Timer %s end (elapsed: %.1fs)", timer.c_str(), per_pass));
  }
  const int64_t steps = std::max<int64_t>(1, r.train_steps);
  for (int64_t k = 0; k < steps; ++k) {
    w.Advance(it.train_s / static_cast<double>(steps));
    int64_t n = rec.id * steps + k;
    double loss = it.loss * (1.0 + 0.002 * static_cast<double>(k));
    w.Actor(kTrainer, "model.py:649",
            StrFormat("step %lld: ", static_cast<long long>(n)) +
                PyDict({{"train/loss", loss}, {"train/pg_loss", loss}, {"train/entropy_loss", 0.35},
                        {"train/pg_clipfrac", 0.0}, {"train/ppo_kl", 0.0}, {"train/grad_norm", it.grad_norm},
                        {"train/lr-pg_0", lr}, {"train/global_batch_size", static_cast<double>(plan.par.global_batch)},
                        {"train/step", static_cast<double>(n)}}));
  }
  w.Actor(kTrainer, "timer.py:32", StrFormat("Timer actor_train end (elapsed: %.1fs)", it.train_s));
  const double trained_tokens = samples * seq;
  const double fwd = SlimeForwardFlops(plan.model, samples, seq);
  const double train = it.log_probs_s + it.train_s;  // slime's `train` timer
  std::vector<std::pair<std::string, double>> perf = {{"perf/train_wait_time", it.rollout_s},
                                                      {"perf/train_time", train}};
  // slime reports a forward-only pass's TFLOP/s with one forward's FLOPs.
  for (const std::string& timer : passes) {
    perf.emplace_back("perf/" + timer + "_time", per_pass);
    perf.emplace_back("perf/" + timer + "_tflops", fwd / std::max(1, plan.par.world) / per_pass / 1e12);
  }
  perf.insert(perf.end(), {{"perf/actor_train_time", it.train_s},
                           {"perf/actor_train_tflops", 3.0 * fwd / std::max(1, plan.par.world) / it.train_s / 1e12},
                           {"perf/actor_train_tok_per_s", trained_tokens / it.train_s},
                           {"perf/step_time", it.rollout_s + train},
                           {"perf/wait_time_ratio", it.rollout_s / (it.rollout_s + train)}});
  // update_weights runs after this report: its timer reaches the next rollout's.
  if (rec.update_prev_s >= 0) perf.insert(perf.begin(), std::make_pair(std::string("perf/update_weights_time"), rec.update_prev_s));
  w.Actor(kTrainer, "train_metric_utils.py:57", StrFormat("perf %lld: ", static_cast<long long>(rec.id)) + PyDict(perf));
  w.Advance(it.weight_update_s);
  w.Actor(kTrainer, "timer.py:32", StrFormat("Timer update_weights end (elapsed: %.1fs)", it.weight_update_s));
}

void RenderEnd(LogWriter& w, const sim::SimulatedRun& run) {
  switch (run.end) {
    case sim::SimEnd::kFinished:
    case sim::SimEnd::kExitInterval:
      JobBanner(w, true);
      break;
    case sim::SimEnd::kNcclTimeout: {
      double timeout = std::max(0.0, run.failure_s - w.now());
      w.At(run.failure_s);
      int64_t numel = run.plan.model.hidden * run.plan.model.seq_length;
      for (const auto& l : support::NcclWatchdogLines(run.failure_s, static_cast<int64_t>(run.iterations.size()) * 40 + 17,
                                                      numel, timeout)) {
        w.Raw(std::string(kTrainer) + " " + l);
      }
      w.Raw("ray.exceptions.RayTaskError(DistBackendError): ray::MegatronTrainRayActor.train() (pid=2811, ip=10.0.0.1)");
      JobBanner(w, false);
      break;
    }
    case sim::SimEnd::kNodeFailure:
      w.At(run.failure_s);
      w.Raw("The node with node id 5c1e0000 and address 10.0.0.2 and node name node-0002 has been marked dead "
            "because the detector has missed too many heartbeats from it.");
      break;
    default:
      break;  // a hang or the time limit: the log just stops
  }
}

}  // namespace

std::string RenderSlimeLog(const Recipe& recipe, const sim::SimulatedRun& run) {
  (void)recipe;
  LogWriter w(run.start_s);
  w.Raw("Job submission server address: http://127.0.0.1:8265");
  if (run.end == sim::SimEnd::kRefused && run.plan.refusal) {
    w.At(run.failure_s);
    RenderRefusal(w, *run.plan.refusal);
    return w.Take();
  }
  RenderStartup(w, run);
  if (run.end == sim::SimEnd::kOutOfMemory) {
    w.At(run.failure_s);
    if (!run.rollout.fits) RenderEngineOutOfMemory(w, run);
    else RenderTrainingOutOfMemory(w, run);
    return w.Take();
  }
  w.At(run.start_s + run.startup_s);
  double previous_update = -1;
  for (size_t k = 0; k < run.iterations.size(); ++k) {
    RenderRollout(w, run, run.iterations[k], {static_cast<int64_t>(k), previous_update});
    previous_update = run.iterations[k].weight_update_s;
  }
  RenderEnd(w, run);
  return w.Take();
}

}  // namespace attune::slime
