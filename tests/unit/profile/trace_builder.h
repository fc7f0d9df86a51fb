// Small chrome traces written by tests: events built in code, saved plain or gzip-compressed
// into a fresh temporary directory.
#ifndef ATTUNE_TESTS_UNIT_PROFILE_TRACE_BUILDER_H_
#define ATTUNE_TESTS_UNIT_PROFILE_TRACE_BUILDER_H_

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace attune::testing {

using nlohmann::json;

// A temporary directory removed with the object.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("attune-profile-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline void WriteGzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

// Events in microseconds, as Kineto writes them.
class TraceBuilder {
 public:
  TraceBuilder& Rank(int rank, int world_size) {
    info_ = json{{"backend", "nccl"}, {"rank", rank}, {"world_size", world_size}};
    return *this;
  }
  // A kernel; correlation < 0 leaves it without one.
  TraceBuilder& Kernel(const std::string& name, double ts, double dur, int64_t correlation = -1,
                       json args = json::object()) {
    if (correlation >= 0) args["correlation"] = correlation;
    return Event("kernel", name, ts, dur, std::move(args), "0", "7");
  }
  TraceBuilder& Memcpy(double ts, double dur) {
    return Event("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", ts, dur, json::object(), "0", "7");
  }
  TraceBuilder& Launch(int64_t correlation, double ts, const std::string& name = "cudaLaunchKernel") {
    return Event("cuda_runtime", name, ts, 2, {{"correlation", correlation}}, "100", "100");
  }
  TraceBuilder& Step(int number, double ts, double dur) {
    return Event("user_annotation", "ProfilerStep#" + std::to_string(number), ts, dur,
                 json::object(), "100", "100");
  }
  TraceBuilder& CpuOp(const std::string& name, double ts, double dur, const std::string& tid = "1",
                      json args = json::object()) {
    return Event("cpu_op", name, ts, dur, std::move(args), "100", tid);
  }
  TraceBuilder& Event(const std::string& cat, const std::string& name, double ts, double dur,
                      json args, const std::string& pid, const std::string& tid) {
    events_.push_back({{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", pid}, {"tid", tid},
                       {"ts", Micros(ts)}, {"dur", Micros(dur)}, {"args", std::move(args)}});
    return *this;
  }
  // Whole microseconds as JSON integers (as older Kineto writes them), others as floats.
  static json Micros(double us) {
    if (us == static_cast<double>(static_cast<int64_t>(us))) return static_cast<int64_t>(us);
    return us;
  }
  TraceBuilder& Raw(json event) {
    events_.push_back(std::move(event));
    return *this;
  }

  std::string Text() const {
    json doc = {{"schemaVersion", 1}, {"traceEvents", events_}};
    if (info_) doc["distributedInfo"] = *info_;
    return doc.dump();
  }
  std::string Save(const TempDir& dir, const std::string& name, bool gzip = false) const {
    std::string path = dir.File(name);
    gzip ? WriteGzip(path, Text()) : WriteText(path, Text());
    return path;
  }

 private:
  std::optional<json> info_;
  json events_ = json::array();
};

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_UNIT_PROFILE_TRACE_BUILDER_H_
