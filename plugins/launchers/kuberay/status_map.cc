// Copyright attune authors.
#include "status_map.h"

#include <ctime>
#include <regex>

namespace attune::kuberay {
namespace {

using Json = nlohmann::json;

std::string Str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

const Json& Field(const Json& j, const char* key) {
  static const Json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

std::string PodName(const Json& pod) { return Str(Field(pod, "metadata"), "name"); }

// The first container state (current or last) terminated with `reason`.
std::optional<std::string> TerminatedWith(const Json& pod, const std::string& reason) {
  for (const auto& cs : Field(Field(pod, "status"), "containerStatuses")) {
    for (const char* which : {"state", "lastState"}) {
      const Json& t = Field(Field(cs, which), "terminated");
      if (Str(t, "reason") == reason) {
        int code = Field(t, "exitCode").is_number_integer() ? t["exitCode"].get<int>() : -1;
        return "pod " + PodName(pod) + " container " + Str(cs, "name") + " terminated: " + reason +
               " (exit code " + std::to_string(code) + ")";
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> Waiting(const Json& pod) {
  for (const auto& cs : Field(Field(pod, "status"), "containerStatuses")) {
    const Json& w = Field(Field(cs, "state"), "waiting");
    std::string reason = Str(w, "reason");
    if (reason == "ImagePullBackOff" || reason == "ErrImagePull" || reason == "InvalidImageName" ||
        reason == "ErrImageNeverPull") {
      return "pod " + PodName(pod) + " container " + Str(cs, "name") + " " + reason + ": " +
             Str(w, "message");
    }
  }
  return std::nullopt;
}

std::optional<std::string> Unschedulable(const Json& pod) {
  const Json& status = Field(pod, "status");
  if (Str(status, "phase") != "Pending") return std::nullopt;
  for (const auto& c : Field(status, "conditions")) {
    if (Str(c, "type") == "PodScheduled" && Str(c, "status") == "False" &&
        Str(c, "reason") == "Unschedulable") {
      return "pod " + PodName(pod) + " Pending, unschedulable: " + Str(c, "message");
    }
  }
  return std::nullopt;
}

std::optional<std::string> NodeLostInPod(const Json& pod) {
  const Json& status = Field(pod, "status");
  if (Str(status, "reason") == "NodeLost") {
    return "pod " + PodName(pod) + ": NodeLost: " + Str(status, "message");
  }
  for (const auto& c : Field(status, "conditions")) {
    if (Str(c, "type") == "DisruptionTarget" && Str(c, "status") == "True" &&
        Str(c, "reason") == "DeletionByTaintManager") {
      return "pod " + PodName(pod) + ": DisruptionTarget: " + Str(c, "message");
    }
  }
  return std::nullopt;
}

std::optional<std::string> NodeLostInEvent(const Json& event) {
  static const char* kReasons[] = {"NodeNotReady", "NodeLost", "TaintManagerEviction",
                                   "NodeControllerEviction"};
  std::string reason = Str(event, "reason");
  for (const char* r : kReasons) {
    if (reason == r) {
      return "pod " + Str(Field(event, "involvedObject"), "name") + ": event " + reason + ": " +
             Str(event, "message");
    }
  }
  return std::nullopt;
}

bool IsScheduled(const Json& pod) {
  return !Str(Field(pod, "spec"), "nodeName").empty();
}

JobState FailedState(const std::string& reason, const PodEvidence& pods, std::string* evidence) {
  if (reason == "DeadlineExceeded" || reason == "PreRunningDeadlineExceeded") {
    return JobState::kTimedOut;
  }
  if (pods.oom_killed) {
    *evidence = *pods.oom_killed;
    return JobState::kOutOfMemory;
  }
  if (pods.node_lost) {
    *evidence = *pods.node_lost;
    return JobState::kNodeFailure;
  }
  if (pods.image_pull) *evidence = *pods.image_pull;
  return JobState::kFailed;
}

void MapFailure(const std::string& k8s_name, const Json& st, const PodEvidence& pods,
                JobStatus* s) {
  const std::string reason = Str(st, "reason");
  const std::string message = Str(st, "message");
  std::string evidence;
  s->state = FailedState(reason, pods, &evidence);
  std::smatch m;
  static const std::regex kExit(R"(exit code (-?[0-9]+))");
  if (std::regex_search(message, m, kExit)) s->exit_code = std::stoi(m[1].str());
  s->reason = "RayJob " + k8s_name + " " + Str(st, "jobDeploymentStatus") + " (" +
              (reason.empty() ? "jobStatus " + Str(st, "jobStatus") : reason) + ")" +
              (message.empty() ? "" : ": " + FirstLine(message)) +
              (evidence.empty() ? "" : "; " + evidence);
}

}  // namespace

std::optional<double> ParseTime(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  double fraction = 0;
  if (*rest == '.') {
    char* end = nullptr;
    fraction = std::strtod(rest, &end);
    rest = end;
  }
  if (std::string(rest) != "Z") return std::nullopt;
  return static_cast<double>(timegm(&tm)) + fraction;
}

PodEvidence ReadPodEvidence(const std::vector<Json>& pods, const std::vector<Json>& events) {
  PodEvidence e;
  for (const auto& pod : pods) {
    if (IsScheduled(pod)) e.any_scheduled = true;
    if (!e.oom_killed) e.oom_killed = TerminatedWith(pod, "OOMKilled");
    if (!e.image_pull) e.image_pull = Waiting(pod);
    if (!e.unschedulable) e.unschedulable = Unschedulable(pod);
    if (!e.node_lost) e.node_lost = NodeLostInPod(pod);
  }
  for (const auto& event : events) {
    if (!e.node_lost) e.node_lost = NodeLostInEvent(event);
  }
  return e;
}

JobStatus MapRayJob(const std::string& job_name, const Json& rayjob, const PodEvidence& pods,
                    int devices) {
  const Json& meta = Field(rayjob, "metadata");
  const Json& st = Field(rayjob, "status");
  const std::string k8s_name = Str(meta, "name");
  JobStatus s;
  s.name = job_name;
  s.launcher_job_id = Str(meta, "namespace") + "/" + k8s_name;
  s.devices = devices;
  s.start_time = ParseTime(Str(st, "startTime"));
  const std::string deploy = Str(st, "jobDeploymentStatus");
  const std::string job_status = Str(st, "jobStatus");
  if (deploy == "Running") {
    s.state = JobState::kRunning;
  } else if (deploy == "Complete" && job_status == "SUCCEEDED") {
    s.state = JobState::kSucceeded;
    s.exit_code = 0;
  } else if (deploy == "Complete" && job_status == "STOPPED") {
    s.state = JobState::kCancelled;
    s.reason = "RayJob " + k8s_name + " Complete with jobStatus STOPPED (the Ray job was stopped)";
  } else if (deploy == "Complete" || deploy == "Failed") {
    MapFailure(k8s_name, st, pods, &s);
  } else if (deploy == "ValidationFailed") {
    s.state = JobState::kFailed;
    s.start_time.reset();  // KubeRay refused it before creating anything
    s.reason = "KubeRay refused RayJob " + k8s_name + " (ValidationFailed): " + Str(st, "message");
  } else {
    s.state = JobState::kPending;
    std::string why = pods.unschedulable ? *pods.unschedulable
                      : pods.image_pull  ? *pods.image_pull
                                         : "";
    s.reason = "RayJob " + k8s_name + " " + (deploy.empty() ? "created" : deploy) +
               (why.empty() ? "" : ": " + why);
  }
  if (IsTerminal(s.state) && s.start_time) {
    s.end_time = ParseTime(Str(st, "endTime"));
    if (!s.end_time) s.end_time = ParseTime(Str(Field(st, "rayJobInfo"), "endTime"));
    if (!s.end_time) s.end_time = s.start_time;  // ended without a recorded end: nothing to charge
  }
  return s;
}

}  // namespace attune::kuberay
