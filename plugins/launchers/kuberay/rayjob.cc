// Copyright attune authors.
#include "rayjob.h"

#include <cctype>
#include <cmath>
#include <regex>

#include "attune/hash.h"
#include "attune/recipe.h"
#include "torchrun_driver.h"

namespace attune::kuberay {
namespace {

using Json = nlohmann::json;

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string TrimToAlnum(std::string s) {
  while (!s.empty() && !IsAlnum(s.back())) s.pop_back();
  size_t start = 0;
  while (start < s.size() && !IsAlnum(s[start])) ++start;
  return s.substr(start);
}

// The argv without a leading `ray job submit [options] --`.
std::vector<std::string> WithoutRaySubmit(const std::vector<std::string>& argv) {
  if (argv.size() < 3 || argv[0] != "ray" || argv[1] != "job" || argv[2] != "submit") return argv;
  for (size_t i = 3; i < argv.size(); ++i) {
    if (argv[i] == "--") return {argv.begin() + static_cast<long>(i) + 1, argv.end()};
  }
  return argv;
}

Json PairsToObject(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json out = Json::object();
  for (const auto& [k, v] : pairs) out[k] = v;
  return out;
}

Json RuntimeEnvYaml(const JobSpec& spec, const KubeRayOptions& o) {
  Json env_vars = PairsToObject(o.env);
  for (const auto& [k, v] : spec.launch.env) env_vars[k] = v;  // the stack's win
  Json runtime = Json::object();
  if (!env_vars.empty()) runtime["env_vars"] = env_vars;
  if (!o.working_dir.empty()) runtime["working_dir"] = o.working_dir;
  return runtime;
}

Json Resources(const std::string& cpu, const std::string& memory, int gpus,
               const std::string& gpu_resource) {
  Json amounts{{"cpu", cpu}, {"memory", memory}};
  if (gpus > 0) amounts[gpu_resource] = gpus;
  return {{"limits", amounts}, {"requests", amounts}};
}

// The pod template shared by head and workers: one Ray container plus the options' volumes,
// scheduling constraints and identity.
Json PodTemplate(const KubeRayOptions& o, const JobIdentity& id, const std::string& container,
                 Json resources) {
  Json c{{"name", container}, {"image", o.image}, {"resources", std::move(resources)}};
  if (!o.image_pull_policy.empty()) c["imagePullPolicy"] = o.image_pull_policy;
  Json mounts = Json::array(), volumes = Json::array();
  for (const auto& v : o.volumes) {
    mounts.push_back({{"name", v.name}, {"mountPath", v.mount_path}, {"readOnly", v.read_only}});
    Json volume{{"name", v.name}};
    if (!v.pvc.empty()) volume["persistentVolumeClaim"] = {{"claimName", v.pvc}, {"readOnly", v.read_only}};
    if (!v.host_path.empty()) volume["hostPath"] = {{"path", v.host_path}};
    if (!v.config_map.empty()) volume["configMap"] = {{"name", v.config_map}};
    if (!v.secret.empty()) volume["secret"] = {{"secretName", v.secret}};
    if (v.empty_dir) volume["emptyDir"] = Json::object();
    volumes.push_back(volume);
  }
  if (!o.shm_size.empty()) {
    mounts.push_back({{"name", "dshm"}, {"mountPath", "/dev/shm"}});
    volumes.push_back({{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", o.shm_size}}}});
  }
  if (!mounts.empty()) c["volumeMounts"] = mounts;
  Json pod{{"containers", Json::array({c})}};
  if (!volumes.empty()) pod["volumes"] = volumes;
  if (!o.node_selector.empty()) pod["nodeSelector"] = PairsToObject(o.node_selector);
  if (!o.tolerations.empty()) pod["tolerations"] = o.tolerations;
  if (!o.service_account.empty()) pod["serviceAccountName"] = o.service_account;
  if (!o.image_pull_secrets.empty()) {
    Json secrets = Json::array();
    for (const auto& s : o.image_pull_secrets) secrets.push_back({{"name", s}});
    pod["imagePullSecrets"] = secrets;
  }
  Json labels{{"attune.owner", id.owner}, {"attune.job-hash", id.job_hash}};
  return {{"metadata", {{"labels", labels}}}, {"spec", pod}};
}

Json Metadata(const KubeRayOptions& o, const JobIdentity& id) {
  Json labels = PairsToObject(o.labels);
  labels["attune.owner"] = id.owner;
  labels["attune.job-hash"] = id.job_hash;
  labels["attune.campaign"] = id.campaign;
  labels["attune.candidate"] = id.candidate;
  labels["attune.attempt"] = id.attempt;
  Json annotations = PairsToObject(o.annotations);
  annotations["attune.job"] = id.job;
  return {{"name", id.k8s_name}, {"namespace", o.namespace_}, {"labels", labels},
          {"annotations", annotations}};
}

struct Shape {
  bool workers = false;
  int head_gpus = 0;
  int replicas = 0;
  int gpus_per_worker = 0;
};

Result<Shape> ResolveShape(const JobSpec& spec, const KubeRayOptions& o) {
  // The engine's request (Stack::Devices on JobNodes nodes): slime's rollout engines add GPUs and
  // nodes beyond the training topology. A spec without one falls back to the topology.
  const int nodes = std::max(1, spec.nodes > 0 ? spec.nodes : spec.recipe.topology.nodes);
  const int per_node = spec.devices > 0 ? std::max(1, (spec.devices + nodes - 1) / nodes)
                                        : std::max(1, spec.recipe.topology.gpus_per_node);
  Shape s;
  s.workers = o.layout == Layout::kWorkers || (o.layout == Layout::kAuto && nodes > 1);
  if (!s.workers) {
    if (nodes > 1) {
      return Status::InvalidArgument(
          "kuberay launcher: layout 'head' puts the job on one pod, but the recipe has " +
          std::to_string(nodes) + " nodes; use layout 'workers' (one worker pod per node; torchrun "
          "recipes then run under the launcher's Ray driver) or a single-node recipe");
    }
    s.head_gpus = o.head_gpus >= 0 ? o.head_gpus : per_node;
    return s;
  }
  s.head_gpus = std::max(0, o.head_gpus);
  s.replicas = nodes;
  s.gpus_per_worker = o.gpus_per_worker >= 0 ? o.gpus_per_worker : per_node;
  return s;
}

Json ClusterSpec(const KubeRayOptions& o, const JobIdentity& id, const Shape& s) {
  Json params = PairsToObject(o.ray_start_params);
  Json head{{"rayStartParams", params},
            {"template", PodTemplate(o, id, "ray-head",
                                     Resources(o.head_cpu, o.head_memory, s.head_gpus,
                                               o.gpu_resource))}};
  Json cluster{{"headGroupSpec", head}};
  if (s.workers) {
    Json group{{"groupName", o.worker_group},
               {"replicas", s.replicas},
               {"minReplicas", s.replicas},
               {"maxReplicas", s.replicas},
               {"rayStartParams", params},
               {"template", PodTemplate(o, id, "ray-worker",
                                        Resources(o.worker_cpu, o.worker_memory,
                                                  s.gpus_per_worker, o.gpu_resource))}};
    cluster["workerGroupSpecs"] = Json::array({group});
  }
  return cluster;
}

// -- YAML --------------------------------------------------------------------------------------

const std::regex kPlainKey(R"(^[A-Za-z_][A-Za-z0-9_./-]*$)");

bool PlainKeyOk(const std::string& key) {
  static const char* kReserved[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"};
  std::string lower;
  for (char c : key) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (const char* r : kReserved) {
    if (lower == r) return false;
  }
  return std::regex_match(key, kPlainKey);
}

std::string Key(const std::string& key) { return PlainKeyOk(key) ? key : Json(key).dump(); }

// A literal block keeps multi-line text readable; only text that a block reproduces exactly
// (no CR, no tabs, no trailing spaces, no leading space, at most one final newline) gets one.
bool BlockOk(const std::string& s) {
  if (s.find('\n') == std::string::npos || s.find('\r') != std::string::npos ||
      s.find('\t') != std::string::npos || s.empty() || s[0] == ' ' || s[0] == '\n') {
    return false;
  }
  if (s.size() >= 2 && s[s.size() - 1] == '\n' && s[s.size() - 2] == '\n') return false;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == ' ' && s[i + 1] == '\n') return false;
  }
  if (s.back() == ' ') return false;
  for (unsigned char c : s) {
    if (c < 0x20 && c != '\n') return false;
  }
  return true;
}

std::string Scalar(const Json& v, const std::string& indent) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (!BlockOk(s)) return Json(s).dump();
    std::string out = s.back() == '\n' ? "|" : "|-";
    size_t start = 0;
    while (start < s.size()) {
      size_t end = s.find('\n', start);
      if (end == std::string::npos) end = s.size();
      std::string line = s.substr(start, end - start);
      out += "\n" + (line.empty() ? "" : indent + "  " + line);
      start = end + 1;
    }
    return out;
  }
  return v.dump();
}

bool IsEmptyContainer(const Json& v) { return (v.is_object() || v.is_array()) && v.empty(); }

void Emit(const Json& v, const std::string& indent, std::string* out);

void EmitObject(const Json& v, const std::string& indent, std::string* out) {
  for (const auto& [k, item] : v.items()) {
    *out += indent + Key(k) + ":";
    if (item.is_object() && !item.empty()) {
      *out += "\n";
      Emit(item, indent + "  ", out);
    } else if (item.is_array() && !item.empty()) {
      *out += "\n";
      Emit(item, indent, out);
    } else {
      *out += " " + (IsEmptyContainer(item) ? item.dump() : Scalar(item, indent)) + "\n";
    }
  }
}

void EmitArray(const Json& v, const std::string& indent, std::string* out) {
  for (const auto& item : v) {
    if ((item.is_object() || item.is_array()) && !item.empty()) {
      std::string nested;
      Emit(item, indent + "  ", &nested);
      // The item's first line starts after "- " instead of its indentation.
      *out += indent + "- " + nested.substr(indent.size() + 2);
    } else {
      *out += indent + "- " + (IsEmptyContainer(item) ? item.dump() : Scalar(item, indent)) + "\n";
    }
  }
}

void Emit(const Json& v, const std::string& indent, std::string* out) {
  if (v.is_object()) return EmitObject(v, indent, out);
  if (v.is_array()) return EmitArray(v, indent, out);
  *out += indent + Scalar(v, indent) + "\n";
}

}  // namespace

std::string KubernetesName(const std::string& job, const std::string& owner) {
  std::string name;
  for (char c : job) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) {
      name.push_back(l);
    } else if (!name.empty() && name.back() != '-') {
      name.push_back('-');
    }
  }
  if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) name = "j-" + name;
  // The suffix keeps apart jobs whose cleaned-up names agree, and equal job names of campaigns
  // with different owners.
  const std::string suffix = "-" + Sha256Hex(owner + "/" + job).substr(0, 6);
  name = name.substr(0, std::min(name.size(), kMaxRayJobName - suffix.size()));
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name + suffix;
}

std::string LabelValue(const std::string& text) {
  std::string out;
  for (char c : text) {
    out.push_back(IsAlnum(c) || c == '-' || c == '_' || c == '.' ? c : '-');
  }
  out = TrimToAlnum(out);
  if (out.size() > 63) out = TrimToAlnum(out.substr(0, 63));
  return out;
}

JobIdentity IdentifyJob(const std::string& job, const std::string& campaign_id,
                        const std::string& owner) {
  JobIdentity id;
  id.job = job;
  id.k8s_name = KubernetesName(job, owner);
  id.owner = owner;
  id.job_hash = Sha256Hex(job).substr(0, 16);
  std::string rest = job;
  if (!campaign_id.empty() && job.rfind(campaign_id + "-", 0) == 0) {
    id.campaign = LabelValue(campaign_id);
    rest = job.substr(campaign_id.size() + 1);
  }
  size_t dash = rest.rfind('-');
  if (dash != std::string::npos && dash + 1 < rest.size() &&
      rest.find_first_not_of("0123456789", dash + 1) == std::string::npos) {
    id.attempt = rest.substr(dash + 1);
    rest = rest.substr(0, dash);
  }
  id.candidate = LabelValue(rest);
  return id;
}

std::string LabelSelector(const JobIdentity& id) {
  return "attune.owner=" + id.owner + ",attune.job-hash=" + id.job_hash;
}

Result<std::string> Entrypoint(const LaunchSpec& launch) {
  std::vector<std::string> argv = WithoutRaySubmit(launch.argv);
  if (argv.empty()) return Status::InvalidArgument("kuberay launcher: the stack rendered no command");
  std::string command = ShellCommand({}, argv);
  if (!launch.workdir.empty()) command = "cd " + ShellQuote(launch.workdir) + " && " + command;
  return command;
}

namespace {

// The entrypoint for `shape`: the stack's command, or with the GPUs on worker pods a torchrun
// command under the Ray driver that starts one torchrun per worker (torchrun_driver.h).
Result<std::string> EntrypointFor(const LaunchSpec& launch, const Shape& shape) {
  const std::vector<std::string> argv = WithoutRaySubmit(launch.argv);
  if (shape.workers && !argv.empty() && argv[0].substr(argv[0].rfind('/') + 1) == "deepspeed") {
    return Status::InvalidArgument(
        "kuberay launcher: the recipe launches with deepspeed, which runs where the RayJob's "
        "entrypoint runs (the head pod) and reaches other nodes over ssh with a hostfile, but "
        "layout 'workers' puts the GPUs on worker pods; launch the recipe with torchrun (it then "
        "runs under the launcher's Ray driver, one torchrun per worker pod), or run a one-node "
        "recipe with layout 'head'");
  }
  if (!shape.workers || !IsTorchrun(argv)) return Entrypoint(launch);
  LaunchSpec driven = launch;
  ATTUNE_ASSIGN_OR_RETURN(driven.argv, TorchrunOnRay(argv, shape.replicas, shape.gpus_per_worker));
  return Entrypoint(driven);
}

}  // namespace

Result<RenderedRayJob> RenderRayJob(const JobSpec& spec, const KubeRayOptions& o,
                                    const JobIdentity& id) {
  ATTUNE_ASSIGN_OR_RETURN(Shape shape, ResolveShape(spec, o));
  ATTUNE_ASSIGN_OR_RETURN(std::string entrypoint, EntrypointFor(spec.launch, shape));
  Json job_spec{{"entrypoint", entrypoint},
                {"submissionMode", SubmissionModeName(o.submission_mode)},
                {"shutdownAfterJobFinishes", o.shutdown_after_job_finishes},
                {"ttlSecondsAfterFinished", o.ttl_seconds_after_finished},
                {"backoffLimit", 0},
                {"rayClusterSpec", ClusterSpec(o, id, shape)}};
  Json runtime = RuntimeEnvYaml(spec, o);
  if (!runtime.empty()) job_spec["runtimeEnvYAML"] = ToYaml(runtime);
  if (spec.time_limit_s > 0) {
    // KubeRay counts from the RayJob's start (Initializing); whole seconds, rounded up.
    job_spec["activeDeadlineSeconds"] =
        static_cast<int>(std::min(2147483647.0, std::ceil(spec.time_limit_s)));
  }
  RenderedRayJob out;
  out.manifest = {{"apiVersion", "ray.io/v1"},
                  {"kind", "RayJob"},
                  {"metadata", Metadata(o, id)},
                  {"spec", job_spec}};
  out.head_gpus = shape.head_gpus;
  out.worker_replicas = shape.replicas;
  out.gpus_per_worker = shape.gpus_per_worker;
  out.gpus = shape.head_gpus + shape.replicas * shape.gpus_per_worker;
  return out;
}

std::string ToYaml(const nlohmann::json& doc) {
  std::string out;
  Emit(doc, "", &out);
  return out;
}

}  // namespace attune::kuberay
