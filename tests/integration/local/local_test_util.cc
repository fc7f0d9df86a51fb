// Copyright attune authors.

#include "local_test_util.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

namespace attune::local::testing {
namespace {

namespace fs = std::filesystem;

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ScratchDir::ScratchDir() {
  static std::atomic<int> counter{0};
  path_ = (fs::temp_directory_path() / ("attune-local-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++)))
              .string();
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

LocalOptions TestOptions(const ScratchDir& dir) {
  LocalOptions o;
  o.state_dir = dir.File("state");
  o.wrapper = {LOCAL_JOBWRAP_RUNNER, "job-exec"};
  o.devices_per_node = 2;
  o.grace_s = 1;
  o.poll_interval_s = 0.05;
  return o;
}

std::unique_ptr<LocalLauncher> MakeLauncher(const ScratchDir& dir) {
  return std::make_unique<LocalLauncher>(TestOptions(dir));
}

JobSpec ShellJob(const ScratchDir& dir, const std::string& name, const std::string& script,
                 double time_limit_s) {
  JobSpec spec;
  spec.name = name;
  spec.job_dir = dir.File(name);
  spec.log_path = dir.File("logs/" + name + ".log");
  spec.launch.argv = {"/bin/sh", "-c", script};
  spec.launch.workdir = dir.path();
  spec.devices = 1;
  spec.time_limit_s = time_limit_s;
  return spec;
}

JobStatus WaitTerminal(Launcher& launcher, const std::string& name, double timeout_s) {
  const double give_up = Seconds() + timeout_s;
  while (true) {
    Result<JobStatus> status = launcher.Poll(name);
    REQUIRE(status.ok());
    if (IsTerminal(status->state)) return *status;
    INFO("job " << name << " is still " << JobStateName(status->state));
    REQUIRE(Seconds() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int CountLines(const std::string& path) {
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

bool ProcessAlive(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return false;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

bool WaitProcessGone(int pid, double timeout_s) {
  const double give_up = Seconds() + timeout_s;
  while (ProcessAlive(pid)) {
    if (Seconds() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace attune::local::testing
