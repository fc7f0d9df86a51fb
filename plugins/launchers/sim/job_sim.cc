#include "job_sim.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attune/hash.h"
#include "loss_curve.h"
#include "memory_model.h"
#include "rollout_model.h"
#include "setup.h"

namespace attune::sim {
namespace {

// Seconds the first iteration spends on compilation, allocator growth and NCCL warm-up, on top
// of a regular step.
constexpr double kFirstIterationExtraS = 4.0;
// CUDA-graph capture makes each warm-up iteration this much slower than a regular one.
constexpr double kGraphWarmupFactor = 1.5;

// A deterministic stream of standard normal numbers (splitmix64 + Box–Muller).
class Normal {
 public:
  explicit Normal(uint64_t seed) : state_(seed) {}
  double Next() {
    double u1 = Uniform(), u2 = Uniform();
    return std::sqrt(-2.0 * std::log(std::max(u1, 1e-12))) * std::cos(6.283185307179586 * u2);
  }
  double Uniform() { return static_cast<double>(Mix() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t Mix() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

uint64_t StreamSeed(uint64_t seed, const std::string& name, const char* stream) {
  return StableHash64(std::to_string(seed) + "/" + name + "/" + stream);
}

Recipe WithLaunchEnv(const JobSpec& spec) {
  Recipe r = spec.recipe;
  for (const auto& kv : spec.launch.env) {
    bool present = std::any_of(r.env.begin(), r.env.end(), [&](const auto& e) { return e.first == kv.first; });
    if (!present) r.env.push_back(kv);
  }
  return r;
}

int WorldOf(const JobSpec& spec) {
  if (spec.devices > 0) return spec.devices;
  return std::max(1, spec.recipe.topology.WorldSize());
}

std::vector<double> IterationTimes(const TrainingSetup& s, double step, const ClusterSpec& c,
                                   const std::string& name, int64_t count) {
  Normal noise(StreamSeed(c.seed, name, "noise"));
  double job_factor = std::max(0.5, 1.0 + 0.5 * c.noise_cv * noise.Next());  // this job's nodes
  std::vector<double> out;
  for (int64_t i = 1; i <= count; ++i) {
    double t = step * job_factor * std::max(0.2, 1.0 + c.noise_cv * noise.Next());
    if (s.feat.cuda_graphs && i <= s.feat.cuda_graph_warmup_steps) t *= kGraphWarmupFactor;
    if (i == 1) t += step + kFirstIterationExtraS;
    out.push_back(t);
  }
  return out;
}

// Iterations of a plan with a rollout: generation, training and weight update, each with the
// job's and the iteration's noise; the first iteration also warms up (compilation, allocator,
// NCCL) as a plain training run's does.
std::vector<RolloutIterationTimes> RolloutTimes(const TrainingSetup& s, const RolloutEstimate& estimate,
                                                double step, double logprob_pass, const ClusterSpec& c,
                                                const std::string& name, int64_t count) {
  Normal noise(StreamSeed(c.seed, name, "noise"));
  double job_factor = std::max(0.5, 1.0 + 0.5 * c.noise_cv * noise.Next());
  std::vector<RolloutIterationTimes> out;
  for (int64_t i = 1; i <= count; ++i) {
    RolloutIterationTimes t = IterationSplit(s.rollout, estimate, step, logprob_pass, i == 1);
    double f = job_factor * std::max(0.2, 1.0 + c.noise_cv * noise.Next());
    t.rollout_s *= f;
    t.log_probs_s *= f;
    t.train_s *= f;
    t.weight_update_s *= f;
    if (i == 1) t.train_s += step + kFirstIterationExtraS;
    out.push_back(t);
  }
  return out;
}

// The workflow's RL workload lengths (`with.rollout`) replace the stack's defaults; the training
// sequences are the prompt and its response.
void ApplyRolloutWorkload(const ClusterSpec& cluster, TrainingSetup* setup) {
  RolloutPlan& r = setup->rollout;
  if (!r.enabled()) return;
  if (cluster.rollout_prompt_tokens > 0) r.prompt_tokens = cluster.rollout_prompt_tokens;
  if (cluster.rollout_response_tokens > 0) {
    r.response_tokens = r.max_response_tokens > 0
                            ? std::min(cluster.rollout_response_tokens, r.max_response_tokens)
                            : cluster.rollout_response_tokens;
  }
  if (cluster.rollout_prompt_tokens > 0 || cluster.rollout_response_tokens > 0) {
    setup->model.seq_length = r.prompt_tokens + r.response_tokens;
  }
}

// The memory model's answer as the stack's renderer sees it, with the state of the device at the
// failing allocation when it does not fit.
SimMemory MemoryFacts(const TrainingSetup& setup, const ClusterSpec& cluster) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  MemoryEstimate estimate = EstimateMemory(setup, cluster);
  auto facts = [](const StageMemory& m) {
    return SimStageMemory{m.stage, m.weight_optimizer_b, m.activation_b, m.max_allocated_b, m.max_reserved_b};
  };
  SimMemory out;
  for (int s = 0; s < setup.par.pp; ++s) out.stages.push_back(facts(EstimateStageMemory(setup, cluster, s)));
  const StageMemory& w = estimate.worst;
  out.worst = facts(w);
  out.capacity_b = estimate.capacity_b;
  out.fits = estimate.fits;
  if (!estimate.fits) {
    out.tried_to_allocate_b = w.largest_allocation_b;
    out.in_use_b = std::min(estimate.capacity_b - 0.3 * kGiB,
                            w.max_reserved_b + w.non_pytorch_b - w.largest_allocation_b);
    double reserved = std::max(0.0, out.in_use_b - w.non_pytorch_b);
    out.allocated_b = reserved / (1 + kFragmentation);
    out.reserved_unallocated_b = reserved - out.allocated_b;
    out.free_b = std::max(0.0, estimate.capacity_b - out.in_use_b);
  }
  return out;
}

// The run so far, for the stack to render, and the job's outcome in the launcher's words.
Result<JobOutcome> Finish(const JobSpec& spec, const Recipe& recipe, SimulatedRun run, JobState state,
                          int exit_code, std::string reason, double step_s) {
  JobOutcome o;
  o.state = state;
  o.exit_code = exit_code;
  o.reason = std::move(reason);
  o.duration_s = run.end_s - run.start_s;
  o.step_time_s = step_s;
  Result<std::string> log = spec.stack->RenderSimulatedLog(recipe, run);
  if (!log.ok()) {
    return Status(log.status().code(), "sim launcher: the " + spec.stack->Name() +
                                           " stack cannot render job '" + spec.name +
                                           "': " + log.status().message());
  }
  o.log = *std::move(log);
  return o;
}

}  // namespace

InjectedFailure DrawFailure(const FailureRates& rates, uint64_t seed, const std::string& job_name) {
  Normal rng(StreamSeed(seed, job_name, "failure"));
  double u = rng.Uniform();
  if (u < rates.nccl_timeout) return InjectedFailure::kNcclTimeout;
  u -= rates.nccl_timeout;
  if (u < rates.hang) return InjectedFailure::kHang;
  u -= rates.hang;
  if (u < rates.node_failure) return InjectedFailure::kNodeFailure;
  return InjectedFailure::kNone;
}

Result<JobOutcome> SimulateJob(const JobSpec& spec, const ClusterSpec& cluster, double start_s,
                               const ModelFactors& factors) {
  if (spec.stack == nullptr) {
    return Status::InvalidArgument("sim launcher: job '" + spec.name +
                                   "' came without its stack; a simulated job is modelled from "
                                   "the stack's parallel plan (JobSpec::stack)");
  }
  int world = WorldOf(spec);
  if (world > cluster.WorldSize()) {
    return Status::InvalidArgument("sim launcher: job '" + spec.name + "' needs " +
                                   std::to_string(world) + " GPUs but the cluster has " +
                                   std::to_string(cluster.WorldSize()) + " (" +
                                   std::to_string(cluster.nodes) + " nodes x " +
                                   std::to_string(cluster.gpus_per_node) +
                                   "); raise with.nodes or shrink the recipe's topology");
  }
  const Recipe recipe = WithLaunchEnv(spec);
  Result<ParallelPlan> plan = spec.stack->SimulationPlan(recipe, ToClusterInfo(cluster), world);
  if (!plan.ok()) {
    return Status(plan.status().code(),
                  "sim launcher: job '" + spec.name + "': " + plan.status().message() +
                      (plan.status().code() == StatusCode::kUnimplemented
                           ? " (the simulated cluster runs recipes of stacks that map them to a "
                             "parallel plan: docs/sim.md, \"Dry runs for every stack\")"
                           : ""));
  }
  TrainingSetup setup = *plan;
  ApplyRolloutWorkload(cluster, &setup);
  SimulatedRun run;
  run.plan = setup;
  run.gpu = cluster.gpu.name;
  run.gpu_memory_gib = cluster.gpu.memory_gib;
  run.nodes = cluster.nodes;
  run.gpus_per_node = cluster.gpus_per_node;
  run.start_s = start_s;
  const double setup_s = cluster.startup_s;
  if (setup.refusal) {
    // Argparse refuses at once, validation a little later, the first step after start-up.
    double at = setup.refusal->raised_at == RaisedAt::kArgparse  ? setup_s * 0.1
                : setup.refusal->raised_at == RaisedAt::kStartup ? setup_s * 0.2
                                                                 : setup_s;
    run.startup_s = at;
    run.end = SimEnd::kRefused;
    run.failure_s = run.end_s = start_s + at;
    bool argparse = setup.refusal->raised_at == RaisedAt::kArgparse;
    return Finish(spec, recipe, std::move(run), JobState::kFailed, argparse ? 2 : 1,
                  argparse ? "exited with code 2 (argument error)" : "exited with code 1", 0);
  }
  ParamCounts params = CountParams(setup);
  run.params_first_stage_per_gpu = params.first_stage_per_gpu;
  run.params_last_stage_per_gpu = params.last_stage_per_gpu;
  run.params_expert_per_gpu = params.expert_per_gpu;
  run.memory = MemoryFacts(setup, cluster);
  run.startup_s = setup_s;
  if (!run.memory.fits) {
    run.end = SimEnd::kOutOfMemory;
    run.failure_s = run.end_s = start_s + setup_s + 5.0;
    return Finish(spec, recipe, std::move(run), JobState::kFailed, 1, "exited with code 1", 0);
  }
  StepBreakdown step = EstimateStep(setup, cluster, factors);
  run.model_flops_per_iteration = step.model_flops;
  int64_t count = setup.run.IterationsToRun();
  // Draws depend on the seed and the job's place in its campaign, never on the campaign's id (the
  // same seed gives the same campaign in any directory).
  const std::string& key = spec.key.empty() ? spec.name : spec.key;
  std::vector<double> times;
  std::vector<RolloutIterationTimes> phases;
  double noiseless_s = step.step_s;
  if (setup.rollout.enabled()) {
    // The engines start before the first training step; one that cannot hold its weights and a
    // KV cache refuses to start, as SGLang does.
    MemoryEstimate training = EstimateMemory(setup, cluster);
    RolloutEstimate estimate = EstimateRollout(setup, cluster, training.worst.non_pytorch_b,
                                               training.worst.weight_optimizer_b);
    run.rollout = estimate.engine;
    if (!run.rollout.fits) {
      run.end = SimEnd::kOutOfMemory;
      run.failure_s = run.end_s = start_s + setup_s * 0.6;
      return Finish(spec, recipe, std::move(run), JobState::kFailed, 1, "exited with code 1", 0);
    }
    const double logprob_pass = LogProbPassSeconds(step);
    phases = RolloutTimes(setup, estimate, step.step_s, logprob_pass, cluster, key, count);
    for (const auto& p : phases) times.push_back(p.Total());
    noiseless_s = IterationSplit(setup.rollout, estimate, step.step_s, logprob_pass, false).Total();
  } else {
    times = IterationTimes(setup, step.step_s, cluster, key, count);
  }
  InjectedFailure failure = DrawFailure(cluster.failures, cluster.seed, key);
  Normal where(StreamSeed(cluster.seed, key, "where"));
  int64_t stop_at = failure == InjectedFailure::kNone ? count
                                                      : 1 + static_cast<int64_t>(where.Uniform() * count);
  stop_at = std::min(stop_at, count);

  // The launcher's time limit cuts the run wherever it falls.
  double limit = spec.time_limit_s > 0 ? spec.time_limit_s : 1e18;
  int64_t ran = 0;
  double elapsed = setup_s;
  while (ran < stop_at && elapsed + times[ran] <= limit) elapsed += times[ran++];
  LossCurve curve(setup);
  for (int64_t i = 0; i < ran; ++i) {
    int64_t it = i + 1;
    SimIteration record;
    record.seconds = times[i];
    record.loss = curve.LossAt(it);
    record.aux_loss = curve.LoadBalancingLossAt(it);
    record.grad_norm = curve.GradNormAt(it);
    record.learning_rate = curve.LearningRateAt(it);
    if (!phases.empty()) {
      record.rollout_s = phases[i].rollout_s;
      record.train_s = phases[i].train_s;
      record.log_probs_s = phases[i].log_probs_s;
      record.weight_update_s = phases[i].weight_update_s;
    }
    run.iterations.push_back(record);
  }
  const double last = start_s + elapsed;
  if (ran < stop_at || failure == InjectedFailure::kHang) {
    run.end = ran < stop_at ? SimEnd::kTimeLimit : SimEnd::kHang;
    run.end_s = start_s + (std::isfinite(limit) && limit < 1e17 ? limit : 2 * 3600.0);
    return Finish(spec, recipe, std::move(run), JobState::kTimedOut, -1, "reached its time limit",
                  noiseless_s);
  }
  if (failure == InjectedFailure::kNcclTimeout) {
    run.end = SimEnd::kNcclTimeout;
    run.failure_s = run.end_s = last + setup.run.distributed_timeout_min * 60.0;
    return Finish(spec, recipe, std::move(run), JobState::kFailed, 1,
                  "exited with code 1 (child killed by SIGABRT)", noiseless_s);
  }
  if (failure == InjectedFailure::kNodeFailure) {
    run.end = SimEnd::kNodeFailure;
    run.failure_s = run.end_s = last + 30.0;
    return Finish(spec, recipe, std::move(run), JobState::kNodeFailure, -1,
                  "node failure (simulated)", noiseless_s);
  }
  run.end = setup.run.exit_interval > 0 && setup.run.exit_interval <= count ? SimEnd::kExitInterval
                                                                             : SimEnd::kFinished;
  run.end_s = last;
  return Finish(spec, recipe, std::move(run), JobState::kSucceeded, 0, "", noiseless_s);
}

}  // namespace attune::sim
