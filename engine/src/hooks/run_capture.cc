// Copyright attune authors.
#include "hooks/run_capture.h"

#include "attune/support/process.h"

namespace attune::hooks {

Result<std::string> RunCapture(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) return Status::InvalidArgument("RunCapture: empty argv");
  support::ProcessOptions o;
  o.timeout_s = timeout_s;
  o.max_output = 16 << 20;  // a status answer is small; a runaway helper is cut, not buffered
  auto r = support::RunProcess(argv, o);
  if (!r.ok()) return r.status();  // could not be started (NotFound)
  if (r->timed_out) {
    return Status::DeadlineExceeded("'" + argv[0] + "' took longer than " + std::to_string(timeout_s) + " s");
  }
  if (r->exit_code != 0) {
    return Status::Unavailable("'" + argv[0] + " " + (argv.size() > 1 ? argv[1] : "") +
                               "' failed (exit status " + std::to_string(r->exit_code) + ")");
  }
  return std::move(r->out);
}

}  // namespace attune::hooks
