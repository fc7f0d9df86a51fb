// Copyright attune authors.
//
// One simulated job from submit to end, in virtual time: start-up, Megatron's argument checks,
// the memory check, the iterations with seeded noise, and injected failures. A pure function of
// (job spec, cluster, seed, start time), so a replayed campaign sees the same run.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_JOB_SIM_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_JOB_SIM_H_

#include <string>

#include "attune/launcher.h"
#include "hardware.h"
#include "perf_model.h"

namespace attune::sim {

struct JobOutcome {
  JobState state = JobState::kSucceeded;
  double duration_s = 0;   // start to end
  int exit_code = 0;
  std::string reason;      // for a non-success, in the launcher's words
  std::string log;         // the whole stdout/stderr text
  double step_time_s = 0;  // the model's noiseless step time (0 when none ran)
};

// Which injected failure (if any) a job name draws: a pure function of seed and name.
enum class InjectedFailure { kNone, kNcclTimeout, kHang, kNodeFailure };
InjectedFailure DrawFailure(const FailureRates& rates, uint64_t seed, const std::string& job_name);

// Simulates the job: the stack (spec.stack) maps the recipe to its parallel plan, the models here
// run it, and the stack renders the log. Fails (a Status, nothing ran) only when the job cannot be
// placed on the cluster or its stack cannot map or render it; the framework's own refusals are
// outcomes with their log text.
Result<JobOutcome> SimulateJob(const JobSpec& spec, const ClusterSpec& cluster, double start_s,
                               const ModelFactors& factors = {});

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_JOB_SIM_H_
