// Copyright attune authors.
//
// A stand-in for `attune local job-exec` in tests: `local_jobwrap_runner job-exec ARGS...` runs the same
// library function the CLI exposes.

#include <string>
#include <vector>

#include "job_wrapper.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "job-exec") args.erase(args.begin());
  return attune::jobwrap::RunJobWrapper(args);
}
