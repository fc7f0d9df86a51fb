// Copyright attune authors.
//
// Fixtures for the local launcher tests: a scratch directory, a launcher wired to the test wrapper,
// job specs for shell snippets, and waiting helpers with deadlines.
#ifndef ATTUNE_TESTS_INTEGRATION_LOCAL_LOCAL_TEST_UTIL_H_
#define ATTUNE_TESTS_INTEGRATION_LOCAL_LOCAL_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "attune/launcher.h"
#include "local_launcher.h"

namespace attune::local::testing {

// A fresh directory under the system temp dir, removed on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Options for a launcher whose state lives in `dir` and whose wrapper is the test runner.
LocalOptions TestOptions(const ScratchDir& dir);
std::unique_ptr<LocalLauncher> MakeLauncher(const ScratchDir& dir);

// A one-device job running `/bin/sh -c script` with its log in dir/<name>.log.
JobSpec ShellJob(const ScratchDir& dir, const std::string& name, const std::string& script,
                 double time_limit_s = 60);

// Polls until the job is terminal; fails the test (REQUIRE) past `timeout_s`.
JobStatus WaitTerminal(Launcher& launcher, const std::string& name, double timeout_s = 30);

// Number of lines in a file (0 when missing).
int CountLines(const std::string& path);
std::string ReadText(const std::string& path);

// True when a process with this pid exists and is not a zombie.
bool ProcessAlive(int pid);

// Waits until ProcessAlive(pid) is false, up to timeout_s; returns whether it died.
bool WaitProcessGone(int pid, double timeout_s);

}  // namespace attune::local::testing

#endif  // ATTUNE_TESTS_INTEGRATION_LOCAL_LOCAL_TEST_UTIL_H_
