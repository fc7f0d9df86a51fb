// Copyright attune authors.
//
// The RayJob (ray.io/v1, KubeRay v1.7.0) that runs one benchmark job: its identity (name, labels,
// annotations), its manifest rendered from the recipe, the stack's launch and the launcher
// options, and a YAML form for people and `kubectl apply -f`.
//
// Identity. The engine's job name ("<campaign>-<candidate>-<attempt>") may hold characters and
// lengths Kubernetes refuses, and campaign ids repeat across directories (two people's
// `runs/quick` in one namespace), so the RayJob is named by a pure function of the job name and
// the owner: a lowercase DNS-1035 label of at most 47 characters (KubeRay's limit), the job name
// cleaned up and cut to fit, then "-" and 6 hex digits of SHA-256(owner "/" job). It carries:
//   labels      attune.owner     12 hex digits of SHA-256 of the launcher's records directory
//               attune.job-hash  16 hex digits of SHA-256 of the engine's job name
//               attune.campaign, attune.candidate, attune.attempt (for people and selectors)
//   annotation  attune.job       the engine's job name, exactly
// A restarted launcher finds a job with the selector attune.owner=…,attune.job-hash=… and keeps
// only objects whose attune.job annotation is the name it asked for.
//
// Pure functions; thread-safe.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_RAYJOB_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_RAYJOB_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/launcher.h"
#include "kuberay_options.h"

namespace attune::kuberay {

inline constexpr int kMaxRayJobName = 47;  // KubeRay v1.7.0: MaxRayClusterNameLength (53) - 6

struct JobIdentity {
  std::string job;       // the engine's name
  std::string k8s_name;  // RayJob metadata.name
  std::string owner;     // attune.owner
  std::string job_hash;  // attune.job-hash
  std::string campaign;  // label values, sanitized
  std::string candidate;
  std::string attempt;
};

// `campaign_id` helps split the name into campaign/candidate/attempt labels; "" when unknown.
JobIdentity IdentifyJob(const std::string& job, const std::string& campaign_id,
                        const std::string& owner);

// DNS-1035 label of at most 47 characters, deterministic in (`job`, `owner`).
std::string KubernetesName(const std::string& job, const std::string& owner);

// "attune.owner=<owner>,attune.job-hash=<hash>"
std::string LabelSelector(const JobIdentity& id);

// A label value made from arbitrary text ([A-Za-z0-9._-], at most 63, alphanumeric ends).
std::string LabelValue(const std::string& text);

// The entry point Ray runs: the stack's argv as one shell command line, without a leading
// `ray job submit [...] --` (KubeRay submits the job itself), after `cd WORKDIR &&` when the stack
// set a working directory.
Result<std::string> Entrypoint(const LaunchSpec& launch);

struct RenderedRayJob {
  nlohmann::json manifest;
  int gpus = 0;  // GPUs requested by all the RayCluster's pods (what GPU-hours are charged for)
  int head_gpus = 0;
  int worker_replicas = 0;
  int gpus_per_worker = 0;
};

// The RayJob for `spec`. With the GPUs on worker pods (layout workers, or auto with nodes > 1) a
// torchrun entry point runs under the Ray driver torchrun_on_ray.py, one torchrun per worker pod
// (torchrun_driver.h). Fails (kInvalidArgument) for what cannot run as asked: a multi-node recipe
// with layout head, a torchrun recipe whose --nproc-per-node is not the GPUs per worker or whose
// --nnodes is not the worker count, a deepspeed recipe on worker pods (its launcher needs ssh),
// values Kubernetes would refuse.
Result<RenderedRayJob> RenderRayJob(const JobSpec& spec, const KubeRayOptions& options,
                                    const JobIdentity& id);

// Block-style YAML for a JSON document. Strings are double-quoted (multi-line ones are literal
// blocks), so no value changes type when read back.
std::string ToYaml(const nlohmann::json& doc);

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_RAYJOB_H_
