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

namespace attune::slurm {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;


Json ToJson(const JobRecord& r) {
  Json j = {
      {"name", r.name},         {"job_id", r.job_id},           {"job_dir", r.job_dir},
      {"log_path", r.log_path}, {"marker_path", r.marker_path}, {"script_path", r.script_path},
      {"devices", r.devices},   {"intent_time", r.intent_time}};
  if (r.final_status) j["final_status"] = JobStatusToJson(*r.final_status);
  return j;
}

Result<JobRecord> FromJson(const Json& j) {
  try {
    JobRecord r;
    r.name = j.at("name").get<std::string>();
    r.job_id = j.at("job_id").get<std::string>();
    r.job_dir = j.at("job_dir").get<std::string>();
    r.log_path = j.at("log_path").get<std::string>();
    r.marker_path = j.at("marker_path").get<std::string>();
    r.script_path = j.value("script_path", std::string());
    r.devices = j.at("devices").get<int>();
    r.intent_time = j.at("intent_time").get<double>();
    if (j.contains("final_status")) {
      ATTUNE_ASSIGN_OR_RETURN(JobStatus s, JobStatusFromJson(j.at("final_status")));
      r.final_status = s;
    }
    return r;
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("expected fields name, job_id, job_dir, log_path, "
                                          "marker_path, devices, intent_time: ") +
                              e.what());
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

Result<std::optional<JobRecord>> LoadRecord(const std::string& state_dir, const std::string& name) {
  std::string path = RecordPath(state_dir, name);
  std::ifstream in(path);
  if (!in) return std::optional<JobRecord>();
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Corruption("slurm launcher record '" + path +
                              "' is not JSON; move it away only if you know job '" + name +
                              "' is not queued (squeue --name=" + name + ")");
  }
  auto record = FromJson(j);
  if (!record.ok()) return record.status().WithContext("slurm launcher record '" + path + "'");
  return std::optional<JobRecord>(std::move(record).value());
}

Status SaveRecord(const std::string& state_dir, const JobRecord& record) {
  return WriteFileAtomically(RecordPath(state_dir, record.name), ToJson(record).dump(2) + "\n");
}

std::optional<Marker> ReadMarker(const std::string& path) {
  std::ifstream in(path);
  if (path.empty() || !in) return std::nullopt;
  Marker m;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string id, kind;
    words >> id >> kind;
    if (kind == "start") {
      double t = 0;
      if (words >> t) m.start_time = t;
      m.job_id = id;
    } else if (kind == "exit") {
      int rc = 0;
      double t = 0;
      if (words >> rc >> t) m.exit_code = rc, m.end_time = t;
    }
  }
  return m;
}

}  // namespace attune::slurm
