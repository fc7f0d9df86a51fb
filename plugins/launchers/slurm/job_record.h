// Copyright attune authors.
//
// JobRecord: what the Slurm launcher remembers about one job name, in one JSON file per name
// (<state_dir>/<name>.json), so that a fresh process finds the job again from its name alone.
//
// Written twice around sbatch: an intent record (no job id) just before, the job id just after.
// Every write is atomic (temporary file, fsync, rename, fsync of the directory): a crash leaves
// either the old record or the new one, never a torn file.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_JOB_RECORD_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_JOB_RECORD_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "attune/launcher.h"
#include "attune/status.h"

namespace attune::slurm {

struct JobRecord {
  std::string name;
  std::string job_id;  // empty: sbatch was about to run (intent only)
  std::string job_dir;
  std::string log_path;
  std::string marker_path;  // the job's start/exit marker (see job_script.h)
  std::string script_path;
  int devices = 0;         // what the engine asked for; charged when Slurm shows no GPUs
  double intent_time = 0;  // Unix time the intent was written
  // The last terminal status seen from Slurm: answers Poll after Slurm forgets the job.
  std::optional<JobStatus> final_status;
};

// <state_dir>/<name>.json
std::string RecordPath(const std::string& state_dir, const std::string& name);

// nullopt when no record exists; kCorruption when the file exists but cannot be read.
Result<std::optional<JobRecord>> LoadRecord(const std::string& state_dir, const std::string& name);

// Atomically replaces the record (creates state_dir when missing).
Status SaveRecord(const std::string& state_dir, const JobRecord& record);

// What the job's marker file says, if it exists: "<id> start <t>" and, once the batch script
// finished, "<id> exit <rc> <t>".
struct Marker {
  std::string job_id;
  std::optional<double> start_time;
  std::optional<int> exit_code;
  std::optional<double> end_time;
};
std::optional<Marker> ReadMarker(const std::string& path);

// Writes `text` to `path` atomically (used for records and job scripts).
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_JOB_RECORD_H_
