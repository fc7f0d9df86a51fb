// Copyright attune authors.
//
// KubeRayOptions: the KubeRay launcher's settings, read from the workflow's `launcher: with:`
// block (PluginContext::config) and, per job, from JobSpec::options. Every key is declared here;
// an unknown key, a wrong type or an out-of-range value is refused with the key's path, what was
// expected and the nearest valid key, before anything reaches a cluster. docs/kuberay.md lists
// them all.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBERAY_OPTIONS_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBERAY_OPTIONS_H_

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune::kuberay {

// A volume mounted into every Ray container (head, workers): data, checkpoints, caches.
struct VolumeOption {
  std::string name;        // a DNS-1123 label
  std::string mount_path;  // absolute path in the container
  // Exactly one source.
  std::string pvc;         // persistentVolumeClaim.claimName
  std::string host_path;   // hostPath.path
  std::string config_map;  // configMap.name
  std::string secret;      // secret.secretName
  bool empty_dir = false;  // an emptyDir
  bool read_only = false;
};

// Which pods hold the GPUs.
//   kAuto:    kHead for single-node recipes, kWorkers otherwise.
//   kHead:    one pod, the head, with the recipe's GPUs; the entrypoint runs where the GPUs are.
//   kWorkers: a CPU head plus one worker pod per recipe node; for Ray-native entry points (slime)
//             that place their own actors.
enum class Layout { kAuto, kHead, kWorkers };
const char* LayoutName(Layout layout);

enum class SubmissionMode { kK8sJob, kSidecar };  // KubeRay's K8sJobMode, SidecarMode
const char* SubmissionModeName(SubmissionMode mode);

struct KubeRayOptions {
  // Where and how kubectl reaches the cluster.
  std::string namespace_;      // required: every kubectl call gets -n <namespace>
  std::string kubectl = "kubectl";
  std::string kubeconfig;      // empty: kubectl's default ($KUBECONFIG, ~/.kube/config)
  std::string context;         // empty: the kubeconfig's current context
  double request_timeout_s = 30;  // kubectl --request-timeout
  int api_retries = 5;            // retries of a transient API error before giving up
  double api_backoff_s = 1;       // first retry delay; doubles up to api_backoff_max_s
  double api_backoff_max_s = 30;

  // The RayCluster the job runs on.
  std::string image;  // required
  std::string image_pull_policy;              // empty: the cluster's default
  std::vector<std::string> image_pull_secrets;
  std::string service_account;                // the pods' service account; empty: default
  Layout layout = Layout::kAuto;
  std::string head_cpu = "4";
  std::string head_memory = "16Gi";
  int head_gpus = -1;            // -1: the recipe's GPUs per node with layout head, else 0
  std::string worker_group = "gpu-workers";
  std::string worker_cpu = "8";
  std::string worker_memory = "64Gi";
  int gpus_per_worker = -1;      // -1: the recipe's gpus_per_node
  std::string gpu_resource = "nvidia.com/gpu";
  std::string shm_size;          // a memory-backed /dev/shm of this size ("16Gi"); empty: none
  std::vector<std::pair<std::string, std::string>> node_selector;
  nlohmann::json tolerations = nlohmann::json::array();  // validated Kubernetes tolerations
  std::vector<VolumeOption> volumes;
  std::vector<std::pair<std::string, std::string>> ray_start_params;
  std::vector<std::pair<std::string, std::string>> labels;       // extra RayJob labels
  std::vector<std::pair<std::string, std::string>> annotations;  // extra RayJob annotations

  // The Ray job.
  SubmissionMode submission_mode = SubmissionMode::kK8sJob;
  std::vector<std::pair<std::string, std::string>> env;  // runtimeEnvYAML env_vars (before the stack's)
  std::string working_dir;       // runtimeEnvYAML working_dir; empty: the image's workdir
  bool shutdown_after_job_finishes = true;
  // Keeps the RayCluster's pods (failure evidence, SidecarMode logs) this long after the end;
  // at least 2 × poll_interval_s. They hold their GPUs meanwhile (not charged to the budget).
  int ttl_seconds_after_finished = 60;

  // How the launcher follows jobs.
  double poll_interval_s = 10;
  double unschedulable_timeout_s = 600;  // pods Pending unschedulable this long: the job fails
  double image_pull_timeout_s = 300;     // containers stuck pulling their image this long: fails
  std::string state_dir;                 // records; empty: <campaign_dir>/kuberay

  // What the jobs run on (ClusterInfo for stacks and agents).
  std::string device_type = "gpu";
  double device_memory_gib = 0;
  double peak_tflops = 0;
  int compute_capability_major = 0;
  int devices_per_node = 8;
  int max_nodes = 1;
};

// Reads options from a JSON object (the workflow's `with:`), starting from `base`. Errors name
// the key path, what was expected and the nearest valid key; `namespace` and `image` are required
// unless `base` already has them.
Result<KubeRayOptions> ParseKubeRayOptions(const nlohmann::json& config, KubeRayOptions base = {});

// Every option key, for help texts and tests.
std::vector<std::string> KubeRayOptionKeys();

// Whether files a RayJob's pods write below `dir` (an absolute path, the same in the pods and on
// the engine's machine) can reach the engine: OK when a writable `pvc` or `host_path` volume is
// mounted at `dir` or a folder above it, i.e. the user mounts storage the engine's machine also
// sees at that path. kFailedPrecondition otherwise, saying what to add to `volumes`. Nothing can
// check from here that the storage really is shared; that is the user's side of the contract.
Status CheckSharedFolder(const KubeRayOptions& options, const std::string& dir);

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_KUBERAY_OPTIONS_H_
