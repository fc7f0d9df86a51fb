// Copyright attune authors.
//
// Helpers for the signal tests: start the real `attune` executable in its own process group (as a
// shell does for a foreground command, so that a "Ctrl-C" is kill(-pgid, SIGINT)), wait for it with
// deadlines, read what the campaign recorded (`attune events --json`, `attune status --json`) and
// what the local launcher left on disk (start.json, submissions.log), and find live processes.
#ifndef ATTUNE_TESTS_INTEGRATION_SIGNALS_SIGNALS_TEST_UTIL_H_
#define ATTUNE_TESTS_INTEGRATION_SIGNALS_SIGNALS_TEST_UTIL_H_

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::signals_test {

using nlohmann::json;

// A fresh directory under the system temp dir. On destruction every job the local launcher started
// in a campaign under it is stopped (so a failed test leaves no process behind), then it is removed.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // A campaign directory path (not created). Its name, hence the campaign id and the job names,
  // is unique to this process, so that process scans cannot see another test run's jobs.
  std::string Campaign(const std::string& what) const;
  std::string Path(const std::string& name) const { return root_ + "/" + name; }

 private:
  std::string token_;
  std::string root_;
};

// A workflow file of this directory (absolute path).
std::string Workflow(const std::string& file);

// A started `attune ARGS...`: its own process group, cwd = the repository root (the recipe's entry
// point is relative to it), stdin /dev/null, stdout and stderr to files.
struct Engine {
  pid_t pid = -1;
  std::string out_path;
  std::string err_path;
  pid_t tee_pid = -1;  // with Piped::kTee
};
enum class Piped { kNo, kTee };
// With Piped::kTee, stdout goes through a pipe to `tee out_path` in the engine's process group, as
// `attune run ... | tee log` in a shell: a Ctrl-C kills tee as well.
Engine Start(const Scratch& s, const std::string& tag, const std::vector<std::string>& args,
             Piped piped = Piped::kNo);

// The exit status once the process ended (128 + N when killed by signal N), or nullopt when it
// still runs after timeout_s.
std::optional<int> WaitExit(pid_t pid, double timeout_s);

// Kills a process group that a failed test left behind and reaps its leader.
void KillAndReap(const Engine& e);

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};
// Runs `attune ARGS...` to its end (bounded by timeout_s; then killed, code -1).
Outcome Attune(const Scratch& s, const std::vector<std::string>& args, double timeout_s = 120);

// The event envelopes of a campaign ({seq, type, data, ...}), read with `attune events --json`.
std::vector<json> Events(const Scratch& s, const std::string& dir);
// `attune status DIR --json`.
json Status(const Scratch& s, const std::string& dir);

// The events the engine has printed so far on its `--json` stdout (complete lines only).
std::vector<json> PrintedEvents(const Engine& e);
// Waits until the engine printed an event for which `match` is true (or it exited / timed out).
std::optional<json> WaitPrinted(const Engine& e, const std::function<bool(const json&)>& match,
                                double timeout_s);

// Polls until `done` or the deadline; returns whether `done` became true.
bool WaitUntil(const std::function<bool()>& done, double timeout_s);

// True when the process exists and is not a zombie.
bool ProcessAlive(pid_t pid);
// True when the process runs the attune binary (it has exec'ed) and has handlers installed for
// both SIGINT and SIGTERM (/proc/PID/status).
bool AttuneCatchesStopSignals(pid_t pid);
// Live processes (not zombies, not this one) whose command line or environment contains `needle`.
std::vector<pid_t> ProcessesMentioning(const std::string& needle);

// The local launcher's records of a campaign (state dir <campaign>/launcher-local).
json StartRecord(const std::string& dir, const std::string& job);   // start.json ({} when absent)
bool HasEndRecord(const std::string& dir, const std::string& job);  // end.json exists
std::vector<std::string> Submissions(const std::string& dir);       // submissions.log, in order

// A whole file ("" when missing).
std::string ReadText(const std::string& path);

// The events of one type, in log order.
std::vector<json> OfType(const std::vector<json>& events, const std::string& type);

// `attune run WORKFLOW --dir DIR --json --campaign-id <DIR's name>` + more: the directory's name
// as the campaign id, so that job names are known in advance.
std::vector<std::string> RunArgs(const std::string& workflow, const std::string& dir,
                                 const std::vector<std::string>& more = {});

// An event envelope of `type` (about `job`, when given).
bool IsEvent(const json& e, const std::string& type, const std::string& job = "");
std::vector<json> JobEvents(const std::vector<json>& events, const std::string& type,
                            const std::string& job);

// `attune verify DIR` exits 0 with the chain intact.
void CheckVerifies(const Scratch& s, const std::string& dir);

// What every finished campaign must satisfy after any number of pauses or crashes: each requested
// job finished exactly once, each started job was started once, nothing reserved is left, and the
// budget charged is exactly the sum of the jobs' charges.
void CheckFinishedCampaign(const Scratch& s, const std::string& dir);

}  // namespace attune::signals_test

#endif  // ATTUNE_TESTS_INTEGRATION_SIGNALS_SIGNALS_TEST_UTIL_H_
