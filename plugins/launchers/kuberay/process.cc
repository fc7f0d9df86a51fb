// Copyright attune authors.
#include "process.h"

#include "attune/support/process.h"

namespace attune::kuberay {

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const std::string& input,
                                 double timeout_s,
                                 const std::vector<std::pair<std::string, std::string>>& env) {
  support::ProcessOptions o;
  o.timeout_s = timeout_s;
  o.input = input;
  o.env = env;
  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult r, support::RunProcess(argv, o));
  CommandResult out;
  out.exit_code = r.exit_code;
  out.timed_out = r.timed_out;
  out.out = std::move(r.out);
  out.err = std::move(r.err);
  return out;
}

}  // namespace attune::kuberay
