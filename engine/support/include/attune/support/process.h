// Copyright attune authors.
//
// RunProcess: the one way attune and its plugins run a program and wait for it. No shell: argv[0]
// is looked up in PATH (when it has no '/') and user-provided values reach the program as argv
// words. stdin is `input` (or /dev/null), stdout and stderr are captured, and at the deadline the
// program's whole process group is killed (it runs in a group of its own). SIGPIPE is restored to
// its default in the child (`attune run` ignores it, and an ignored disposition survives exec).
//
// Thread-safety: each call is independent.
#ifndef ATTUNE_SUPPORT_PROCESS_H_
#define ATTUNE_SUPPORT_PROCESS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "attune/status.h"

namespace attune::support {

struct ProcessOptions {
  double timeout_s = 30;
  std::string input;  // written to stdin; empty: stdin is /dev/null
  // Entries (NAME, value) added to, or replacing in, the inherited environment; with
  // `clear_environment` they are the whole environment.
  std::vector<std::pair<std::string, std::string>> env;
  bool clear_environment = false;
  std::string cwd;             // empty: attune's working directory
  size_t max_output = 0;       // per stream; 0: unlimited. Past it, output is read and dropped
  // The program's exit ends the run: what is left of its process group (background children of
  // an agent's tools) is killed, and the pipes get 2 s more to reach end of file. Without it, a
  // background child that keeps stdout open keeps the run going until it exits or the deadline.
  bool kill_leftovers = false;
};

struct ProcessResult {
  int exit_code = -1;      // the exit status; -1 when killed by a signal (see `signal`)
  int signal = 0;          // the terminating signal, 0 when it exited
  bool timed_out = false;  // killed at the deadline
  std::string out;
  std::string err;
  size_t dropped = 0;      // bytes read past max_output (both streams)
  double seconds = 0;      // wall time it ran
};

// `name` resolved as RunProcess would (on PATH), then in `also` (directories tried in order, e.g.
// where an npm-installed CLI lands: /usr/local/bin, ~/.local/bin); "" when no executable is found.
// A name with a '/' is returned as is when it is executable, else "".
std::string FindExecutable(const std::string& name, const std::vector<std::string>& also = {});

// The directories `npm install --global` uses here (tools/setup.d): /usr/local/bin, then
// $HOME/.local/bin. For plugins that drive an npm-installed CLI.
std::vector<std::string> NpmBinDirs();

// Fails (kNotFound) only when the program cannot be started at all (or kIoError when no pipe can
// be made); a non-zero exit, a signal or a timeout is reported in the result.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const ProcessOptions& options = {});

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_PROCESS_H_
