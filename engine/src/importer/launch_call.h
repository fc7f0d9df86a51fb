// Copyright attune authors.
//
// Which recorded call is the training launch, and the command line a stack reads for it.
#ifndef ATTUNE_ENGINE_IMPORTER_LAUNCH_CALL_H_
#define ATTUNE_ENGINE_IMPORTER_LAUNCH_CALL_H_

#include <optional>
#include <string>
#include <vector>

#include "attune/status.h"
#include "importer/capture.h"

namespace attune::importer {

struct LaunchCall {
  size_t index = 0;     // in the calls
  std::string command;  // `export NAME='value'` lines, then the quoted argv: for Stack::ImportLaunch
  std::string cwd;      // where the script made the call (relative paths in it are from here)
  // The srun/mpirun call whose `bash -c '…'` made the launch; its words come first in `command`.
  std::optional<size_t> wrapper;
};

// A call that starts training (torchrun, python <script> or -m <module>, ray job submit, srun,
// mpirun, deepspeed, accelerate launch, automodel, uv run <one of these>), not one that prepares
// it (python -c, pip, nvidia-smi, ray start, sleep, ...).
bool IsLaunch(const CapturedCall& call);

// The last launch call (setup commands come first in scripts). kNotFound, listing what the
// script did call, when there is none.
Result<LaunchCall> PickLaunch(const std::vector<CapturedCall>& calls);

// The static import (--no-exec) of a batch script (IsBatchScript): each `srun` that starts a line
// and gives no layout of its own gets the job's layout from the #SBATCH header, as Slurm runs it
// (`srun --nodes=2 --ntasks-per-node=8 …`). `added` (may be null) receives the words added, once.
std::string WithBatchLayout(const std::string& script, std::vector<std::string>* added);

// One line for messages: the quoted argv, cut to `max` characters.
std::string DescribeCall(const CapturedCall& call, size_t max = 240);

}  // namespace attune::importer

#endif  // ATTUNE_ENGINE_IMPORTER_LAUNCH_CALL_H_
