// Copyright attune authors.
//
// SlurmClient: the Slurm commands the launcher needs (sbatch, squeue, scontrol, scancel, sacct,
// sinfo), run through RunProcess (no shell) with the configured timeout, bin_dir and SLURM_CONF.
//
// Failures are classified for the engine: an unreachable controller (or a command that did not
// answer in time) is kUnavailable, a refusal by Slurm is kInvalidArgument quoting Slurm's words.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_CLIENT_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_CLIENT_H_

#include <optional>
#include <string>
#include <vector>

#include "attune/status.h"
#include "process.h"
#include "slurm_options.h"
#include "slurm_parse.h"

namespace attune::slurm {

struct PartitionFacts {
  int nodes = 0;
  int cpus_per_node = 0;
  int gpus_per_node = 0;
};

class SlurmClient {
 public:
  explicit SlurmClient(SlurmOptions options);

  // Submits the script; returns the job id.
  Result<std::string> Sbatch(const std::string& script_path, const std::string& workdir) const;

  // Ids of this user's jobs named `name` whose comment is `comment` that the controller still
  // knows (any state), oldest first.
  Result<std::vector<std::string>> FindByName(const std::string& name,
                                              const std::string& comment) const;

  // The job, or nullopt when the controller no longer knows the id (purged after MinJobAge).
  Result<std::optional<SlurmJob>> ShowJob(const std::string& job_id) const;

  // Whether sacct can answer (AccountingStorageType is not accounting_storage/none). Cached.
  Result<bool> HasAccounting() const;

  // sacct's view of this user's newest job named `name` (allocation line only) whose comment is
  // `comment` or was not stored (AccountingStoreFlags without job_comment), if any.
  Result<std::optional<SlurmJob>> SacctByName(const std::string& name,
                                              const std::string& comment) const;

  Status Cancel(const std::string& job_id) const;

  Result<PartitionFacts> Partition(const std::string& partition) const;

 private:
  Result<ProcessResult> Run(const std::string& program, std::vector<std::string> args) const;
  // kUnavailable or kInvalidArgument from a failed command's output.
  Status Failure(const std::string& command, const ProcessResult& r) const;

  SlurmOptions options_;
  std::string user_;
  mutable std::optional<bool> has_accounting_;
};

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_CLIENT_H_
