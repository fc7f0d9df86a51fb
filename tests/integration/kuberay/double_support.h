// Helpers for tests that run the KubeRay launcher with the real kubectl against the Kubernetes API
// server test double (tests/k8s_double/). No cluster is involved anywhere.
#ifndef ATTUNE_TESTS_INTEGRATION_KUBERAY_DOUBLE_SUPPORT_H_
#define ATTUNE_TESTS_INTEGRATION_KUBERAY_DOUBLE_SUPPORT_H_

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/launcher.h"
#include "kuberay_launcher.h"

namespace attune::kuberay_test {

inline constexpr int kSkipExitCode = 77;
inline constexpr const char* kNamespace = "team-a";

// The double of this test process, started on first use with:
//   token "tok-a": namespace team-a only, limited to the Role `attune kuberay rbac` prints
//   token "tok-admin": every namespace (the tests' own view)
// kubeconfig() uses tok-a. When kubectl or the double's Python packages are missing, prints why
// and exits with kSkipExitCode.
class Double {
 public:
  static Double& Get();
  ~Double();

  const std::string& state_dir() const { return state_dir_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& admin_kubeconfig() const { return admin_kubeconfig_; }

  // POSTs faults (see k8s_double.py) to the running double.
  void AddFaults(const nlohmann::json& faults);
  // {"rayjobs": [...], "pods": [...], "live_processes": [...]}
  nlohmann::json State();
  // The audit records (audit.jsonl) with event == `event` and rayjob == `k8s_name`.
  int CountAudit(const std::string& event, const std::string& k8s_name);

 private:
  Double();
  std::string state_dir_, kubeconfig_, admin_kubeconfig_;
  int pid_ = -1;
};

// The kubectl the tests run: $ATTUNE_KUBECTL, else `kubectl` on PATH.
std::string KubectlPath();

// Runs kubectl against the double (admin credentials unless `as_launcher`); returns exit code,
// stdout and stderr.
struct Run {
  int code = -1;
  std::string out, err;
};
Run Kubectl(const std::vector<std::string>& args, const std::string& input = "",
            bool as_launcher = false);

// Does the API server (the double, with its CRD validation) accept this RayJob? `kubectl create
// --dry-run=server` where kubectl supports it for custom resources; kubectl 1.20 decides that from
// OpenAPI v2, which the double serves empty, so there the RayJob is created suspended (KubeRay
// creates nothing for it) under a fresh name, and deleted.
Run ServerValidates(nlohmann::json manifest, const std::string& ns);

// Launcher options for the double: namespace team-a, the launcher's kubeconfig, quick polls and
// retries, plus `extra`.
nlohmann::json Options(const nlohmann::json& extra = nlohmann::json::object());

// Seconds the fake sleep was asked to wait, in order (the retry backoff).
struct Recorded {
  std::vector<double> sleeps;
};

// A launcher on a fresh records directory (or `state_dir`), with a sleep seam that records and
// waits only 10 ms.
std::unique_ptr<kuberay::KubeRayLauncher> MakeLauncher(const nlohmann::json& options,
                                                       std::shared_ptr<Recorded> recorded = nullptr,
                                                       std::string state_dir = "");

// A fresh scratch directory.
std::string Scratch(const std::string& tag);
// A job name unique to this test process: "t<pid>-<tag>".
std::string UniqueName(const std::string& tag);
// A one-node, one-GPU job running `command` with /bin/sh.
JobSpec ShellJob(const std::string& name, const std::string& command, double time_limit_s = 120);

JobStatus WaitTerminal(Launcher& launcher, const std::string& name, double timeout_s = 60);
JobStatus WaitState(Launcher& launcher, const std::string& name, JobState state,
                    double timeout_s = 30);

}  // namespace attune::kuberay_test

#endif  // ATTUNE_TESTS_INTEGRATION_KUBERAY_DOUBLE_SUPPORT_H_
