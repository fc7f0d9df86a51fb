// Copyright attune authors.
//
// The job wrapper behind `attune local job-exec`: runs one job as its own process group and records, in
// a record directory, what a launcher in another process (or after a crash) needs to know exactly
// whether the job is running, finished (and how) or never started — without waitpid on a process
// that is not its child.
//
// Usage (args are what follows the subcommand name):
//   attune local job-exec --record DIR [--log FILE] [--time-limit SECONDS] [--grace SECONDS]
//                         [--workdir DIR] [--devices N] -- PROGRAM [ARGS...]
//
// It lives in the local launcher's plugin and runs as that plugin's command, in a process of its
// own (the launcher spawns `<attune> --plugin-path <this plugin's folder> local job-exec ...`), so
// the job outlives the engine that started it.
//
// Record directory (the contract with the launcher's job_records.h, which reads these files):
//   wrapper.lock  held with flock(LOCK_EX) by the live wrapper for its whole life (never by the job:
//                 the descriptor is close-on-exec). Its content is the wrapper's pid. A lock that
//                 can be taken means no wrapper is alive for this record.
//   start.json    written atomically right after the job is forked:
//                 {"wrapper_pid", "job_pid", "pgid", "job_start_ticks", "start_time", "argv",
//                  "time_limit_s", "devices", "log"}
//   end.json      written atomically when the job's leader has exited:
//                 {"state": "succeeded"|"failed"|"timed_out"|"cancelled", "exit_code", "signal",
//                  "start_time", "end_time", "reason"}
// Files are written to a temporary name, fsync'ed, renamed and the directory fsync'ed, so a reader
// sees either nothing or the whole record. Times are Unix seconds (fractional).
//
// Behaviour:
//  - The job runs in a new process group (pgid = its pid) with PR_SET_PDEATHSIG=SIGKILL, so a
//    wrapper killed with SIGKILL takes the job's leader down with it. stdout and stderr go to
//    --log (appended) when given; stdin is /dev/null.
//  - Past --time-limit the group gets SIGTERM, then SIGKILL after --grace (default 10 s).
//    SIGTERM, SIGINT or SIGHUP to the wrapper cancels the job the same way.
//  - When the leader exits, leftover members of the group are killed (the job is over).
//  - A record that already has start.json is never run again; a second wrapper for a record whose
//    wrapper is alive exits at once. So one record runs its job at most once.
//
// Exit status: the job's exit code (128+N when killed by signal N); 2 for bad usage; 75 when the
// record is owned by another wrapper or already ran; 71 when the record cannot be written.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_LOCAL_JOB_WRAPPER_H_
#define ATTUNE_PLUGINS_LAUNCHERS_LOCAL_JOB_WRAPPER_H_

#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::jobwrap {

inline constexpr char kLockFile[] = "wrapper.lock";
inline constexpr char kStartFile[] = "start.json";
inline constexpr char kEndFile[] = "end.json";

inline constexpr int kExitUsage = 2;
inline constexpr int kExitRecordBusy = 75;  // EX_TEMPFAIL
inline constexpr int kExitOsError = 71;     // EX_OSERR

struct WrapperOptions {
  std::string record_dir;
  std::string log_path;        // empty: inherit stdout/stderr
  std::string workdir;         // empty: the wrapper's working directory
  double time_limit_s = 0;     // 0: none
  double grace_s = 10;
  int devices = 1;             // recorded for accounting only
  std::vector<std::string> argv;
};

// Parses the arguments after the subcommand name. kInvalidArgument names the offending argument.
Result<WrapperOptions> ParseWrapperArgs(const std::vector<std::string>& args);

// The usage text printed for bad arguments and --help.
std::string WrapperUsage();

// Runs the wrapper (blocks until the job is over); returns the process exit status to use.
int RunJobWrapper(const std::vector<std::string>& args);

}  // namespace attune::jobwrap

#endif  // ATTUNE_PLUGINS_LAUNCHERS_LOCAL_JOB_WRAPPER_H_
