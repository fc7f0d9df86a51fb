#include "job_sim.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attune/hash.h"
#include "log_writer.h"
#include "megatron_rules.h"
#include "memory_model.h"
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

JobOutcome Failed(JobState state, int exit_code, std::string reason, const LogWriter& log, double start) {
  JobOutcome o;
  o.state = state;
  o.exit_code = exit_code;
  o.reason = std::move(reason);
  o.log = log.text();
  o.duration_s = log.now() - start;
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
  if (!spec.recipe.stack.empty() && spec.recipe.stack != "megatron") {
    // The model reads the network's shape from Megatron-LM's flags. Other stacks name a
    // checkpoint instead (AutoModel: a Hugging Face model id), so there is nothing to model.
    return Status::InvalidArgument(
        "sim launcher: job '" + spec.name + "' is a '" + spec.recipe.stack +
        "' recipe; the simulated cluster models Megatron-LM recipes only (the model shape comes "
        "from Megatron's flags). Run it on the local, slurm or another real launcher");
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
  ATTUNE_ASSIGN_OR_RETURN(TrainingSetup setup, SetupFromRecipe(WithLaunchEnv(spec), world));
  LogWriter log(setup, cluster, start_s);
  double setup_s = cluster.startup_s;
  if (auto error = CheckMegatronArguments(setup, cluster)) {
    if (error->raised_at == RaisedAt::kArgparse) {
      log.Advance(setup_s * 0.1);
      log.ArgumentError(*error);
      return Failed(JobState::kFailed, 2, "exited with code 2 (argument error)", log, start_s);
    }
    log.WorldSizeLine();
    if (error->raised_at == RaisedAt::kFirstIteration) log.Startup(setup_s);
    else log.Advance(setup_s * 0.2);
    log.ArgumentError(*error);
    return Failed(JobState::kFailed, 1, "exited with code 1", log, start_s);
  }
  log.WorldSizeLine();
  log.Startup(setup_s);
  MemoryEstimate memory = EstimateMemory(setup, cluster);
  if (!memory.fits) {
    log.Advance(5.0);
    log.OutOfMemory(memory);
    return Failed(JobState::kFailed, 1, "exited with code 1", log, start_s);
  }
  StepBreakdown step = EstimateStep(setup, cluster, factors);
  int64_t count = setup.run.IterationsToRun();
  // Draws depend on the seed and the job's place in its campaign, never on the campaign's id (the
  // same seed gives the same campaign in any directory).
  const std::string& key = spec.key.empty() ? spec.name : spec.key;
  std::vector<double> times = IterationTimes(setup, step.step_s, cluster, key, count);
  InjectedFailure failure = DrawFailure(cluster.failures, cluster.seed, key);
  Normal where(StreamSeed(cluster.seed, key, "where"));
  int64_t stop_at = failure == InjectedFailure::kNone ? count
                                                      : 1 + static_cast<int64_t>(where.Uniform() * count);
  stop_at = std::min(stop_at, count);

  // The launcher's time limit cuts the run wherever it falls.
  double limit = spec.time_limit_s > 0 ? spec.time_limit_s : 1e18;
  int64_t ran = 0;
  double elapsed = log.now() - start_s;
  while (ran < stop_at && elapsed + times[ran] <= limit) elapsed += times[ran++];
  log.Iterations(1, std::vector<double>(times.begin(), times.begin() + ran), step.model_flops);
  JobOutcome out;
  out.step_time_s = step.step_s;
  if (ran < stop_at || failure == InjectedFailure::kHang) {
    JobOutcome o = Failed(JobState::kTimedOut, -1, "reached its time limit", log, start_s);
    o.duration_s = std::isfinite(limit) && limit < 1e17 ? limit : 2 * 3600.0;
    o.step_time_s = step.step_s;
    return o;
  }
  if (failure == InjectedFailure::kNcclTimeout) {
    log.NcclTimeout(stop_at, setup.run.distributed_timeout_min * 60.0);
    out = Failed(JobState::kFailed, 1, "exited with code 1 (child killed by SIGABRT)", log, start_s);
  } else if (failure == InjectedFailure::kNodeFailure) {
    log.Advance(30.0);
    log.NodeFailure();
    out = Failed(JobState::kNodeFailure, -1, "node failure (simulated)", log, start_s);
  } else {
    log.Finish(setup.run.exit_interval > 0 && setup.run.exit_interval <= count);
    out = Failed(JobState::kSucceeded, 0, "", log, start_s);
  }
  out.step_time_s = step.step_s;
  return out;
}

}  // namespace attune::sim
