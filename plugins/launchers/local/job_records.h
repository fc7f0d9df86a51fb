// Copyright attune authors.
//
// The local launcher's on-disk view of a job: <state_dir>/jobs/<name>/.
//
//   submit.json   written (atomically) by the launcher before it starts the wrapper: the name,
//                 log path, devices, time limit, argv and submit time. Survives the engine, so a
//                 new launcher object can answer Poll/ReadLog for a job an older one started.
//   spawn.json    written by the launcher right after it started the wrapper: {"wrapper_pid",
//                 "wrapper_start_ticks"}; tells "the wrapper is still starting" from "never started".
//   wrapper.lock, start.json, end.json   written by the job wrapper (`attune local job-exec`); the
//                 format is specified in job_wrapper.h.
//
// From these files alone a job is:
//   no submit.json                         → unknown (never submitted)
//   end.json                               → its recorded terminal state
//   lock held by a live wrapper            → running (start.json) or pending (not yet)
//   lock free, start.json, no end.json     → the wrapper died (kill -9, reboot): node failure; the
//                                            launcher stops leftovers and records end.json itself
//   lock free, no start.json, the spawned
//   wrapper process still exists           → pending (it has not taken its lock yet)
//   lock free, no start.json               → never started (safe to submit again)
//
// Thread-safety: functions are independent; callers serialize per job.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_LOCAL_JOB_RECORDS_H_
#define ATTUNE_PLUGINS_LAUNCHERS_LOCAL_JOB_RECORDS_H_

#include <string>

#include <nlohmann/json.hpp>

#include "attune/launcher.h"
#include "attune/status.h"
#include "job_wrapper.h"

namespace attune::local {

inline constexpr char kSubmitFile[] = "submit.json";
inline constexpr char kSpawnFile[] = "spawn.json";
using jobwrap::kEndFile;  // the wrapper's record files (job_wrapper.h)
using jobwrap::kLockFile;
using jobwrap::kStartFile;

// Temp file + fsync + rename + directory fsync.
Status WriteJsonAtomically(const std::string& path, const nlohmann::json& value);

// The parsed file, std::nullopt-like empty object when absent; kCorruption when unparsable.
Result<nlohmann::json> ReadJsonIfExists(const std::string& path);

// True when a live process holds the wrapper lock of `record_dir`.
bool WrapperAlive(const std::string& record_dir);

// Start time of a process in clock ticks since boot (0 when there is no such process); with the
// pid it identifies a process even after its pid is reused.
unsigned long long ProcessStartTicks(long pid);

// The pid written in the lock file by the wrapper (0 when unknown).
int WrapperPidFromLock(const std::string& record_dir);

// Reads a job's status from its record directory (see the file comment). A wrapper that died
// without end.json is settled here: leftovers of its process group are killed and end.json is
// written with state "node_failure", so the answer never changes afterwards.
Result<JobStatus> ReadJobStatus(const std::string& name, const std::string& record_dir);

}  // namespace attune::local

#endif  // ATTUNE_PLUGINS_LAUNCHERS_LOCAL_JOB_RECORDS_H_
