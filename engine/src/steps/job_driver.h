// Copyright attune authors.
//
// Jobs, from intent to result: TryRequestJob records JobRequested (the reservation, only when the
// ledger has room) before anything touches the launcher; DriveJob takes a requested job to its
// JobFinished, whatever happened in between (never submitted, submitted, running, finished while
// the engine was down). Because a job's name is deterministic and Submit is idempotent by name,
// driving a job twice never runs it twice.
#ifndef ATTUNE_ENGINE_STEPS_JOB_DRIVER_H_
#define ATTUNE_ENGINE_STEPS_JOB_DRIVER_H_

#include <optional>
#include <string>

#include "attune/launcher.h"
#include "attune/metrics.h"
#include "attune/status.h"
#include "steps/run_context.h"

namespace attune {

struct JobAsk {
  std::string candidate;  // "baseline" or a candidate id
  JobPurpose purpose = JobPurpose::kCandidate;
  int pair = 0;           // verify pair index (1-based), else 0
  std::string step;
};

// "<campaign>-<candidate>-<attempt>" (tuning runs) or "<campaign>-verify-<candidate>-p<pair>-<attempt>".
std::string JobName(const std::string& campaign_id, const JobAsk& ask, int attempt);

// What a job of `recipe` occupies: Stack::Devices, on NodesFor (api/placement.h) of the campaign's
// cluster. Reservations and launcher requests use these, never the topology alone.
int JobDevices(const RunContext& ctx, const Recipe& recipe);
int JobNodes(const RunContext& ctx, const Recipe& recipe);
// The reservation a job of `recipe` would make now.
double JobReservation(const RunContext& ctx, const Recipe& recipe);
// Where a profiled job `name` writes its traces: <campaign>/jobs/<name>/traces, absolute (the job
// may run in another working directory). Recorded in JobRequested.trace_dir.
std::string TraceDirOf(const RunContext& ctx, const std::string& name);
// True when the ledger has room for a job of `recipe` now (what TryRequestJob would decide).
bool CanAfford(const RunContext& ctx, const Recipe& recipe);

// The one place a reservation is made: records JobRequested for `ask` with its reservation when
// that fits what the ledger has left, and returns the job's name; returns nullopt, recording
// nothing, when it does not fit (the caller records why it stops). An ask for an unknown recipe
// is an Internal error.
Result<std::optional<std::string>> TryRequestJob(RunContext& ctx, const JobAsk& ask);

// Submits (when needed), polls and records the result of a requested job. Returns StopStatus()
// when a stop was requested while the job ran (with --on-stop cancel the job is cancelled and its
// JobFinished recorded first). Takes the name by value: a name read from ctx.state would dangle
// after the first event this records (Append replaces the state).
Status DriveJob(RunContext& ctx, std::string name);

// Drives every requested job that has no JobFinished yet (reconciliation after a restart).
Status DriveInFlightJobs(RunContext& ctx);

// The failure implied by a launcher state when the log shows none (time limit, node failure...).
Failure FailureFromState(const JobStatus& status);

}  // namespace attune

#endif  // ATTUNE_ENGINE_STEPS_JOB_DRIVER_H_
