// Copyright attune authors.
//
// CaptureScript: runs a launch script under the real bash, inside a bubblewrap sandbox, with
// recording stubs first on PATH (and mounted over their absolute paths) for the commands that
// start or prepare training: torchrun, python/python3, ray, srun, mpirun, deepspeed, accelerate,
// uv, automodel, nvidia-smi, pip, sleep, ... Each stub records its argv, the environment it was
// given and its working directory, and exits 0 without running anything. bash itself evaluates
// everything else: branches, `case`, loops, `source`, command substitution, arrays (with their
// comments), quoting, heredocs.
//
// The sandbox: the root file system read-only, /tmp and /var/tmp empty and private (the script's
// own folder and the working directory stay visible), a scratch HOME, no network, its own PID
// namespace, killed with attune and at the timeout. Commands a script runs besides the stubs
// (mkdir, cat, ...) run for real but cannot change anything outside the scratch folders.
#ifndef ATTUNE_ENGINE_IMPORTER_CAPTURE_H_
#define ATTUNE_ENGINE_IMPORTER_CAPTURE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attune/status.h"

namespace attune::importer {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// One recorded call of a stubbed command.
struct CapturedCall {
  std::vector<std::string> argv;  // argv[0]: the command's name as called, without its folder
  EnvList env;                    // variables the script set or changed for it (see CaptureScript)
  std::string cwd;
  // A file command (mkdir, touch, rm, cp, mv, ln, chmod) that the read-only sandbox refused and
  // that pretended to succeed; the other file commands ran for real and are not recorded.
  bool refused_file_command = false;
  // The launcher call (srun, mpirun) whose `bash -c '…'` made this call, or the sbatch whose batch
  // script made it, by index in the calls.
  std::optional<size_t> wrapper;
  std::string batch_script;       // for sbatch: the batch script it was given (file or stdin)
};

struct CaptureOptions {
  std::vector<std::string> args;  // the script's positional arguments ($1, $2, ...)
  EnvList env;                    // the environment the script starts with (besides the sandbox's)
  std::optional<int> gpus;        // nvidia-smi answers as a machine with this many GPUs
  std::string cwd;                // where the script runs; empty: the current directory
  double timeout_s = 30;
  // Run the script as sbatch would run it (IsBatchScript): through the sbatch stub, as the job's
  // first task, with the SLURM_* variables of the allocation its #SBATCH lines ask for.
  bool as_batch_job = false;
  std::string bwrap = "bwrap";    // the bubblewrap binary
};

struct Capture {
  std::vector<CapturedCall> calls;  // in the order they were made
  int exit_code = -1;               // the script's exit status (-1: killed, or timed out)
  bool timed_out = false;
  std::string stderr_tail;          // the last lines the script wrote to stderr
  std::string stdout_tail;          // and to stdout, where many scripts echo their own errors
  // Folders the script wrote into: it ran on scratch copies of them, its writes thrown away.
  std::vector<std::string> writable_copies;
  // From runs under `set -u`: "line N: NAME" for each variable the script reads without it being
  // set (a positional argument "$1" or required environment), in the order bash met them. Each
  // run sets the ones found so far to empty and goes on, up to kMaxUnsetReported of them.
  std::vector<std::string> unset_variables;
};

inline constexpr size_t kMaxUnsetReported = 16;

// The options of `text`'s #SBATCH lines (what follows "#SBATCH"), read as sbatch reads them: up
// to the script's first command.
std::vector<std::string> SbatchHeader(const std::string& text);

// Whether `text` is a Slurm batch script: an #SBATCH line before its first command.
inline bool IsBatchScript(const std::string& text) { return !SbatchHeader(text).empty(); }

// The stubbed commands, in the order the documentation lists them; they are first on PATH and
// mounted over the real programs.
const std::vector<std::string>& StubbedCommands();

// File commands that run for real and pretend to succeed where the sandbox refuses them; first on
// PATH only (the stub itself must reach the real ones).
const std::vector<std::string>& FileCommands();

// Runs `script_path`. Fails when the script cannot be read or the sandbox cannot be started
// (kFailedPrecondition naming bubblewrap and --no-exec); a script that fails or times out is a
// Capture with its exit status, not an error. Environment recorded for a call is what differs
// from the environment the script started with, minus the shell's own variables (PWD, SHLVL, ...).
Result<Capture> CaptureScript(const std::string& script_path, const CaptureOptions& options);

}  // namespace attune::importer

#endif  // ATTUNE_ENGINE_IMPORTER_CAPTURE_H_
