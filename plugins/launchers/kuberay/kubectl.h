// Copyright attune authors.
//
// Kubectl: the launcher's only way to the cluster. Every call runs the real `kubectl` (no shell)
// with `-n <namespace>`, the user's --kubeconfig/--context when configured, and
// --request-timeout; the verbs are apply, get -o json, logs and delete.
//
// Errors are classified from kubectl's own words ("Error from server (NotFound): ...") into
// Status codes:
//   NotFound                    kNotFound
//   AlreadyExists / Conflict    kAlreadyExists
//   Invalid, BadRequest         kInvalidArgument   (the manifest is wrong: names the field)
//   Forbidden, Unauthorized     kFailedPrecondition (the credentials: see `attune kuberay rbac`)
//   InternalError, ServiceUnavailable, Timeout, TooManyRequests, connection refused, TLS or
//   i/o timeouts, a kubectl that did not answer in time
//                               transient: retried with exponential backoff (api_retries times,
//                               api_backoff_s doubling up to api_backoff_max_s), then kUnavailable
//   anything else               kFailedPrecondition, with kubectl's message
// A transient failure is never a job's failure: the engine stops the campaign on kUnavailable and
// a resumed campaign carries on.
//
// Thread-safety: one caller at a time.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBECTL_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBECTL_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/plugin.h"
#include "attune/status.h"
#include "kuberay_options.h"
#include "process.h"

namespace attune::kuberay {

// kubectl's outcome as a Status; `transient` says whether retrying may help.
Status ClassifyKubectl(const CommandResult& result, const std::string& what, bool* transient);

class Kubectl {
 public:
  using Sleep = std::function<void(double seconds)>;
  using Log = std::function<void(LogLevel, const std::string&)>;

  // `sleep` waits between retries (the tests pass one that records instead of waiting).
  Kubectl(const KubeRayOptions& options, Sleep sleep, Log log);

  // RayJobs matching a label selector (an empty list when none).
  Result<std::vector<nlohmann::json>> ListRayJobs(const std::string& selector);
  // The RayJob named `name`, or nullopt when there is none.
  Result<std::optional<nlohmann::json>> GetRayJob(const std::string& name);
  // `kubectl apply -f <path>`; returns kubectl's output ("rayjob.ray.io/x created").
  Result<std::string> Apply(const std::string& manifest_path);
  // Deletes without waiting for the operator's finalizer; a missing RayJob is fine.
  Status DeleteRayJob(const std::string& name);
  Result<std::vector<nlohmann::json>> ListPods(const std::string& selector);
  // Events matching a field selector ("involvedObject.kind=Pod").
  Result<std::vector<nlohmann::json>> Events(const std::string& field_selector);
  // A pod's log; `container` may be empty for single-container pods.
  Result<std::string> Logs(const std::string& pod, const std::string& container);

  // The command line kubectl is run with for `args` (for messages and tests).
  std::vector<std::string> CommandLine(const std::vector<std::string>& args) const;

 private:
  Result<std::string> Run(const std::vector<std::string>& args, const std::string& what);
  Result<std::vector<nlohmann::json>> Items(const std::vector<std::string>& args,
                                            const std::string& what);

  KubeRayOptions options_;
  Sleep sleep_;
  Log log_;
};

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBECTL_H_
