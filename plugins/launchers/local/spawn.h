// Copyright attune authors.
//
// Checks a local job before it is started and starts its wrapper process.
//
// Thread-safety: functions are independent. SpawnDetached forks; it prepares every string before
// the fork and calls only async-signal-safe functions in the child, so it is safe in a
// multi-threaded engine.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_LOCAL_SPAWN_H_
#define ATTUNE_PLUGINS_LAUNCHERS_LOCAL_SPAWN_H_

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "attune/status.h"

namespace attune::local {

// Finds an executable: a name with '/' is taken relative to `workdir` (when relative); a bare name
// is searched in `path_env`. kInvalidArgument says what was looked for and where.
Result<std::string> ResolveExecutable(const std::string& program, const std::string& workdir,
                                      const std::string& path_env);

// Checks that the job's program (and, for `python… script.py`, the script) exists and can run.
Status CheckEntryPoint(const std::vector<std::string>& argv, const std::string& workdir,
                       const std::string& path_env);

// Creates the log's directory when needed and truncates (creates) the log. kInvalidArgument when
// it cannot be written, naming the path and the reason.
Status PrepareLog(const std::string& log_path);

struct SpawnRequest {
  std::vector<std::string> argv;                            // argv[0] is an absolute path
  std::vector<std::pair<std::string, std::string>> env;     // set on top of this process's env
  std::string output_path;                                  // the child's stdout/stderr (append)
  int pin_cpus = 0;                                         // > 0: CPU affinity to cores [0, n)
};

// Starts argv in a new session (setsid) with stdin from /dev/null. Returns its pid once exec has
// succeeded; kInvalidArgument with the errno text when exec failed. The child is ours to reap.
Result<pid_t> SpawnDetached(const SpawnRequest& request);

}  // namespace attune::local

#endif  // ATTUNE_PLUGINS_LAUNCHERS_LOCAL_SPAWN_H_
