// Copyright attune authors.
//
// SlurmLauncher: runs attune's benchmark jobs as Slurm batch jobs.
//
// Finding a job by name (the crash-safety contract of attune/launcher.h):
//  1. the submission record <state_dir>/<name>.json (written atomically around sbatch),
//  2. else the controller: `squeue --name=<name> --states=all --user=<uid>`, which knows queued,
//     running and recently finished jobs (until MinJobAge),
//  3. else accounting (`sacct --name`), when the cluster has it,
//  4. else the job's marker file, which the batch script writes when it starts and ends.
// A name found nowhere is kUnknown. Jobs carry `--comment=attune:<hash of state_dir>`, and only
// jobs with this launcher's comment are adopted: another campaign's job that happens to have the
// same name (campaign ids repeat across directories) is never taken for ours.
// Submit consults all of these first and submits nothing when
// Slurm cannot be asked (kUnavailable): it never submits blind. docs/slurm.md describes the one
// remaining window (a crash right after sbatch, followed by the job leaving Slurm's memory
// without ever starting, on a cluster without accounting).
//
// Charging: start/end times are Slurm's StartTime/EndTime once the job really started and ended
// (pending time is never charged); devices are the allocation's GPUs (TRES gres/gpu), or the
// JobSpec's devices on clusters without GPUs.
//
// Thread-safety: one engine thread at a time (attune/launcher.h).
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_LAUNCHER_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_LAUNCHER_H_

#include <memory>
#include <optional>
#include <string>

#include "attune/launcher.h"
#include "job_record.h"
#include "slurm_client.h"
#include "slurm_options.h"

namespace attune::slurm {

class SlurmLauncher : public Launcher {
 public:
  // `options` come from the workflow; `state_dir` is where records go (already resolved).
  SlurmLauncher(SlurmOptions options, std::string state_dir);

  std::string Name() const override { return "slurm"; }
  ClusterInfo Cluster() const override;
  Result<JobStatus> Submit(const JobSpec& spec) override;
  Result<JobStatus> Poll(const std::string& name) override;
  Result<std::string> ReadLog(const std::string& name) override;
  Status Cancel(const std::string& name) override;
  double PollIntervalSeconds() const override { return options_.poll_interval_s; }
  double Now() const override;

  const std::string& state_dir() const { return state_dir_; }

 private:
  // The record for `name`, adopting a job Slurm knows by that name when there is no record (or
  // only an intent). nullopt: no trace of the name anywhere.
  Result<std::optional<JobRecord>> Locate(const std::string& name);
  Result<std::optional<JobRecord>> AdoptFromSlurm(const std::string& name,
                                                  std::optional<JobRecord> record);
  // The status of a located job, caching a terminal one in the record.
  Result<JobStatus> StatusOf(JobRecord* record);
  Result<JobStatus> StatusAfterPurge(const JobRecord& record);
  // Writes the script and the intent record, runs sbatch, records the id.
  Result<JobRecord> SubmitNew(const JobSpec& spec, const SlurmOptions& options);

  SlurmOptions options_;
  std::string state_dir_;
  std::string owner_;  // "attune:<12 hex of SHA-256(state_dir)>", the jobs' --comment
  SlurmClient client_;
  ClusterInfo cluster_;
};

// The plugin factory: options from context.config; records in options.state_dir, else
// <campaign_dir>/slurm, else $TMPDIR/attune-slurm-<uid>.
Result<std::unique_ptr<Plugin>> CreateSlurmLauncher(const PluginContext& context);

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_LAUNCHER_H_
