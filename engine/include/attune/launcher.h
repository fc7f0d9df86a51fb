// Copyright attune authors.
//
// Launcher: runs benchmark jobs somewhere (a local process, Slurm, KubeRay, a simulated cluster).
//
// The engine's crash safety rests on three properties every launcher must have:
//  1. Jobs are named deterministically by the engine ("<campaign>-<candidate>-<attempt>") and a
//     launcher can find a job again by that name alone, from a fresh process, after a crash.
//  2. Submit is idempotent by name: submitting a name that already exists (queued, running or
//     finished) returns that job's status and starts nothing.
//  3. Poll answers for any name: a name it has never seen is JobState::kUnknown ("never
//     submitted"), which lets the engine submit it now.
//
// A launcher may queue a job for hours (Slurm), keep logs remote (Kubernetes) or run in virtual
// time (sim). Times are seconds on the launcher's clock (Unix time for real launchers, virtual
// seconds for sim); the engine charges GPU-hours from them.
//
// Thread-safety: called from one engine thread at a time.
#ifndef ATTUNE_LAUNCHER_H_
#define ATTUNE_LAUNCHER_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/cluster.h"
#include "attune/plugin.h"
#include "attune/recipe.h"
#include "attune/stack.h"
#include "attune/status.h"

namespace attune {

struct JobSpec {
  std::string name;         // deterministic, unique in the campaign: [A-Za-z0-9._-]+
  std::string key;          // the name without the campaign id ("baseline-1", "verify-c003-p1-1"):
                            // the same in every campaign; what a simulator seeds its draws from
  std::string job_dir;      // a directory the engine created for this job (logs, records)
  std::string log_path;     // where the job's combined stdout/stderr should end up
  Recipe recipe;            // what is being run (the sim launcher models it)
  LaunchSpec launch;        // the stack's rendered launch
  int nodes = 1;
  int devices = 1;          // total devices (GPUs; CPU cores for the local launcher)
  double time_limit_s = 0;  // hard limit; the launcher stops the job past it
  nlohmann::json options = nlohmann::json::object();  // the workflow's launcher options
  // The campaign's stack (not owned; outlives the call). A launcher that simulates jobs asks it
  // for the recipe's parallel plan and renders the log through it (Stack::SimulationPlan,
  // Stack::RenderSimulatedLog); real launchers ignore it. May be null (launcher probes, tests).
  const Stack* stack = nullptr;
};

enum class JobState {
  kUnknown,    // never submitted (or forgotten by the launcher): safe to submit
  kPending,    // queued, not running, not charged
  kRunning,
  kSucceeded,  // exited 0
  kFailed,     // exited non-zero
  kCancelled,
  kTimedOut,
  kNodeFailure,
  kPreempted,
  kOutOfMemory,  // killed by the launcher/host for memory (Slurm OUT_OF_MEMORY)
};
const char* JobStateName(JobState state);  // "pending", "succeeded", ...
std::optional<JobState> JobStateFromName(const std::string& name);
bool IsTerminal(JobState state);

struct JobStatus {
  std::string name;
  std::string launcher_job_id;  // Slurm job id, pid, ...; informative
  JobState state = JobState::kUnknown;
  std::optional<double> start_time;  // when it started running (launcher clock, seconds)
  std::optional<double> end_time;    // when it stopped running
  std::optional<int> exit_code;
  std::string reason;      // the launcher's words for a non-success ("sbatch: invalid partition")
  int devices = 0;         // devices charged while running
  int requeues = 0;        // times the launcher restarted it (preemption)

  // devices × (end − start) in hours; 0 until both times are known.
  double DeviceHours() const;
};

nlohmann::json JobStatusToJson(const JobStatus& s);
Result<JobStatus> JobStatusFromJson(const nlohmann::json& j);

class Launcher : public Plugin {
 public:
  // What the jobs run on.
  virtual ClusterInfo Cluster() const = 0;

  // Starts (or queues) the job. Idempotent by spec.name: see the file comment. Fails with a
  // Status (kInvalidArgument for a refused job, kUnavailable for an unreachable cluster) when the
  // job could not be submitted; such a job was not started.
  virtual Result<JobStatus> Submit(const JobSpec& spec) = 0;

  // The job's current status; state kUnknown when the name was never submitted.
  virtual Result<JobStatus> Poll(const std::string& name) = 0;

  // The job's log so far (the whole text). Empty when none exists yet.
  virtual Result<std::string> ReadLog(const std::string& name) = 0;

  // Stops the job (no-op for a finished one).
  virtual Status Cancel(const std::string& name) = 0;

  // How long the engine should wait between polls of a running job, in real seconds (0 for a
  // launcher in virtual time, whose jobs finish as soon as they are polled).
  virtual double PollIntervalSeconds() const = 0;

  // The launcher's clock (seconds). Virtual for sim; Unix time otherwise.
  virtual double Now() const = 0;

  // Brings the files the finished job `name` wrote below `remote_dir` (a path the job was given,
  // as its own processes see it) to `local_dir` on the engine's machine, and returns the paths of
  // the files it copied there. The engine calls it once per job, after the job finished and
  // before it reads the files, and records what it read from them; it never asks again for a job
  // whose record exists (a replay reads the record). A crash between the copy and the record
  // repeats the call, so copying into `local_dir` again must be harmless.
  //   - An empty answer copies nothing: the job's folder is shared, and the files (if any) are
  //     read where the job wrote them. This default suits launchers whose jobs write the engine's
  //     file system: local processes, and clusters with a file system shared with this machine.
  //   - kFailedPrecondition: the files cannot reach this machine as the launcher is set up; the
  //     message says what the user must change. kUnavailable: the cluster cannot be reached now
  //     (the engine stops and asks again when the campaign resumes).
  virtual Result<std::vector<std::string>> FetchFiles(const std::string& name, const std::string& remote_dir,
                                                      const std::string& local_dir) {
    (void)name;
    (void)remote_dir;
    (void)local_dir;
    return std::vector<std::string>{};
  }
};

}  // namespace attune

#endif  // ATTUNE_LAUNCHER_H_
