// Copyright attune authors.
//
// SimLauncher: the simulated cluster as a Launcher. Jobs run in virtual time: Submit computes the
// whole run at once (its log, its end), Poll reports it finished and moves the virtual clock to
// its end. Every job record and the clock are files under the state directory
// (<campaign_dir>/sim, or with.state_dir), written atomically (temp file + rename), so a new
// SimLauncher after a crash finds every job by name and the clock never runs backwards (on open
// it is also raised to the end of every job already reported finished).
//
// Thread-safety: one engine thread at a time (launcher.h).
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_SIM_LAUNCHER_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_SIM_LAUNCHER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "attune/launcher.h"
#include "hardware.h"
#include "perf_model.h"

namespace attune::sim {

class SimLauncher : public Launcher {
 public:
  // `state_dir` empty keeps everything in memory (CLI tools without a campaign).
  SimLauncher(ClusterSpec cluster, std::string state_dir, ModelFactors factors = {});

  // Reads the `with:` config and the campaign directory from the context.
  static Result<std::unique_ptr<SimLauncher>> Create(const PluginContext& context);

  std::string Name() const override { return "sim"; }
  std::vector<PluginCommand> Commands() const override;
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override;

  ClusterInfo Cluster() const override;
  Result<JobStatus> Submit(const JobSpec& spec) override;
  Result<JobStatus> Poll(const std::string& name) override;
  Result<std::string> ReadLog(const std::string& name) override;
  Status Cancel(const std::string& name) override;
  double PollIntervalSeconds() const override { return 0; }
  double Now() const override;

  const ClusterSpec& cluster_spec() const { return cluster_; }

 private:
  struct Record {
    JobStatus status;       // the job's final status
    std::string log_path;
    bool polled = false;    // reported finished at least once
  };

  Result<std::optional<Record>> Find(const std::string& name);
  Status Store(const std::string& name, const Record& record);
  Status AdvanceClock(double to);
  // The clock is at least the end of every job already reported finished.
  void RecoverClockFromRecords();
  JobStatus RunningView(const Record& record) const;
  Status AppendSubmission(const std::string& name) const;
  std::string RecordPath(const std::string& name) const;

  ClusterSpec cluster_;
  std::string state_dir_;
  ModelFactors factors_;
  double clock_ = 0;
  std::map<std::string, Record> records_;  // cache; files are the truth when state_dir_ is set
  std::map<std::string, std::string> memory_logs_;  // logs when there is no state dir and no path
};

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_SIM_LAUNCHER_H_
