// Copyright attune authors.
//
// The batch script the Slurm launcher submits for one job: #SBATCH lines from the JobSpec and
// the launcher options, rendezvous variables from the allocation, markers for crash recovery, and
// `srun` of the stack's rendered launch. Every user-provided value is either checked to be a
// single safe word (in #SBATCH lines, which sbatch parses itself) or shell-quoted.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_JOB_SCRIPT_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_JOB_SCRIPT_H_

#include <string>

#include "attune/launcher.h"
#include "attune/status.h"
#include "slurm_options.h"

namespace attune::slurm {

struct ScriptPaths {
  std::string log_path;     // --output (stdout and stderr together)
  std::string marker_path;  // the job writes "<id> start <t>" then "<id> exit <rc> <t>" here
  std::string comment;      // --comment: the launcher's owner token (see slurm_launcher.h)
};

// Minutes for --time: time_limit_s rounded up, at least 1. 0 when there is no limit.
int TimeLimitMinutes(double time_limit_s);

// The script text, or kInvalidArgument naming the value that cannot go into it.
Result<std::string> RenderJobScript(const JobSpec& spec, const SlurmOptions& options,
                                    const ScriptPaths& paths);

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_JOB_SCRIPT_H_
