// Copyright attune authors.
//
// From what the API server says about a RayJob and its pods to the engine's JobStatus, with the
// evidence in the words Kubernetes and KubeRay used.
//
//   .status.jobDeploymentStatus          .status.jobStatus   attune
//   "", Initializing, Waiting, Retrying,  any                 pending  (+ pod evidence: Pending
//   Suspending, Suspended                                              Unschedulable, image pulls)
//   Running                               any                 running
//   Complete                              SUCCEEDED           succeeded (exit 0)
//   Complete                              STOPPED             cancelled
//   Complete or Failed                    FAILED or other     failed, refined by .status.reason
//                                                             and the pods:
//        reason DeadlineExceeded / PreRunningDeadlineExceeded          timed_out
//        a container terminated OOMKilled                              out_of_memory
//        the node went away (NodeNotReady, NodeLost, taint eviction)   node_failure
//        otherwise                                                     failed (exit code from
//                                                                      Ray's "exit code N")
//   ValidationFailed                      -                   failed (KubeRay refused the spec)
//
// Times are the RayJob's own: start = .status.startTime (KubeRay sets it when the RayJob enters
// Initializing), end = .status.endTime. A RayJob refused before it started has neither.
//
// Pure functions; thread-safe.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_STATUS_MAP_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_STATUS_MAP_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/launcher.h"

namespace attune::kuberay {

// What the pods (and the events about them) show; each text names the pod and quotes Kubernetes.
struct PodEvidence {
  std::optional<std::string> oom_killed;
  std::optional<std::string> node_lost;
  std::optional<std::string> image_pull;
  std::optional<std::string> unschedulable;
  bool any_scheduled = false;  // some pod of the RayCluster was placed on a node
};

// `events` may be empty (they are read only when a job failed or waits).
PodEvidence ReadPodEvidence(const std::vector<nlohmann::json>& pods,
                            const std::vector<nlohmann::json>& events);

// Seconds since the epoch of an RFC 3339 time ("2026-01-02T03:04:05Z", fractions allowed);
// nullopt when it is not one.
std::optional<double> ParseTime(const std::string& text);

// The JobStatus of `rayjob` (a RayJob object as `kubectl get -o json` prints it). `devices` are
// the GPUs the RayJob requested.
JobStatus MapRayJob(const std::string& job_name, const nlohmann::json& rayjob,
                    const PodEvidence& pods, int devices);

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_STATUS_MAP_H_
