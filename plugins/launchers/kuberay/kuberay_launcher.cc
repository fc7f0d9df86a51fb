// Copyright attune authors.
#include "kuberay_launcher.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "attune/hash.h"

namespace attune::kuberay {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string Str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string Annotation(const Json& obj, const char* key) {
  return Str(Field(Field(obj, "metadata"), "annotations"), key);
}

bool IsWaitingPhase(const std::string& deploy) {
  return deploy.empty() || deploy == "Initializing" || deploy == "Waiting" ||
         deploy == "Retrying" || deploy == "Suspending" || deploy == "Suspended";
}

// The campaign id the engine derives from a campaign directory (its last component, with
// characters outside [A-Za-z0-9._-] replaced by '-'); used only to split job names into labels.
std::string CampaignIdOf(const std::string& campaign_dir) {
  if (campaign_dir.empty()) return "";
  fs::path p = fs::path(campaign_dir).lexically_normal();
  std::string base = p.filename().string();
  if (base.empty()) base = p.parent_path().filename().string();
  for (char& c : base) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  }
  return base;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

// GPUs requested by the pods of a RayJob's RayCluster (for a RayJob found without a record).
int RequestedGpus(const Json& rayjob, const std::string& resource) {
  const Json& cluster = Field(Field(rayjob, "spec"), "rayClusterSpec");
  auto pod_gpus = [&](const Json& tpl) {
    int n = 0;
    for (const auto& c : Field(Field(tpl, "spec"), "containers")) {
      const Json& v = Field(Field(Field(c, "resources"), "limits"), resource.c_str());
      if (v.is_number_integer()) n += v.get<int>();
      if (v.is_string()) n += std::atoi(v.get<std::string>().c_str());
    }
    return n;
  };
  int total = pod_gpus(Field(Field(cluster, "headGroupSpec"), "template"));
  for (const auto& g : Field(cluster, "workerGroupSpecs")) {
    int replicas = Field(g, "replicas").is_number_integer() ? g["replicas"].get<int>() : 0;
    int hosts = Field(g, "numOfHosts").is_number_integer() ? g["numOfHosts"].get<int>() : 1;
    total += replicas * std::max(1, hosts) * pod_gpus(Field(g, "template"));
  }
  return total;
}

// The newest pod of a list (a retried submitter Job leaves several).
const Json* Newest(const std::vector<Json>& pods) {
  const Json* best = nullptr;
  for (const auto& p : pods) {
    if (!best || Str(Field(p, "metadata"), "creationTimestamp") >=
                     Str(Field(*best, "metadata"), "creationTimestamp")) {
      best = &p;
    }
  }
  return best;
}

}  // namespace

LauncherEnv SystemEnv(Kubectl::Log log) {
  LauncherEnv env;
  env.now = [] {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
  };
  env.sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  env.log = std::move(log);
  return env;
}

KubeRayLauncher::KubeRayLauncher(KubeRayOptions options, std::string state_dir,
                                 std::string campaign_id, std::string attune_binary,
                                 LauncherEnv env)
    : options_(std::move(options)),
      state_dir_(std::move(state_dir)),
      campaign_id_(std::move(campaign_id)),
      attune_binary_(std::move(attune_binary)),
      owner_(Sha256Hex(fs::weakly_canonical(fs::absolute(state_dir_)).string()).substr(0, 12)),
      env_(std::move(env)),
      kubectl_(MakeKubectl(options_)) {}

Kubectl KubeRayLauncher::MakeKubectl(const KubeRayOptions& options) const {
  return Kubectl(options, env_.sleep, env_.log);
}

ClusterInfo KubeRayLauncher::Cluster() const {
  ClusterInfo c;
  c.device_type = options_.device_type;
  c.device_memory_gib = options_.device_memory_gib;
  c.peak_tflops = options_.peak_tflops;
  c.compute_capability_major = options_.compute_capability_major;
  c.devices_per_node = options_.devices_per_node;
  c.max_nodes = options_.max_nodes;
  c.k8s_namespace = options_.namespace_;
  return c;
}

JobIdentity KubeRayLauncher::IdentityOf(const std::string& name,
                                        const std::optional<JobRecord>& record) const {
  JobIdentity id = IdentifyJob(name, campaign_id_, record ? record->owner : owner_);
  return id;
}

Result<std::optional<Json>> KubeRayLauncher::Find(const JobIdentity& id, Kubectl& kubectl) {
  ATTUNE_ASSIGN_OR_RETURN(std::vector<Json> items, kubectl.ListRayJobs(LabelSelector(id)));
  std::optional<Json> found;
  for (auto& item : items) {
    // The labels select by hash; the annotation says which name the object was made for.
    if (Annotation(item, "attune.job") != id.job) continue;
    if (found) {
      return Status::FailedPrecondition(
          "kuberay launcher: two RayJobs in namespace " + options_.namespace_ + " carry job '" +
          id.job + "' (" + Str(Field(*found, "metadata"), "name") + ", " +
          Str(Field(item, "metadata"), "name") + "); attune made at most one, so one was copied "
          "by hand: delete the copy");
    }
    found = std::move(item);
  }
  return found;
}

JobRecord KubeRayLauncher::Adopt(const std::string& name, const Json& rayjob) const {
  // The RayJob exists but no record says so: a crash came between kubectl apply and the record,
  // or the record was lost. It is this campaign's (labels and annotation match): adopt it.
  JobRecord r;
  r.name = name;
  r.k8s_name = Str(Field(rayjob, "metadata"), "name");
  r.namespace_ = options_.namespace_;
  r.owner = owner_;
  r.job_hash = Sha256Hex(name).substr(0, 16);
  r.job_dir = (fs::path(state_dir_) / name).string();
  r.log_path = (fs::path(r.job_dir) / "job.log").string();
  r.manifest_path = (fs::path(r.job_dir) / "rayjob.yaml").string();
  r.submission_mode = Str(Field(rayjob, "spec"), "submissionMode");
  if (r.submission_mode.empty()) r.submission_mode = "K8sJobMode";
  r.gpus = RequestedGpus(rayjob, options_.gpu_resource);
  r.created = true;
  return r;
}

Result<PodEvidence> KubeRayLauncher::Evidence(const JobRecord& record, const Json& rayjob,
                                              bool with_events, Kubectl& kubectl) {
  JobIdentity id = IdentifyJob(record.name, campaign_id_, record.owner);
  ATTUNE_ASSIGN_OR_RETURN(std::vector<Json> pods, kubectl.ListPods(LabelSelector(id)));
  std::vector<Json> events;
  const std::string cluster = Str(Field(rayjob, "status"), "rayClusterName");
  if (with_events && !cluster.empty()) {
    // A lost node takes its pods with it; what remains are the events about them.
    ATTUNE_ASSIGN_OR_RETURN(std::vector<Json> all, kubectl.Events("involvedObject.kind=Pod"));
    for (auto& e : all) {
      if (Str(Field(e, "involvedObject"), "name").rfind(cluster + "-", 0) == 0) {
        events.push_back(std::move(e));
      }
    }
  }
  return ReadPodEvidence(pods, events);
}

Result<JobStatus> KubeRayLauncher::Observe(JobRecord* record, const Json& rayjob,
                                           Kubectl& kubectl) {
  const Json& st = Field(rayjob, "status");
  const std::string deploy = Str(st, "jobDeploymentStatus");
  record->seen = true;
  record->uid = Str(Field(rayjob, "metadata"), "uid");
  record->last_seen_time = Now();
  if (auto start = ParseTime(Str(st, "startTime"))) record->start_time = start;
  const bool waiting = IsWaitingPhase(deploy);
  const bool failed = deploy == "Failed" || (deploy == "Complete" && Str(st, "jobStatus") != "SUCCEEDED");
  PodEvidence pods;
  if (waiting || failed) {
    ATTUNE_ASSIGN_OR_RETURN(pods, Evidence(*record, rayjob, failed, kubectl));
  }
  const int devices = record->gpus > 0 ? record->gpus : record->devices;
  JobStatus status = MapRayJob(record->name, rayjob, pods, devices);
  if (!Field(Field(rayjob, "metadata"), "deletionTimestamp").is_null() && !IsTerminal(status.state)) {
    status.state = JobState::kRunning;
    status.reason = "RayJob " + record->k8s_name + " is being deleted";
  }
  if (IsTerminal(status.state)) return Finish(record, status, kubectl);
  if (status.state == JobState::kPending && (pods.unschedulable || pods.image_pull)) {
    if (!record->waiting_since) record->waiting_since = Now();
    double limit = pods.unschedulable ? options_.unschedulable_timeout_s
                                      : options_.image_pull_timeout_s;
    if (Now() - *record->waiting_since >= limit) {
      return GiveUpWaiting(record, status, pods, kubectl);
    }
  } else {
    record->waiting_since.reset();
  }
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, *record));
  return status;
}

Result<JobStatus> KubeRayLauncher::GiveUpWaiting(JobRecord* record, JobStatus status,
                                                 const PodEvidence& pods, Kubectl& kubectl) {
  const double waited = Now() - *record->waiting_since;
  ATTUNE_RETURN_IF_ERROR(kubectl.DeleteRayJob(record->k8s_name));
  status.state = JobState::kFailed;
  status.reason = (pods.unschedulable ? *pods.unschedulable : *pods.image_pull) + " (for " +
                  std::to_string(static_cast<long>(waited)) + " s; attune deleted RayJob " +
                  record->k8s_name + ")";
  if (pods.any_scheduled && status.start_time) {
    status.end_time = Now();  // GPUs were held by the pods that were placed
  } else {
    status.start_time.reset();  // nothing ever ran: nothing to charge
  }
  record->final_status = status;
  record->log_complete = true;
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, *record));
  return status;
}

Result<JobStatus> KubeRayLauncher::Finish(JobRecord* record, const JobStatus& status,
                                          Kubectl& kubectl) {
  // The log first: once the final status is recorded, nothing asks the cluster again.
  ATTUNE_RETURN_IF_ERROR(KeepLogCopy(record, true, kubectl));
  record->final_status = status;
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, *record));
  return status;
}

Result<JobStatus> KubeRayLauncher::Vanished(const std::string& name,
                                            std::optional<JobRecord> record) {
  JobStatus s;
  s.name = name;
  if (!record || (!record->created && !record->seen)) {
    if (record) {
      s.reason = "an earlier submission of '" + name + "' was interrupted before the API server "
                 "had the RayJob";
    }
    return s;  // kUnknown: never submitted
  }
  s.launcher_job_id = record->namespace_ + "/" + record->k8s_name;
  s.devices = record->gpus > 0 ? record->gpus : record->devices;
  s.start_time = record->start_time;
  if (record->cancel_requested) {
    s.state = JobState::kCancelled;
    s.reason = "RayJob " + record->k8s_name + " was deleted by attune (cancelled)";
    if (s.start_time) s.end_time = std::max(*s.start_time, record->cancel_time);
  } else {
    s.state = JobState::kFailed;
    s.reason = "RayJob " + record->k8s_name + " in namespace " + record->namespace_ +
               " was deleted by someone else before it finished";
    if (s.start_time) s.end_time = std::max(*s.start_time, record->last_seen_time);
  }
  record->final_status = s;
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, *record));
  return s;
}

Result<JobStatus> KubeRayLauncher::Poll(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, LoadRecord(state_dir_, name));
  if (record && record->final_status) return *record->final_status;
  ATTUNE_ASSIGN_OR_RETURN(std::optional<Json> found, Find(IdentityOf(name, record), kubectl_));
  if (!found) return Vanished(name, std::move(record));
  if (!record) record = Adopt(name, *found);
  return Observe(&*record, *found, kubectl_);
}

Result<JobRecord> KubeRayLauncher::SubmitNew(const JobSpec& spec, const KubeRayOptions& o,
                                             const JobIdentity& id) {
  ATTUNE_ASSIGN_OR_RETURN(RenderedRayJob rendered, RenderRayJob(spec, o, id));
  Kubectl kubectl = MakeKubectl(o);
  ATTUNE_ASSIGN_OR_RETURN(std::optional<Json> same_name, kubectl.GetRayJob(id.k8s_name));
  if (same_name) {
    return Status::FailedPrecondition(
        "kuberay launcher: namespace " + o.namespace_ + " already has a RayJob named " +
        id.k8s_name + " that this campaign did not create (its attune.owner/attune.job labels "
        "differ); attune never touches it. Delete it or use another namespace or campaign "
        "directory");
  }
  JobRecord r;
  r.name = spec.name;
  r.k8s_name = id.k8s_name;
  r.namespace_ = o.namespace_;
  r.owner = id.owner;
  r.job_hash = id.job_hash;
  r.job_dir = spec.job_dir.empty() ? (fs::path(state_dir_) / spec.name).string() : spec.job_dir;
  r.log_path = spec.log_path.empty() ? (fs::path(r.job_dir) / "job.log").string() : spec.log_path;
  r.manifest_path = (fs::path(r.job_dir) / "rayjob.yaml").string();
  r.submission_mode = SubmissionModeName(o.submission_mode);
  r.devices = spec.devices;
  r.gpus = rendered.gpus;
  r.intent_time = Now();
  ATTUNE_RETURN_IF_ERROR(WriteFileAtomically(r.manifest_path, ToYaml(rendered.manifest)));
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, r));  // the intent, before the cluster has it
  auto applied = kubectl.Apply(r.manifest_path);
  if (!applied.ok()) {
    if (applied.status().code() != StatusCode::kUnavailable) return applied.status();
    return applied.status().WithContext("job '" + spec.name + "' may or may not exist now; the "
                                        "next Submit or Poll finds it by label");
  }
  if (applied->find(" created") != std::string::npos) {
    r.created = true;
    ATTUNE_RETURN_IF_ERROR(AppendLine((fs::path(state_dir_) / "submissions.log").string(),
                                      spec.name + " " + id.k8s_name + " " +
                                          std::to_string(static_cast<long long>(Now()))));
  }
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, r));
  return r;
}

Result<JobStatus> KubeRayLauncher::Submit(const JobSpec& spec) {
  ATTUNE_ASSIGN_OR_RETURN(KubeRayOptions o, ParseKubeRayOptions(spec.options, options_));
  ATTUNE_ASSIGN_OR_RETURN(JobStatus existing, Poll(spec.name));
  if (existing.state != JobState::kUnknown) return existing;
  ATTUNE_RETURN_IF_ERROR(SubmitNew(spec, o, IdentifyJob(spec.name, campaign_id_, owner_)).status());
  return Poll(spec.name);
}

Result<std::optional<std::string>> KubeRayLauncher::FetchLog(const JobRecord& record,
                                                             Kubectl& kubectl) {
  std::string pod, container;
  if (record.submission_mode == "SidecarMode") {
    JobIdentity id = IdentifyJob(record.name, campaign_id_, record.owner);
    ATTUNE_ASSIGN_OR_RETURN(std::vector<Json> heads,
                            kubectl.ListPods(LabelSelector(id) + ",ray.io/node-type=head"));
    if (const Json* head = Newest(heads)) pod = Str(Field(*head, "metadata"), "name");
    container = "ray-job-submitter";
  } else {
    ATTUNE_ASSIGN_OR_RETURN(std::vector<Json> submitters,
                            kubectl.ListPods("ray.io/originated-from-crd=RayJob,"
                                             "ray.io/originated-from-cr-name=" + record.k8s_name));
    if (const Json* sub = Newest(submitters)) pod = Str(Field(*sub, "metadata"), "name");
  }
  if (pod.empty()) return std::optional<std::string>();
  auto text = kubectl.Logs(pod, container);
  if (text.ok()) return std::optional<std::string>(*text);
  // Gone, or not started yet ("waiting to start"): no log to give.
  if (text.status().code() == StatusCode::kNotFound ||
      text.status().code() == StatusCode::kInvalidArgument) {
    return std::optional<std::string>();
  }
  return text.status();
}

Status KubeRayLauncher::KeepLogCopy(JobRecord* record, bool finished, Kubectl& kubectl) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<std::string> text, FetchLog(*record, kubectl));
  if (!text) return Status::Ok();
  ATTUNE_RETURN_IF_ERROR(WriteFileAtomically(record->log_path, *text));
  if (finished) record->log_complete = true;
  return Status::Ok();
}

// Pod exec and `kubectl cp` would need the pods alive (they go ttl_seconds_after_finished after the
// end), a `tar` in the image, the traces on the pod kubectl reaches (slime's ranks are on workers)
// and the RBAC verb pods/exec; the job's log cannot carry them either (kubelet rotates container
// logs at 10 MiB by default, and traces are larger). A volume shared with this machine is what
// real clusters offer for a campaign's files, so that is the requirement (docs/kuberay.md).
Result<std::vector<std::string>> KubeRayLauncher::FetchFiles(const std::string& name, const std::string& remote_dir,
                                                             const std::string& local_dir) {
  (void)name;
  (void)local_dir;
  ATTUNE_RETURN_IF_ERROR(CheckSharedFolder(options_, remote_dir));
  return std::vector<std::string>{};
}

Result<std::string> KubeRayLauncher::ReadLog(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, LoadRecord(state_dir_, name));
  if (!record) return std::string();
  if (!record->log_complete) {
    ATTUNE_RETURN_IF_ERROR(KeepLogCopy(&*record, record->final_status.has_value(), kubectl_));
    if (record->log_complete) ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, *record));
  }
  return ReadFile(record->log_path);
}

Status KubeRayLauncher::Cancel(const std::string& name) {
  ATTUNE_ASSIGN_OR_RETURN(std::optional<JobRecord> record, LoadRecord(state_dir_, name));
  if (record && record->final_status) return Status::Ok();
  ATTUNE_ASSIGN_OR_RETURN(std::optional<Json> found, Find(IdentityOf(name, record), kubectl_));
  if (!found) return Status::Ok();  // nothing in the cluster; Poll says what became of it
  if (!record) record = Adopt(name, *found);
  JobStatus now = MapRayJob(name, *found, PodEvidence{}, record->gpus);
  if (IsTerminal(now.state)) return Status::Ok();
  // Recorded before the delete, so that a RayJob gone after a crash counts as cancelled.
  record->cancel_requested = true;
  record->cancel_time = Now();
  ATTUNE_RETURN_IF_ERROR(SaveRecord(state_dir_, *record));
  Status kept = KeepLogCopy(&*record, false, kubectl_);
  if (!kept.ok() && env_.log) env_.log(LogLevel::kWarn, "kuberay: " + kept.message());
  return kubectl_.DeleteRayJob(record->k8s_name);
}

Result<std::unique_ptr<Plugin>> CreateKubeRayLauncher(const PluginContext& context) {
  const bool tool_only = context.campaign_dir.empty() &&
                         (context.config.is_null() || context.config.empty());
  KubeRayOptions options;
  if (!tool_only) {
    ATTUNE_ASSIGN_OR_RETURN(options, ParseKubeRayOptions(context.config));
  }
  std::string state_dir = options.state_dir;
  if (state_dir.empty() && !context.campaign_dir.empty()) {
    state_dir = (fs::path(context.campaign_dir) / "kuberay").string();
  }
  if (state_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    state_dir =
        (fs::path(tmp ? tmp : "/tmp") / ("attune-kuberay-" + std::to_string(getuid()))).string();
  }
  return std::unique_ptr<Plugin>(new KubeRayLauncher(std::move(options), std::move(state_dir),
                                                     CampaignIdOf(context.campaign_dir),
                                                     context.attune_binary,
                                                     SystemEnv(context.log)));
}

}  // namespace attune::kuberay
