// Copyright attune authors.
//
// RunCommand: runs a program without a shell (posix_spawnp), feeds it `input` on stdin, captures
// stdout and stderr, and kills its process group at a deadline. kubectl and `attune` are run
// through it, so user-provided values reach them as argv words.
//
// A thin adapter over attune::support::RunProcess (attune/support/process.h), the one process
// runner, in the shape this plugin's callers use.
//
// Thread-safety: each call is independent.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_PROCESS_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_PROCESS_H_

#include <string>
#include <utility>
#include <vector>

#include "attune/status.h"

namespace attune::kuberay {

struct CommandResult {
  int exit_code = -1;      // -1 when killed by a signal or at the deadline
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Fails (kNotFound) only when the program cannot be started; a non-zero exit or a timeout is in
// the result. `env` entries are added to (or replace) the inherited environment.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const std::string& input,
                                 double timeout_s,
                                 const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_PROCESS_H_
