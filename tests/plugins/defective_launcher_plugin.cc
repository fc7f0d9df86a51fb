// A launcher plugin, "testlauncher", with one contract defect chosen by ATTUNE_TESTLAUNCHER_DEFECT,
// for the launcher conformance suite's own test: `attune launcher check` must pass it with no
// defect and name the broken clause for each defect (tests/integration/conformance/
// conformance_test.py). It is the real local launcher (linked in) with the defect in front.
#include <cstdlib>
#include <memory>
#include <set>
#include <string>

#include "attune/launcher.h"
#include "attune/plugin.h"
#include "local_launcher.h"
#include "options_schema.h"

namespace {

using namespace attune;

std::string Defect() {
  const char* d = std::getenv("ATTUNE_TESTLAUNCHER_DEFECT");
  return d ? d : "";
}

class DefectiveLauncher : public Launcher {
 public:
  DefectiveLauncher(std::unique_ptr<Launcher> inner) : inner_(std::move(inner)), defect_(Defect()) {}
  std::string Name() const override { return "testlauncher"; }

  ClusterInfo Cluster() const override {
    ClusterInfo c = inner_->Cluster();
    if (defect_ == "no_devices") c.devices_per_node = 0;
    return c;
  }
  Result<JobStatus> Submit(const JobSpec& spec) override {
    submitted_.insert(spec.name);
    if (defect_ == "submit_twice") {
      // Starts the job again under another name when it already exists.
      auto known = inner_->Poll(spec.name);
      if (known.ok() && known->state != JobState::kUnknown) {
        JobSpec again = spec;
        again.name = spec.name + "-again";
        (void)inner_->Submit(again);
      }
    }
    if (defect_ == "ignores_limit") {
      JobSpec unlimited = spec;
      unlimited.time_limit_s = 3600;
      return inner_->Submit(unlimited);
    }
    return inner_->Submit(spec);
  }
  Result<JobStatus> Poll(const std::string& name) override {
    ATTUNE_ASSIGN_OR_RETURN(JobStatus st, inner_->Poll(name));
    if (defect_ == "unknown_is_pending" && st.state == JobState::kUnknown) st.state = JobState::kPending;
    if (defect_ == "forgets" && !submitted_.count(name)) st.state = JobState::kUnknown;
    if (defect_ == "failure_is_success" && st.state == JobState::kFailed) st.state = JobState::kSucceeded;
    if (defect_ == "timeout_is_failure" && st.state == JobState::kTimedOut) st.state = JobState::kFailed;
    if (defect_ == "no_times") st.end_time.reset();
    return st;
  }
  Result<std::string> ReadLog(const std::string& name) override {
    if (defect_ == "log_only_at_end") {
      auto st = inner_->Poll(name);
      if (st.ok() && !IsTerminal(st->state)) return std::string();
    }
    return inner_->ReadLog(name);
  }
  Status Cancel(const std::string& name) override {
    if (defect_ == "cancel_ignored") return Status::Ok();
    if (defect_ == "cancel_finished_fails") {
      auto st = inner_->Poll(name);
      if (st.ok() && IsTerminal(st->state)) return Status::FailedPrecondition("job " + name + " already ended");
    }
    return inner_->Cancel(name);
  }
  double PollIntervalSeconds() const override { return inner_->PollIntervalSeconds(); }
  double Now() const override { return inner_->Now(); }

 private:
  std::unique_ptr<Launcher> inner_;
  std::string defect_;
  std::set<std::string> submitted_;  // by this object: "forgets" loses them with it
};

Result<std::unique_ptr<Plugin>> Create(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(std::unique_ptr<Plugin> inner, local::CreateLocalLauncher(context));
  std::unique_ptr<Launcher> launcher(static_cast<Launcher*>(inner.release()));
  return std::unique_ptr<Plugin>(new DefectiveLauncher(std::move(launcher)));
}

}  // namespace

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kLauncher, "testlauncher", "0.0.1", Create,
                           attune::local::kOptionsSchema)
