// Copyright attune authors.
#include "process.h"

#include "attune/support/process.h"

namespace attune::slurm {

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const ProcessOptions& options) {
  support::ProcessOptions o;
  o.timeout_s = options.timeout_s;
  o.env = options.env;
  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult r, support::RunProcess(argv, o));
  ProcessResult out;
  out.exit_code = r.exit_code;
  out.signal = r.signal;
  out.timed_out = r.timed_out;
  out.out = std::move(r.out);
  out.err = std::move(r.err);
  out.seconds = r.seconds;
  return out;
}

}  // namespace attune::slurm
