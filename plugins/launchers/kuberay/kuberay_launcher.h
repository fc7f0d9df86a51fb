// Copyright attune authors.
//
// KubeRayLauncher: runs each benchmark job as a KubeRay RayJob (ray.io/v1) through kubectl.
//
// Finding a job by name (the crash-safety contract of attune/launcher.h): the cluster is asked by
// label (`kubectl get rayjobs -l attune.owner=<owner>,attune.job-hash=<hash>`, see rayjob.h) and
// only an object whose attune.job annotation is the name asked for counts. The record
// <state_dir>/<name>.json (job_record.h) adds what the cluster cannot say once a RayJob is gone.
//   - Submit asks first and returns the existing job when there is one; it writes the manifest to
//     the job folder and an intent record, then runs `kubectl apply -f <job_dir>/rayjob.yaml`.
//     A crash between apply and the record leaves a RayJob the next Submit or Poll finds by
//     label. A RayJob of the same name that is not this campaign's is never touched.
//   - A name the cluster does not know and the record does not show as created is kUnknown (safe
//     to submit); one that was created and has vanished is cancelled (when attune cancelled it)
//     or failed (deleted by someone else), never resubmitted.
//   - Transient API errors are retried with backoff inside each call, then reported as
//     kUnavailable (the engine stops the campaign; no job is failed for it).
//
// Failures are mapped with evidence (status_map.h). Pods that stay unschedulable or keep failing
// to pull their image are given unschedulable_timeout_s / image_pull_timeout_s; then the launcher
// deletes the RayJob and reports it failed with Kubernetes' message.
//
// Charging: GPUs requested by the RayCluster's pods × (RayJob .status.endTime − .status.startTime);
// a RayJob none of whose pods was ever scheduled is charged nothing.
//
// Logs: the submitter's (K8sJobMode: the submitter Job's pod; SidecarMode: the head pod's
// ray-job-submitter container), which is what `ray job logs --follow` printed of the driver.
// Every read is copied to the job folder, and a job's log is fetched again after a restart until
// the finished job's whole log is kept; once the pods are gone the copy answers.
//
// Thread-safety: one engine thread at a time (the Launcher contract).
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBERAY_LAUNCHER_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBERAY_LAUNCHER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/launcher.h"
#include "job_record.h"
#include "kubectl.h"
#include "kuberay_options.h"
#include "rayjob.h"
#include "status_map.h"

namespace attune::kuberay {

// The seams tests replace: the clock (Unix seconds) and the wait between API retries.
struct LauncherEnv {
  std::function<double()> now;
  Kubectl::Sleep sleep;
  Kubectl::Log log;
};
LauncherEnv SystemEnv(Kubectl::Log log);

class KubeRayLauncher : public Launcher {
 public:
  // `state_dir` holds records and submissions.log; `campaign_id` names the campaign label.
  KubeRayLauncher(KubeRayOptions options, std::string state_dir, std::string campaign_id,
                  std::string attune_binary, LauncherEnv env);

  std::string Name() const override { return "kuberay"; }
  ClusterInfo Cluster() const override;
  Result<JobStatus> Submit(const JobSpec& spec) override;
  Result<JobStatus> Poll(const std::string& name) override;
  Result<std::string> ReadLog(const std::string& name) override;
  Status Cancel(const std::string& name) override;
  // Copies nothing: a RayJob's files reach this machine only through a volume shared with it
  // (CheckSharedFolder), where they are read in place; without one, kFailedPrecondition.
  Result<std::vector<std::string>> FetchFiles(const std::string& name, const std::string& remote_dir,
                                              const std::string& local_dir) override;
  double PollIntervalSeconds() const override { return options_.poll_interval_s; }
  double Now() const override { return env_.now(); }
  std::vector<PluginCommand> Commands() const override;
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override;

  const std::string& owner() const { return owner_; }
  const std::string& state_dir() const { return state_dir_; }

 private:
  JobIdentity IdentityOf(const std::string& name, const std::optional<JobRecord>& record) const;
  // The RayJob of this name that is ours, if the cluster has one.
  Result<std::optional<nlohmann::json>> Find(const JobIdentity& id, Kubectl& kubectl);
  Result<JobStatus> Observe(JobRecord* record, const nlohmann::json& rayjob, Kubectl& kubectl);
  Result<PodEvidence> Evidence(const JobRecord& record, const nlohmann::json& rayjob,
                               bool with_events, Kubectl& kubectl);
  Result<JobStatus> GiveUpWaiting(JobRecord* record, JobStatus status, const PodEvidence& pods,
                                  Kubectl& kubectl);
  Result<JobStatus> Vanished(const std::string& name, std::optional<JobRecord> record);
  Result<JobStatus> Finish(JobRecord* record, const JobStatus& status, Kubectl& kubectl);
  JobRecord Adopt(const std::string& name, const nlohmann::json& rayjob) const;
  // The driver's log from the cluster; nullopt when no pod has one to give.
  Result<std::optional<std::string>> FetchLog(const JobRecord& record, Kubectl& kubectl);
  Status KeepLogCopy(JobRecord* record, bool finished, Kubectl& kubectl);
  Result<JobRecord> SubmitNew(const JobSpec& spec, const KubeRayOptions& options,
                              const JobIdentity& id);
  Kubectl MakeKubectl(const KubeRayOptions& options) const;

  int RenderCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

  KubeRayOptions options_;
  std::string state_dir_;
  std::string campaign_id_;
  std::string attune_binary_;
  std::string owner_;  // 12 hex digits of SHA-256(canonical state_dir)
  LauncherEnv env_;
  Kubectl kubectl_;
};

// The factory: options from context.config; records in options.state_dir, else
// <campaign_dir>/kuberay, else $TMPDIR/attune-kuberay-<uid>. Outside a campaign (CLI commands),
// `namespace` and `image` may be missing until a command needs them.
Result<std::unique_ptr<Plugin>> CreateKubeRayLauncher(const PluginContext& context);

// `attune kuberay rbac`: a ServiceAccount, Role and RoleBinding (YAML) granting exactly what the
// launcher uses in `namespace_name`.
std::string RbacYaml(const std::string& namespace_name, const std::string& account);

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBERAY_LAUNCHER_H_
