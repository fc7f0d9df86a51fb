// Copyright attune authors.
//
// Named crash points for the kill -9 suite (tools/crashtest). In production they cost one branch
// on a cached flag. When the environment variable ATTUNE_CRASH_AT is "NAME" or "NAME:N", the N-th
// (default first) time the process reaches CrashPoint("NAME") it kills itself with SIGKILL — no
// destructors, no flushes, exactly like a power cut of the process.
//
// Points used by the engine (docs/crash-safety.md lists them with what each one proves):
//   log.append.before   about to write a batch
//   log.append.after    the batch is durable, not yet acknowledged to the caller
//   job.requested       JobRequested is durable, the launcher was not called yet
//   job.submitted       the launcher accepted the job, JobSubmitted not yet written
//   job.ended           the launcher reports the job finished, JobFinished not yet written
//   report.writing      half of the report files are written
//   job.cancel_requested  JobCancelRequested is durable, the launcher not yet asked to cancel
//   job.cancel_confirmed  the cancelled job ended, JobFinished not yet written
//   job.stop_requested    JobStopRequested (the adaptive stop) is durable, the launcher not yet asked
//   campaign.pausing    the stop reached its safe point, CampaignPaused not yet written
#ifndef ATTUNE_ENGINE_BASE_CRASH_POINT_H_
#define ATTUNE_ENGINE_BASE_CRASH_POINT_H_

#include <string_view>

namespace attune {

void CrashPoint(std::string_view name);

}  // namespace attune

#endif  // ATTUNE_ENGINE_BASE_CRASH_POINT_H_
