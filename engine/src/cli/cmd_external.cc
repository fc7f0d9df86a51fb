// Commands implemented by other layers and only forwarded here: job-exec and hook.
#include <iostream>

#include "cli/args.h"

#ifdef ATTUNE_HAVE_JOBWRAP
#include "jobwrap/job_wrapper.h"
#endif
#ifdef ATTUNE_HAVE_HOOKS
#include "hooks/hooks.h"
#endif

namespace attune::cli {

int RunJobExec(const std::vector<std::string>& args, Env& env) {
#ifdef ATTUNE_HAVE_JOBWRAP
  (void)env;
  return attune::jobwrap::RunJobWrapper(args);
#else
  (void)args;
  return ReportError(env, "job-exec", Status::Unimplemented(
                                          "the job wrapper is not built in this binary (target "
                                          "attune_jobwrap was missing at configure time)"), false);
#endif
}

int RunHook(const std::vector<std::string>& args, Env& env) {
  if (args.empty() || (args[0] != "guard" && args[0] != "stop")) {
    *env.err << "usage: attune hook guard|stop ARGS...\n";
    return kExitUsage;
  }
#ifdef ATTUNE_HAVE_HOOKS
  std::vector<std::string> rest(args.begin() + 1, args.end());
  return attune::hooks::RunHook(args[0], rest, std::cin, *env.out, *env.err);
#else
  return ReportError(env, "hook", Status::Unimplemented(
                                      "hooks are not built in this binary (target attune_hooks "
                                      "was missing at configure time)"), false);
#endif
}

}  // namespace attune::cli
