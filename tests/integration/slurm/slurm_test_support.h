// Helpers for tests that run against the real one-node Slurm cluster of tools/ci/slurm-up.sh.
#ifndef ATTUNE_TESTS_INTEGRATION_SLURM_SLURM_TEST_SUPPORT_H_
#define ATTUNE_TESTS_INTEGRATION_SLURM_SLURM_TEST_SUPPORT_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attune/launcher.h"

namespace attune::slurm_test {

// Exit code that CTest reads as "skipped" (SKIP_RETURN_CODE in CMakeLists.txt).
inline constexpr int kSkipExitCode = 77;

// Starts the cluster once per process (tools/ci/slurm-up.sh, idempotent). When it cannot start,
// prints why and exits the test process with kSkipExitCode.
void EnsureSlurm();

// A fresh directory for this test process's records, scripts and logs.
const std::string& ScratchDir();

// A job name no earlier run used: "at<pid>-<tag>".
std::string UniqueName(const std::string& tag);

// A launcher created through the plugin factory with the test defaults (poll 0.5 s, records in
// ScratchDir()) plus `options`.
std::unique_ptr<Launcher> MakeLauncher(const nlohmann::json& options = nlohmann::json::object());

// A one-node, one-device job running argv, logging under ScratchDir()/<name>/.
JobSpec Spec(const std::string& name, std::vector<std::string> argv, double time_limit_s = 120);

// Polls until the job is terminal or `timeout_s` passes; returns the last status.
JobStatus WaitTerminal(Launcher& launcher, const std::string& name, double timeout_s = 120);
// Polls until the job is running (or terminal).
JobStatus WaitRunning(Launcher& launcher, const std::string& name, double timeout_s = 60);

// How many of this user's jobs Slurm knows by `name` (squeue --states=all).
int SlurmJobsNamed(const std::string& name);

// Runs a command (no shell) and returns its stdout; empty on failure.
std::string Output(const std::vector<std::string>& argv);

}  // namespace attune::slurm_test

#endif  // ATTUNE_TESTS_INTEGRATION_SLURM_SLURM_TEST_SUPPORT_H_
