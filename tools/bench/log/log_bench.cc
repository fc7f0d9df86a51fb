// attune_log_bench [--dir DIR] [--appends N] [--replay 100000,1000000]
//
// Prints, for the disk holding DIR (default: the current directory):
//  1. raw fdatasync rate: 256-byte append + fdatasync to a plain file;
//  2. durable append rate: EventLog::Append of one event (one synced WriteBatch + the ACKED
//     watermark), with the watermark synced every append, batched (100 ms) and in background;
//     the ratio of each to (1) (target >= 0.8);
//  3. replay of logs of each given size: Open (full chain verification) and a full ForEach
//     decode, timed in a fresh child process whose peak RSS is reported (targets for 1M events:
//     <= 2 s, <= 500 MB).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "log/envelope.h"
#include "log/event_log.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// CPU seconds (user + system) this process has used: the figure that does not depend on how
// busy the machine is.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double RawFdatasyncRate(const std::string& dir, int n) {
  std::string path = dir + "/fdatasync.bench";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (fd < 0) {
    std::perror("open");
    std::exit(1);
  }
  std::string record(256, 'x');
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    if (write(fd, record.data(), record.size()) < 0 || fdatasync(fd) != 0) {
      std::perror("write/fdatasync");
      std::exit(1);
    }
  }
  double rate = n / Seconds(start);
  close(fd);
  fs::remove(path);
  return rate;
}

nlohmann::json TypicalEventData(int i) {
  return {{"job", "bench-c" + std::to_string(i % 1000) + "-1"},
          {"state", "succeeded"},
          {"step_time_s", 1.234 + i % 7},
          {"tokens_per_s_per_gpu", 10234.5},
          {"losses", {10.1, 9.8, 9.6}}};
}

double DurableAppendRate(const std::string& dir, int n, int watermark_interval_ms) {
  fs::remove_all(dir);
  attune::EventLogOptions options;
  options.campaign_id = "bench";
  options.watermark_sync_interval_ms = watermark_interval_ms;
  auto log = attune::EventLog::Open(dir, options);
  if (!log.ok()) {
    std::fprintf(stderr, "%s\n", log.status().ToString().c_str());
    std::exit(1);
  }
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    auto seq = (*log)->Append({attune::NewEvent{"JobFinished", TypicalEventData(i)}});
    if (!seq.ok()) {
      std::fprintf(stderr, "%s\n", seq.status().ToString().c_str());
      std::exit(1);
    }
  }
  double rate = n / Seconds(start);
  log->reset();
  fs::remove_all(dir);
  return rate;
}

// The envelope codec alone, in memory: what each event costs before RocksDB is involved.
void CodecFigures(int n) {
  std::vector<std::string> values;
  std::string prev;
  for (int i = 0; i < n; ++i) {
    attune::EventRecord r{static_cast<uint64_t>(i + 1), "JobFinished", 1, 1700000000000,
                          TypicalEventData(i), prev, ""};
    values.push_back(attune::log::EncodeEnvelope(&r).value());
    prev = r.hash;
  }
  double cpu = CpuSeconds();
  size_t ok = 0;
  for (const auto& v : values) ok += attune::log::CheckEnvelope(v).ok();
  double check_us = (CpuSeconds() - cpu) / n * 1e6;
  cpu = CpuSeconds();
  for (const auto& v : values) ok += attune::log::DecodeEnvelope(v).ok();
  double decode_us = (CpuSeconds() - cpu) / n * 1e6;
  std::printf("  codec (%zu B/event): CheckEnvelope %.2f us/event, DecodeEnvelope %.2f us/event "
              "(cpu)%s\n",
              values[0].size(), check_us, decode_us, ok == values.size() * 2 ? "" : "  FAILED");
}

void WriteLog(const std::string& dir, int events) {
  fs::remove_all(dir);
  attune::EventLogOptions options;
  options.campaign_id = "bench";
  auto log = attune::EventLog::Open(dir, options);
  const int batch = 1000;
  for (int i = 0; i < events; i += batch) {
    std::vector<attune::NewEvent> group;
    for (int k = i; k < std::min(events, i + batch); ++k) {
      group.push_back({"JobFinished", TypicalEventData(k)});
    }
    if (!(*log)->Append(group).ok()) std::exit(1);
  }
}

// In a child process: open (verifies the chain) and decode every event; prints the timings.
void ReplayChild(const std::string& dir, int expected) {
  attune::EventLogOptions options;
  options.read_only = true;
  auto start = Clock::now();
  double cpu_start = CpuSeconds();
  auto log = attune::EventLog::Open(dir, options);
  if (!log.ok()) {
    std::fprintf(stderr, "%s\n", log.status().ToString().c_str());
    _exit(1);
  }
  double open_s = Seconds(start);
  double open_cpu = CpuSeconds() - cpu_start;
  uint64_t count = 0, bytes = 0;
  auto replay_start = Clock::now();
  double replay_cpu_start = CpuSeconds();
  attune::Status s = (*log)->ForEach(1, [&](const attune::EventRecord& e) {
    ++count;
    bytes += e.type.size();
    return attune::Status::Ok();
  });
  double replay_s = Seconds(replay_start);
  double replay_cpu = CpuSeconds() - replay_cpu_start;
  if (!s.ok() || count != static_cast<uint64_t>(expected)) _exit(1);
  std::printf("  replay %8d events: open+verify %.3f s (cpu %.3f), decode all %.3f s (cpu %.3f), "
              "total %.3f s (cpu %.3f)",
              expected, open_s, open_cpu, replay_s, replay_cpu, Seconds(start),
              open_cpu + replay_cpu);
  std::fflush(stdout);
  _exit(0);
}

void Replay(const std::string& dir, int events) {
  auto write_start = Clock::now();
  WriteLog(dir, events);
  double write_s = Seconds(write_start);
  uint64_t disk = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) disk += e.file_size();
  }
  std::fflush(stdout);  // the child must not print the parent's buffered output again
  pid_t pid = fork();
  if (pid == 0) ReplayChild(dir, events);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  std::printf(", peak RSS %.1f MB (written in %.1f s, %.1f MB on disk)%s\n",
              usage.ru_maxrss / 1024.0, write_s, disk / 1e6,
              WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "  FAILED");
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = ".";
  int appends = 2000;
  std::vector<int> replays = {100000, 1000000};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--dir") dir = argv[i + 1];
    if (flag == "--appends") appends = std::stoi(argv[i + 1]);
    if (flag == "--replay") {
      replays.clear();
      std::stringstream in(argv[i + 1]);
      for (std::string n; std::getline(in, n, ',');) replays.push_back(std::stoi(n));
    }
  }
  fs::create_directories(dir);
  std::string scratch = dir + "/attune-log-bench";
  std::printf("attune event-log bench in %s (%d synced appends per figure)\n", dir.c_str(),
              appends);
  // The modes are measured in interleaved rounds and compared by their medians, so that a
  // disk (or a shared machine) whose speed drifts during the run biases no mode.
  const int rounds = 5;
  const int per_round = std::max(20, appends / rounds);
  std::vector<double> raw, every, batched, background;
  for (int r = 0; r < rounds; ++r) {
    raw.push_back(RawFdatasyncRate(dir, per_round));
    every.push_back(DurableAppendRate(scratch, per_round, 0));
    batched.push_back(DurableAppendRate(scratch, per_round, 100));
    background.push_back(DurableAppendRate(scratch, per_round, -1));
  }
  double raw_median = MedianOf(raw);
  std::printf("  medians of %d interleaved rounds of %d synced writes each:\n", rounds, per_round);
  std::printf("  raw write+fdatasync (256 B):             %8.0f /s\n", raw_median);
  for (auto [name, rates] : {std::pair{"watermark synced every append ", &every},
                             std::pair{"watermark synced every 100 ms ", &batched},
                             std::pair{"watermark synced in background", &background}}) {
    std::printf("  Append, %s: %8.0f /s  ratio %.2f\n", name, MedianOf(*rates),
                MedianOf(*rates) / raw_median);
  }
  CodecFigures(100000);
  for (int n : replays) Replay(scratch, n);
  return 0;
}
