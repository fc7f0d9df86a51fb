// `benchmark`: the baseline, measured `repeats` times, so that the leader's noise is known before
// any candidate is compared with it.
#include "campaign/events.h"
#include "steps/job_driver.h"
#include "steps/step_kinds.h"
#include "steps/steps.h"

namespace attune {
namespace {

// A failure that running the same recipe again would repeat: the recipe's arguments or
// configuration are refused, it cannot start, or it does not fit in memory. Infrastructure
// failures (a lost node, a launcher hiccup) are retried.
bool Deterministic(const JobRecord& job) {
  if (!job.Counts() || job.measurement || !job.failure || job.FailedForInfrastructure()) return false;
  switch (job.failure->kind) {
    case FailureKind::kConfigError:
    case FailureKind::kLaunchError:
    case FailureKind::kOom:
    case FailureKind::kHostOom:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status RunBenchmarkStep(RunContext& ctx, const StepDecl& step) {
  ATTUNE_ASSIGN_OR_RETURN(const int repeats, StepIntOption(step, "repeats"));
  const JobAsk ask{events::kBaselineId, JobPurpose::kBaseline, 0, step.id};
  while (true) {
    if (ctx.StopRequested()) return StopStatus();
    const auto jobs = ctx.state.JobsOf(ask.candidate, ask.purpose);
    const int done = static_cast<int>(jobs.size());
    const bool measured_once = !ctx.state.MeasurementsOf(events::kBaselineId).empty();
    if (!measured_once && !jobs.empty() && Deterministic(*jobs.back())) {
      // The same error would come back on every retry, each one spending budget.
      const Failure& f = *jobs.back()->failure;
      ctx.Say("the baseline failed with " + std::string(FailureKindName(f.kind)) +
              ", which a retry would repeat: " + f.evidence + (f.hint.empty() ? "" : "; " + f.hint));
      return FinishStep(ctx, step, "baseline_failed");
    }
    if (done >= repeats) {
      const bool measured = !ctx.state.MeasurementsOf(events::kBaselineId).empty();
      return FinishStep(ctx, step, measured ? "done" : "baseline_failed");
    }
    ATTUNE_ASSIGN_OR_RETURN(std::optional<std::string> name, TryRequestJob(ctx, ask));
    if (!name) return FinishStep(ctx, step, "budget_exhausted");
    ATTUNE_RETURN_IF_ERROR(DriveJob(ctx, *name));
  }
}

}  // namespace attune
