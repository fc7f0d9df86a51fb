// Copyright attune authors.
#include "job_record.h"

#include "attune/support/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace attune::kuberay {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Status Errno(const std::string& what, const std::string& path) {
  return Status::IoError(what + " '" + path + "': " + std::strerror(errno));
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot write", path);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Json OptionalTime(const std::optional<double>& t) { return t ? Json(*t) : Json(); }

std::optional<double> TimeFrom(const Json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

Json ToJson(const JobRecord& r) {
  Json j{{"name", r.name},
         {"k8s_name", r.k8s_name},
         {"namespace", r.namespace_},
         {"owner", r.owner},
         {"job_hash", r.job_hash},
         {"job_dir", r.job_dir},
         {"log_path", r.log_path},
         {"manifest_path", r.manifest_path},
         {"submission_mode", r.submission_mode},
         {"devices", r.devices},
         {"gpus", r.gpus},
         {"intent_time", r.intent_time},
         {"created", r.created},
         {"seen", r.seen},
         {"uid", r.uid},
         {"start_time", OptionalTime(r.start_time)},
         {"last_seen_time", r.last_seen_time},
         {"waiting_since", OptionalTime(r.waiting_since)},
         {"cancel_requested", r.cancel_requested},
         {"cancel_time", r.cancel_time},
         {"log_complete", r.log_complete}};
  if (r.final_status) j["final_status"] = JobStatusToJson(*r.final_status);
  return j;
}

Result<JobRecord> FromJson(const Json& j) {
  try {
    JobRecord r;
    r.name = j.at("name").get<std::string>();
    r.k8s_name = j.at("k8s_name").get<std::string>();
    r.namespace_ = j.at("namespace").get<std::string>();
    r.owner = j.at("owner").get<std::string>();
    r.job_hash = j.at("job_hash").get<std::string>();
    r.job_dir = j.at("job_dir").get<std::string>();
    r.log_path = j.at("log_path").get<std::string>();
    r.manifest_path = j.at("manifest_path").get<std::string>();
    r.submission_mode = j.value("submission_mode", std::string("K8sJobMode"));
    r.devices = j.at("devices").get<int>();
    r.gpus = j.at("gpus").get<int>();
    r.intent_time = j.at("intent_time").get<double>();
    r.created = j.at("created").get<bool>();
    r.seen = j.at("seen").get<bool>();
    r.uid = j.value("uid", std::string());
    r.start_time = TimeFrom(j, "start_time");
    r.last_seen_time = j.value("last_seen_time", 0.0);
    r.waiting_since = TimeFrom(j, "waiting_since");
    r.cancel_requested = j.value("cancel_requested", false);
    r.cancel_time = j.value("cancel_time", 0.0);
    r.log_complete = j.value("log_complete", false);
    if (j.contains("final_status")) {
      ATTUNE_ASSIGN_OR_RETURN(JobStatus s, JobStatusFromJson(j.at("final_status")));
      r.final_status = s;
    }
    return r;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("a field is missing or has the wrong type: ") + e.what());
  }
}

}  // namespace

std::string RecordPath(const std::string& state_dir, const std::string& name) {
  return (fs::path(state_dir) / (name + ".json")).string();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  return support::WriteFileAtomically(path, text);
}

Status AppendLine(const std::string& path, const std::string& line) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot open", path);
  Status written = WriteAll(fd, line + "\n", path);
  if (written.ok() && fsync(fd) != 0) written = Errno("cannot fsync", path);
  close(fd);
  return written;
}

Result<std::optional<JobRecord>> LoadRecord(const std::string& state_dir, const std::string& name) {
  std::string path = RecordPath(state_dir, name);
  std::ifstream in(path);
  if (!in) return std::optional<JobRecord>();
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) {
    return Status::Corruption("kuberay launcher record '" + path +
                              "' is not JSON; move it away only after checking `kubectl get "
                              "rayjobs -l attune.job-hash=...` for job '" + name + "'");
  }
  auto record = FromJson(j);
  if (!record.ok()) return record.status().WithContext("kuberay launcher record '" + path + "'");
  return std::optional<JobRecord>(std::move(record).value());
}

Status SaveRecord(const std::string& state_dir, const JobRecord& record) {
  return WriteFileAtomically(RecordPath(state_dir, record.name), ToJson(record).dump(2) + "\n");
}

}  // namespace attune::kuberay
