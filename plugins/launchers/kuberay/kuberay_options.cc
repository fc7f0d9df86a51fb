// Copyright attune authors.
#include "kuberay_options.h"

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "attune/support/json_schema.h"
#include "attune/support/names.h"
#include "options_schema.h"

namespace attune::kuberay {
namespace {

using Json = nlohmann::json;
using Setter = std::function<Status(const Json&, KubeRayOptions*)>;
using Pairs = std::vector<std::pair<std::string, std::string>>;

const std::regex kQuantity(R"(^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$)");
const std::regex kLabelName(R"(^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$)");
const std::regex kLabelValue(R"(^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$)");
const std::regex kDns1123Label(R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?$)");
const std::regex kEnvName(R"(^[A-Za-z_][A-Za-z0-9_]*$)");

Status Bad(const std::string& key, const std::string& expected, const Json& found) {
  return Status::InvalidArgument("kuberay launcher option '" + key + "': expected " + expected +
                                 ", found " + found.dump());
}

Setter String(std::string KubeRayOptions::*field, std::string key) {
  return [field, key](const Json& v, KubeRayOptions* o) -> Status {
    if (!v.is_string()) return Bad(key, "a string", v);
    o->*field = v.get<std::string>();
    return Status::Ok();
  };
}

Setter Quantity(std::string KubeRayOptions::*field, std::string key) {
  return [field, key](const Json& v, KubeRayOptions* o) -> Status {
    std::string text = v.is_number() ? v.dump() : v.is_string() ? v.get<std::string>() : "";
    if (!std::regex_match(text, kQuantity)) {
      return Bad(key, "a Kubernetes quantity such as \"8\", \"500m\" or \"64Gi\"", v);
    }
    o->*field = text;
    return Status::Ok();
  };
}

Setter Int(int KubeRayOptions::*field, std::string key, int min, int max) {
  return [=](const Json& v, KubeRayOptions* o) -> Status {
    if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > max) {
      return Bad(key, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                 v);
    }
    o->*field = v.get<int>();
    return Status::Ok();
  };
}

Setter Seconds(double KubeRayOptions::*field, std::string key, double min) {
  return [=](const Json& v, KubeRayOptions* o) -> Status {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min) {
      return Bad(key, "a number of seconds >= " + Json(min).dump(), v);
    }
    o->*field = v.get<double>();
    return Status::Ok();
  };
}

Setter Bool(bool KubeRayOptions::*field, std::string key) {
  return [field, key](const Json& v, KubeRayOptions* o) -> Status {
    if (!v.is_boolean()) return Bad(key, "true or false", v);
    o->*field = v.get<bool>();
    return Status::Ok();
  };
}

Setter Strings(std::vector<std::string> KubeRayOptions::*field, std::string key) {
  return [field, key](const Json& v, KubeRayOptions* o) -> Status {
    if (!v.is_array()) return Bad(key, "a list of strings", v);
    std::vector<std::string> out;
    for (const auto& item : v) {
      if (!item.is_string()) return Bad(key, "a list of strings", v);
      out.push_back(item.get<std::string>());
    }
    o->*field = std::move(out);
    return Status::Ok();
  };
}

// A map of strings; numbers and booleans are written as YAML would read them back.
Setter Map(Pairs KubeRayOptions::*field, std::string key, const std::regex* key_rule,
           const std::regex* value_rule, std::string key_words) {
  return [=](const Json& v, KubeRayOptions* o) -> Status {
    if (!v.is_object()) return Bad(key, "a map NAME: value", v);
    Pairs out;
    for (const auto& [k, value] : v.items()) {
      if (key_rule && !std::regex_match(k, *key_rule)) {
        return Status::InvalidArgument("kuberay launcher option '" + key + "': '" + k +
                                       "' is not " + key_words);
      }
      if (!value.is_string() && !value.is_number() && !value.is_boolean()) {
        return Bad(key + "." + k, "a string or number", value);
      }
      std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      if (value_rule && !std::regex_match(text, *value_rule)) {
        return Bad(key + "." + k, "a label value (at most 63 letters, digits, '-', '_', '.')",
                   value);
      }
      out.emplace_back(k, text);
    }
    o->*field = std::move(out);
    return Status::Ok();
  };
}

Status SetNamespace(const Json& v, KubeRayOptions* o) {
  if (!v.is_string() || !std::regex_match(v.get<std::string>(), kDns1123Label) ||
      v.get<std::string>().size() > 63) {
    return Bad("namespace", "a Kubernetes namespace name (lowercase letters, digits, '-')", v);
  }
  o->namespace_ = v.get<std::string>();
  return Status::Ok();
}

Status SetLayout(const Json& v, KubeRayOptions* o) {
  static const std::map<std::string, Layout> kNames{
      {"auto", Layout::kAuto}, {"head", Layout::kHead}, {"workers", Layout::kWorkers}};
  if (!v.is_string() || !kNames.count(v.get<std::string>())) {
    return Bad("layout", "one of auto, head, workers", v);
  }
  o->layout = kNames.at(v.get<std::string>());
  return Status::Ok();
}

Status SetSubmissionMode(const Json& v, KubeRayOptions* o) {
  if (v == "K8sJobMode") {
    o->submission_mode = SubmissionMode::kK8sJob;
  } else if (v == "SidecarMode") {
    o->submission_mode = SubmissionMode::kSidecar;
  } else {
    return Bad("submission_mode",
               "K8sJobMode or SidecarMode (the modes whose driver output kubectl logs can read; "
               "HTTPMode and InteractiveMode keep it inside Ray)",
               v);
  }
  return Status::Ok();
}

Status UnknownKey(const std::string& where, const std::string& key,
                  const std::vector<std::string>& known) {
  std::string nearest = support::NearestName(key, known);
  return Status::InvalidArgument("kuberay launcher option '" + where + "': unknown key '" + key +
                                 "'" + (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                                 "; see docs/kuberay.md");
}

Status ParseVolume(const Json& v, size_t index, VolumeOption* out) {
  const std::string where = "volumes[" + std::to_string(index) + "]";
  static const std::vector<std::string> kKeys{"name",   "mount_path", "pvc",       "host_path",
                                              "config_map", "secret", "empty_dir", "read_only"};
  if (!v.is_object()) return Bad(where, "a map with name, mount_path and one source", v);
  for (const auto& [k, value] : v.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) return UnknownKey(where, k, kKeys);
    bool is_bool = k == "empty_dir" || k == "read_only";
    if (is_bool ? !value.is_boolean() : !value.is_string()) {
      return Bad(where + "." + k, is_bool ? "true or false" : "a string", value);
    }
  }
  out->name = v.value("name", "");
  out->mount_path = v.value("mount_path", "");
  out->pvc = v.value("pvc", "");
  out->host_path = v.value("host_path", "");
  out->config_map = v.value("config_map", "");
  out->secret = v.value("secret", "");
  out->empty_dir = v.value("empty_dir", false);
  out->read_only = v.value("read_only", false);
  if (!std::regex_match(out->name, kDns1123Label)) {
    return Bad(where + ".name", "a DNS-1123 label (lowercase letters, digits, '-')", v["name"]);
  }
  if (out->mount_path.empty() || out->mount_path[0] != '/') {
    return Bad(where + ".mount_path", "an absolute path", v.value("mount_path", Json()));
  }
  int sources = !out->pvc.empty() + !out->host_path.empty() + !out->config_map.empty() +
                !out->secret.empty() + out->empty_dir;
  if (sources != 1) {
    return Status::InvalidArgument("kuberay launcher option '" + where +
                                   "': give exactly one source of pvc, host_path, config_map, "
                                   "secret, empty_dir (found " + std::to_string(sources) + ")");
  }
  return Status::Ok();
}

Status SetVolumes(const Json& v, KubeRayOptions* o) {
  if (!v.is_array()) return Bad("volumes", "a list of volumes", v);
  std::vector<VolumeOption> out(v.size());
  std::set<std::string> names;
  for (size_t i = 0; i < v.size(); ++i) {
    ATTUNE_RETURN_IF_ERROR(ParseVolume(v[i], i, &out[i]));
    if (!names.insert(out[i].name).second) {
      return Status::InvalidArgument("kuberay launcher option 'volumes': the name '" +
                                     out[i].name + "' is used twice");
    }
  }
  o->volumes = std::move(out);
  return Status::Ok();
}

// Kubernetes tolerations, checked field by field (the API server would refuse them later, after
// budget was reserved).
Status SetTolerations(const Json& v, KubeRayOptions* o) {
  static const std::vector<std::string> kKeys{"key", "operator", "value", "effect",
                                              "tolerationSeconds"};
  if (!v.is_array()) return Bad("tolerations", "a list of tolerations", v);
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "tolerations[" + std::to_string(i) + "]";
    if (!v[i].is_object()) return Bad(where, "a map (key, operator, value, effect)", v[i]);
    for (const auto& [k, value] : v[i].items()) {
      if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) return UnknownKey(where, k, kKeys);
      if (k == "tolerationSeconds" ? !value.is_number_integer() : !value.is_string()) {
        return Bad(where + "." + k, k == "tolerationSeconds" ? "an integer" : "a string", value);
      }
    }
    std::string op = v[i].value("operator", "Equal");
    if (op != "Equal" && op != "Exists") return Bad(where + ".operator", "Equal or Exists", v[i]["operator"]);
    std::string effect = v[i].value("effect", "");
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" &&
        effect != "NoExecute") {
      return Bad(where + ".effect", "NoSchedule, PreferNoSchedule or NoExecute", v[i]["effect"]);
    }
  }
  o->tolerations = v;
  return Status::Ok();
}

const std::map<std::string, Setter>& Setters() {
  using O = KubeRayOptions;
  static const auto* setters = new std::map<std::string, Setter>{
      {"namespace", SetNamespace},
      {"kubectl", String(&O::kubectl, "kubectl")},
      {"kubeconfig", String(&O::kubeconfig, "kubeconfig")},
      {"context", String(&O::context, "context")},
      {"request_timeout_s", Seconds(&O::request_timeout_s, "request_timeout_s", 1)},
      {"api_retries", Int(&O::api_retries, "api_retries", 0, 100)},
      {"api_backoff_s", Seconds(&O::api_backoff_s, "api_backoff_s", 0)},
      {"api_backoff_max_s", Seconds(&O::api_backoff_max_s, "api_backoff_max_s", 0)},
      {"image", String(&O::image, "image")},
      {"image_pull_policy", String(&O::image_pull_policy, "image_pull_policy")},
      {"image_pull_secrets", Strings(&O::image_pull_secrets, "image_pull_secrets")},
      {"service_account", String(&O::service_account, "service_account")},
      {"layout", SetLayout},
      {"head_cpu", Quantity(&O::head_cpu, "head_cpu")},
      {"head_memory", Quantity(&O::head_memory, "head_memory")},
      {"head_gpus", Int(&O::head_gpus, "head_gpus", -1, 1024)},
      {"worker_group", String(&O::worker_group, "worker_group")},
      {"worker_cpu", Quantity(&O::worker_cpu, "worker_cpu")},
      {"worker_memory", Quantity(&O::worker_memory, "worker_memory")},
      {"gpus_per_worker", Int(&O::gpus_per_worker, "gpus_per_worker", -1, 1024)},
      {"gpu_resource", String(&O::gpu_resource, "gpu_resource")},
      {"shm_size", Quantity(&O::shm_size, "shm_size")},
      {"node_selector", Map(&O::node_selector, "node_selector", &kLabelName, &kLabelValue,
                            "a label name")},
      {"tolerations", SetTolerations},
      {"volumes", SetVolumes},
      {"ray_start_params", Map(&O::ray_start_params, "ray_start_params", nullptr, nullptr, "")},
      {"labels", Map(&O::labels, "labels", &kLabelName, &kLabelValue, "a label name")},
      {"annotations", Map(&O::annotations, "annotations", &kLabelName, nullptr,
                          "an annotation name")},
      {"submission_mode", SetSubmissionMode},
      {"env", Map(&O::env, "env", &kEnvName, nullptr, "an environment variable name")},
      {"working_dir", String(&O::working_dir, "working_dir")},
      {"shutdown_after_job_finishes",
       Bool(&O::shutdown_after_job_finishes, "shutdown_after_job_finishes")},
      {"ttl_seconds_after_finished",
       Int(&O::ttl_seconds_after_finished, "ttl_seconds_after_finished", 0, 1 << 30)},
      {"poll_interval_s", Seconds(&O::poll_interval_s, "poll_interval_s", 0.01)},
      {"unschedulable_timeout_s", Seconds(&O::unschedulable_timeout_s, "unschedulable_timeout_s", 0)},
      {"image_pull_timeout_s", Seconds(&O::image_pull_timeout_s, "image_pull_timeout_s", 0)},
      {"state_dir", String(&O::state_dir, "state_dir")},
      {"device_type", String(&O::device_type, "device_type")},
      {"device_memory_gib", Seconds(&O::device_memory_gib, "device_memory_gib", 0)},
      {"peak_tflops", Seconds(&O::peak_tflops, "peak_tflops", 0)},
      {"compute_capability_major",
       Int(&O::compute_capability_major, "compute_capability_major", 0, 100)},
      {"devices_per_node", Int(&O::devices_per_node, "devices_per_node", 1, 1024)},
      {"max_nodes", Int(&O::max_nodes, "max_nodes", 1, 100000)},
  };
  return *setters;
}

Status CheckRequired(const KubeRayOptions& o) {
  if (o.namespace_.empty()) {
    return Status::InvalidArgument(
        "kuberay launcher: option 'namespace' is required (the namespace your credentials may "
        "use; every kubectl call is made with -n <namespace>)");
  }
  if (o.image.empty()) {
    return Status::InvalidArgument(
        "kuberay launcher: option 'image' is required (a container image with Ray and your "
        "training code, e.g. rayproject/ray:2.9.0-py310-gpu plus Megatron-LM)");
  }
  if (o.shutdown_after_job_finishes && o.ttl_seconds_after_finished < 2 * o.poll_interval_s) {
    // The RayCluster's pods hold the evidence of a failure (OOMKilled) and, in SidecarMode, the
    // driver's log: they must outlive the poll that sees the end.
    return Status::InvalidArgument(
        "kuberay launcher: 'ttl_seconds_after_finished' (" +
        std::to_string(o.ttl_seconds_after_finished) + ") must be at least twice "
        "'poll_interval_s' (" + Json(o.poll_interval_s).dump() + "), or the RayCluster's pods "
        "(failure evidence, SidecarMode logs) may be gone before attune sees the job end");
  }
  if (o.api_backoff_max_s < o.api_backoff_s) {
    return Status::InvalidArgument(
        "kuberay launcher: 'api_backoff_max_s' must be at least 'api_backoff_s'");
  }
  return Status::Ok();
}

}  // namespace

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kAuto: return "auto";
    case Layout::kHead: return "head";
    case Layout::kWorkers: return "workers";
  }
  return "auto";
}

const char* SubmissionModeName(SubmissionMode mode) {
  return mode == SubmissionMode::kSidecar ? "SidecarMode" : "K8sJobMode";
}

std::vector<std::string> KubeRayOptionKeys() {
  std::vector<std::string> keys;
  for (const auto& [name, setter] : Setters()) keys.push_back(name);
  return keys;
}

Result<KubeRayOptions> ParseKubeRayOptions(const nlohmann::json& config, KubeRayOptions base) {
  if (!config.is_null() && !config.is_object()) {
    return Status::InvalidArgument("kuberay launcher options: expected a map, found " +
                                   config.dump());
  }
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(kOptionsSchema, config, "kuberay launcher"));
  if (config.is_object()) {
    for (const auto& [key, value] : config.items()) {
      auto it = Setters().find(key);
      if (it == Setters().end()) {
        std::string nearest = support::NearestName(key, KubeRayOptionKeys());
        return Status::InvalidArgument(
            "kuberay launcher: unknown option '" + key + "'" +
            (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
            "; see docs/kuberay.md for the options");
      }
      ATTUNE_RETURN_IF_ERROR(it->second(value, &base));
    }
  }
  ATTUNE_RETURN_IF_ERROR(CheckRequired(base));
  return base;
}

namespace {

// True when `dir` is `mount` or lies below it (both lexically normalised; no file system access:
// the paths are the pods' as much as this machine's).
bool IsAtOrBelow(const std::string& dir, const std::string& mount) {
  namespace fs = std::filesystem;
  const fs::path d = fs::path(dir).lexically_normal(), m = fs::path(mount).lexically_normal();
  const fs::path rel = d.lexically_relative(m);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

Status CheckSharedFolder(const KubeRayOptions& options, const std::string& dir) {
  for (const VolumeOption& v : options.volumes) {
    if (v.pvc.empty() && v.host_path.empty()) continue;  // config maps, secrets, emptyDirs stay in the pod
    if (!IsAtOrBelow(dir, v.mount_path)) continue;
    if (v.read_only) {
      return Status::FailedPrecondition("kuberay launcher: volume '" + v.name + "' holds " + dir +
                                        " but is mounted read_only; the job cannot write its files there");
    }
    return Status::Ok();
  }
  return Status::FailedPrecondition(
      "kuberay launcher: a RayJob's pods write " + dir +
      " in their own file system, which this machine cannot read, and kubectl offers no way to copy "
      "files out of a finished RayJob (its pods are deleted after ttl_seconds_after_finished); mount "
      "storage that this machine also sees at the same path: add to the launcher's `volumes` a pvc "
      "(ReadWriteMany) or host_path volume whose mount_path is the campaign directory or a folder "
      "above it, e.g. {name: campaigns, pvc: attune-campaigns, mount_path: /shared/campaigns} with "
      "the campaign under /shared/campaigns (docs/kuberay.md, \"Files a job writes\")");
}

}  // namespace attune::kuberay
