// Copyright attune authors.
//
// The local launcher: runs each job as a process group on this machine, under the job wrapper
// (`attune local job-exec`, this plugin's command, job_wrapper.h), which records start and end
// atomically.
// Everything a launcher needs to answer for a job lives in <state_dir>/jobs/<name>/ (see
// job_records.h), so a launcher object created after an engine crash finds, polls, reads and
// cancels jobs started by an earlier one.
//
// Devices: a job's `devices` are CPU cores here (or GPUs with device_type "gpu"); the launcher
// refuses a job asking for more than devices_per_node, exports ATTUNE_DEVICES=<n> to the job, pins
// it to cores [0, n) when pin_cpus is set (cpu only) and sets CUDA_VISIBLE_DEVICES=0..n-1 for
// "gpu". Device-hours are devices × (end − start) of the recorded times.
//
// Options (the workflow's `with:` for the launcher; JobSpec.options may override the per-job ones
// marked *):
//   state_dir         where job records live (default <campaign_dir>/launcher-local)
//   wrapper           command that runs the wrapper (default: [<attune>, --plugin-path, <the folder
//                     of this plugin's library>, local, job-exec], <attune> being
//                     PluginContext.attune_binary or $ATTUNE_BIN)
//   device_type       "cpu" (default) or "gpu"
//   devices_per_node  default: the number of online CPUs
//   grace_s*          seconds between SIGTERM and SIGKILL at the time limit or cancel (default 10)
//   pin_cpus*         bool, default false
//   poll_interval_s   default 1
//   submit_wait_s     how long Submit waits for the wrapper to record the start (default 10)
//
// Thread-safety: one engine thread at a time (the Launcher contract). Several launcher objects or
// processes may share a state_dir: Submit serializes per job name with a file lock.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_LOCAL_LOCAL_LAUNCHER_H_
#define ATTUNE_PLUGINS_LAUNCHERS_LOCAL_LOCAL_LAUNCHER_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attune/launcher.h"
#include "attune/plugin.h"

namespace attune::local {

struct LocalOptions {
  std::string state_dir;
  std::vector<std::string> wrapper;  // empty: Submit fails with a message saying how to set it
  std::string device_type = "cpu";
  int devices_per_node = 1;
  double grace_s = 10;
  bool pin_cpus = false;
  double poll_interval_s = 1;
  double submit_wait_s = 10;
};

// Reads LocalOptions from a plugin context (config keys above). kInvalidArgument names the key.
Result<LocalOptions> OptionsFromContext(const PluginContext& context);

class LocalLauncher : public Launcher {
 public:
  explicit LocalLauncher(LocalOptions options);
  ~LocalLauncher() override;

  std::string Name() const override { return "local"; }
  ClusterInfo Cluster() const override;
  Result<JobStatus> Submit(const JobSpec& spec) override;
  Result<JobStatus> Poll(const std::string& name) override;
  Result<std::string> ReadLog(const std::string& name) override;
  Status Cancel(const std::string& name) override;
  double PollIntervalSeconds() const override { return options_.poll_interval_s; }
  double Now() const override;
  // `attune local job-exec ARGS...`: the job wrapper (job_wrapper.h).
  std::vector<PluginCommand> Commands() const override;
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override;

  // The record directory of a job (exists once it was submitted).
  std::string RecordDir(const std::string& name) const;

 private:
  Result<JobStatus> SubmitLocked(const JobSpec& spec);
  Status ValidateSpec(const JobSpec& spec) const;
  Result<JobStatus> WaitUntilStarted(const JobSpec& spec, pid_t wrapper_pid);
  Status AppendSubmission(const std::string& name) const;
  std::vector<std::string> WrapperArgv(const JobSpec& spec, const std::string& wrapper0) const;
  void ReapChildren();

  LocalOptions options_;
  std::map<std::string, pid_t> children_;  // wrappers this object started, to reap them
};

// The default `wrapper` option for an attune executable: [attune, --plugin-path, <this plugin's
// folder>, local, job-exec] (without the --plugin-path pair when the folder is unknown).
std::vector<std::string> DefaultWrapper(const std::string& attune_binary);

// The plugin factory.
Result<std::unique_ptr<Plugin>> CreateLocalLauncher(const PluginContext& context);

}  // namespace attune::local

#endif  // ATTUNE_PLUGINS_LAUNCHERS_LOCAL_LOCAL_LAUNCHER_H_
