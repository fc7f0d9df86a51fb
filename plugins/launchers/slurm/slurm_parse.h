// Copyright attune authors.
//
// Pure functions that read what Slurm's commands print (scontrol show job -o, sacct -P, sbatch
// --parsable) and turn it into attune's terms: JobState, start/end times, exit codes, devices.
// No process is run here, so every mapping is unit-testable from text.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_PARSE_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_PARSE_H_

#include <map>
#include <optional>
#include <string>

#include "attune/launcher.h"
#include "attune/status.h"

namespace attune::slurm {

// One job as Slurm describes it.
struct SlurmJob {
  std::string job_id;
  std::string name;
  std::string state;   // Slurm's word: PENDING, RUNNING, COMPLETED, TIMEOUT, ...
  std::string reason;  // Slurm's Reason= (None, Resources, TimeLimit, NonZeroExitCode, ...)
  std::optional<int> exit_code;
  int exit_signal = 0;
  std::optional<double> start_time;  // Unix seconds; only when it really started
  std::optional<double> end_time;    // Unix seconds; only when it really ended
  int restarts = 0;
  int num_nodes = 0;
  int gpus = 0;         // gres/gpu in the allocation's TRES (0 on CPU clusters)
  std::string std_out;  // the output file
  std::string comment;  // --comment (empty when Slurm does not keep it)
};

// "JobId=1 JobName=x JobState=RUNNING ..." (scontrol show job -o) into key → value. A word
// without '=' belongs to the previous value (values such as Reason may contain spaces).
std::map<std::string, std::string> ParseKeyValues(const std::string& line);

// The first job of `scontrol show job -o` output.
Result<SlurmJob> ParseScontrolJob(const std::string& text);

// One line of
// `sacct -X -n -P -o JobID,JobName,State,ExitCode,Start,End,AllocTRES,NNodes,Reason,Comment`.
Result<SlurmJob> ParseSacctLine(const std::string& line);

// "2026-12-02T12:33:41" (local time, as Slurm prints it) into Unix seconds; nullopt for
// "Unknown", "None", "N/A" or anything unparsable.
std::optional<double> ParseSlurmTime(const std::string& text);

// Slurm's job state word (possibly with a suffix: "CANCELLED by 0", "RUNNING+") into attune's.
JobState MapSlurmState(const std::string& slurm_state);

// True for a state whose StartTime is a real start (not a forecast).
bool HasStarted(const std::string& slurm_state);

// The job id in `sbatch --parsable` output ("123" or "123;cluster").
Result<std::string> ParseSbatchJobId(const std::string& out);

// The attune status of a Slurm job: times only once really started/ended, devices from the
// allocation's GPUs (else `fallback_devices`), and a reason in Slurm's words for anything that
// is not a plain success.
JobStatus ToJobStatus(const SlurmJob& job, const std::string& name, int fallback_devices);

// True when a Slurm command's stderr says the controller could not be reached.
bool SaysControllerUnreachable(const std::string& err);

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_PARSE_H_
