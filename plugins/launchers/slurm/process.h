// Copyright attune authors.
//
// RunProcess: runs a program (no shell) with posix_spawn, captures its stdout and stderr and
// enforces a timeout. The Slurm launcher runs sbatch, squeue, scontrol and scancel through it, so
// user-provided values reach them as argv words, never through a shell.
//
// A thin adapter over attune::support::RunProcess (attune/support/process.h), the one process
// runner, in the shape this plugin's callers use.
//
// Thread-safety: each call is independent.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_PROCESS_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_PROCESS_H_

#include <string>
#include <utility>
#include <vector>

#include "attune/status.h"

namespace attune::slurm {

struct ProcessResult {
  int exit_code = -1;      // the exit status; -1 when killed by a signal (see `signal`)
  int signal = 0;          // the terminating signal, 0 when it exited
  bool timed_out = false;  // we killed it at the deadline
  std::string out;
  std::string err;
  double seconds = 0;  // wall time it ran
};

struct ProcessOptions {
  double timeout_s = 30;
  // Extra environment entries (NAME, value) added to (or replacing in) the inherited environment.
  std::vector<std::pair<std::string, std::string>> env;
};

// Runs argv[0] (searched in PATH when it has no '/'). Fails (kNotFound) only when the program
// cannot be started at all; a non-zero exit or a timeout is reported in the result.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const ProcessOptions& options = {});

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_PROCESS_H_
