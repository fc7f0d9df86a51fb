// Copyright attune authors.
//
// Runs a short helper command (no shell) and captures its stdout, with a wall-clock limit; the
// Stop hook uses it to ask `attune status --json`. On timeout the child's process group is killed.
#ifndef ATTUNE_ENGINE_HOOKS_RUN_CAPTURE_H_
#define ATTUNE_ENGINE_HOOKS_RUN_CAPTURE_H_

#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::hooks {

// stdout of `argv` when it exits 0 within `timeout_s`; otherwise an error naming the command, the
// exit code or the timeout.
Result<std::string> RunCapture(const std::vector<std::string>& argv, double timeout_s);

}  // namespace attune::hooks

#endif  // ATTUNE_ENGINE_HOOKS_RUN_CAPTURE_H_
