#include "slurm_test_support.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "process.h"
#include "slurm_launcher.h"

namespace attune::slurm_test {
namespace {

namespace fs = std::filesystem;

std::string SessionFile() { return std::string(ATTUNE_BINARY_DIR) + "/slurm-test.session"; }

}  // namespace

void EnsureSlurm() {
  static bool up = false;
  if (up) return;
  std::string script = std::string(ATTUNE_SOURCE_DIR) + "/tools/ci/slurm-up.sh";
  slurm::ProcessOptions options;
  options.timeout_s = 600;  // a first run installs the packages
  auto r = slurm::RunProcess({script, "--session", SessionFile()}, options);
  if (!r.ok() || r->exit_code != 0) {
    std::cerr << "SKIPPED: the Slurm tests need a local Slurm cluster and " << script
              << " could not start one: " << (r.ok() ? r->err : r.status().message()) << std::endl;
    std::exit(kSkipExitCode);
  }
  up = true;
}

const std::string& ScratchDir() {
  static const std::string dir = [] {
    auto path = fs::temp_directory_path() / ("attune-slurm-test-" + std::to_string(getpid()));
    fs::create_directories(path);
    return path.string();
  }();
  // Removed at exit unless ATTUNE_KEEP_TEST_DIRS is set (each run left one under /tmp).
  static const struct Remover {
    ~Remover() {
      std::error_code ec;
      if (!std::getenv("ATTUNE_KEEP_TEST_DIRS")) fs::remove_all(dir, ec);
    }
  } remover;
  return dir;
}

std::string UniqueName(const std::string& tag) {
  return "at" + std::to_string(getpid()) + "-" + tag;
}

std::unique_ptr<Launcher> MakeLauncher(const nlohmann::json& options) {
  PluginContext context;
  context.config = {{"poll_interval_s", 0.5}, {"state_dir", ScratchDir() + "/records"}};
  for (const auto& [k, v] : options.items()) context.config[k] = v;
  auto plugin = slurm::CreateSlurmLauncher(context);
  if (!plugin.ok()) {
    std::cerr << "cannot create the slurm launcher: " << plugin.status().ToString() << "\n";
    return nullptr;
  }
  return std::unique_ptr<Launcher>(static_cast<Launcher*>(std::move(plugin).value().release()));
}

JobSpec Spec(const std::string& name, std::vector<std::string> argv, double time_limit_s) {
  JobSpec spec;
  spec.name = name;
  spec.job_dir = ScratchDir() + "/" + name;
  spec.log_path = spec.job_dir + "/" + name + ".log";
  spec.launch.argv = std::move(argv);
  spec.time_limit_s = time_limit_s;
  return spec;
}

namespace {

JobStatus WaitFor(Launcher& launcher, const std::string& name, double timeout_s,
                  bool (*done)(JobState)) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  JobStatus last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto s = launcher.Poll(name);
    if (!s.ok()) {
      last.reason = s.status().ToString();
    } else {
      last = *s;
      if (done(last.state)) return last;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(launcher.PollIntervalSeconds()));
  }
  return last;
}

}  // namespace

JobStatus WaitTerminal(Launcher& launcher, const std::string& name, double timeout_s) {
  return WaitFor(launcher, name, timeout_s, [](JobState s) { return IsTerminal(s); });
}

JobStatus WaitRunning(Launcher& launcher, const std::string& name, double timeout_s) {
  return WaitFor(launcher, name, timeout_s,
                 [](JobState s) { return s == JobState::kRunning || IsTerminal(s); });
}

std::string Output(const std::vector<std::string>& argv) {
  auto r = slurm::RunProcess(argv);
  return r.ok() && r->exit_code == 0 ? r->out : std::string();
}

int SlurmJobsNamed(const std::string& name) {
  std::istringstream ids(
      Output({"squeue", "--noheader", "--states=all", "--name=" + name, "--format=%i"}));
  int count = 0;
  std::string id;
  while (ids >> id) ++count;
  return count;
}

}  // namespace attune::slurm_test
