// Copyright attune authors.
//
// Runs a child process without a shell (posix_spawnp), in its own process group, capturing stdout
// and stderr, with a wall-clock limit. On timeout the whole group is killed (a coding agent's tool
// children may outlive it), then reaped. Generic: any coding-agent CLI plugin can use it.
//
// Thread-safety: RunProcess may be called from several threads; it changes no process-wide state.
#ifndef ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_SUBPROCESS_H_
#define ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_SUBPROCESS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::agents {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is a path or a name looked up on PATH
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  std::string cwd;                // "" keeps the caller's
  double timeout_s = 600;
  size_t max_output_bytes = 64u << 20;  // per stream; the rest is discarded
};

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int term_signal = 0;
  bool timed_out = false;
  double elapsed_s = 0;
  std::string out;
  std::string err;
};

// Fails only when the process cannot be started (the message names argv[0] and errno). A child that
// fails, is killed or times out is a successful call with the facts in ProcessResult.
Result<ProcessResult> RunProcess(const ProcessSpec& spec);

// The current environment as "NAME=value" strings, with `overrides` replacing or adding entries.
std::vector<std::string> MergedEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_SUBPROCESS_H_
