// Copyright attune authors.
//
// JobRecord: what the KubeRay launcher remembers about one job name, in <state_dir>/<name>.json,
// written atomically (temporary file, fsync, rename, fsync of the directory). The cluster stays
// the authority on whether a RayJob exists (found by label); the record adds what the cluster
// cannot tell once a RayJob is gone: that attune asked for it, that attune cancelled it, the last
// times seen, how long its pods have waited, and the final status once one was seen.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_JOB_RECORD_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_JOB_RECORD_H_

#include <optional>
#include <string>

#include "attune/launcher.h"
#include "attune/status.h"

namespace attune::kuberay {

struct JobRecord {
  std::string name;      // the engine's job name
  std::string k8s_name;  // the RayJob's name
  std::string namespace_;
  std::string owner;     // attune.owner label value it was submitted with
  std::string job_hash;  // attune.job-hash label value
  std::string job_dir;
  std::string log_path;       // the copy of the driver's log kept in the job folder
  std::string manifest_path;  // the RayJob exactly as applied
  std::string submission_mode = "K8sJobMode";
  int devices = 0;  // the engine's device count for the job
  int gpus = 0;     // GPUs the RayJob's pods request (charged)
  double intent_time = 0;
  bool created = false;  // kubectl reported the RayJob created
  bool seen = false;     // the RayJob was seen in the cluster at least once
  std::string uid;
  std::optional<double> start_time;  // last seen .status.startTime
  double last_seen_time = 0;
  std::optional<double> waiting_since;  // pods first seen unschedulable or failing to pull
  bool cancel_requested = false;
  double cancel_time = 0;
  bool log_complete = false;  // log_path holds the log of the finished job
  std::optional<JobStatus> final_status;
};

// <state_dir>/<name>.json
std::string RecordPath(const std::string& state_dir, const std::string& name);

// nullopt when there is no record; kCorruption when one exists and cannot be read.
Result<std::optional<JobRecord>> LoadRecord(const std::string& state_dir, const std::string& name);

Status SaveRecord(const std::string& state_dir, const JobRecord& record);

// Writes `text` to `path` atomically (parent directories created).
Status WriteFileAtomically(const std::string& path, const std::string& text);

// Appends one line and fsyncs (the submissions log the kill -9 suite counts).
Status AppendLine(const std::string& path, const std::string& line);

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_JOB_RECORD_H_
