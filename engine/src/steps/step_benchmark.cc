// `benchmark`: the baseline, measured `repeats` times, so that the leader's noise is known before
// any candidate is compared with it.
#include "campaign/events.h"
#include "steps/job_driver.h"
#include "steps/steps.h"

namespace attune {

Status RunBenchmarkStep(RunContext& ctx, const StepDecl& step) {
  const int repeats = step.with.value("repeats", 3);
  const JobAsk ask{events::kBaselineId, events::kPurposeBaseline, 0, step.id};
  while (true) {
    if (ctx.StopRequested()) return StopStatus();
    const int done = static_cast<int>(ctx.state.JobsOf(ask.candidate, ask.purpose).size());
    if (done >= repeats) {
      const bool measured = !ctx.state.MeasurementsOf(events::kBaselineId).empty();
      return FinishStep(ctx, step, measured ? "done" : "baseline_failed");
    }
    if (!ctx.state.ledger.Fits(ctx.state.ReservationFor(ctx.state.baseline))) {
      return FinishStep(ctx, step, "budget_exhausted");
    }
    ATTUNE_ASSIGN_OR_RETURN(std::string name, RequestJob(ctx, ask));
    ATTUNE_RETURN_IF_ERROR(DriveJob(ctx, name));
  }
}

}  // namespace attune
