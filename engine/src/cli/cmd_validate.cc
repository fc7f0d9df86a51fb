// `attune validate WORKFLOW`: parse and check a workflow against the step kinds and plugins.
#include <ostream>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/schema.h"
#include "workflow/workflow.h"

namespace attune::cli {

int RunValidate(const std::vector<std::string>& args, Env& env) {
  ArgParser p("validate WORKFLOW [--json] [--plugin-path DIR]",
              "Checks a workflow file (keys, step kinds, plugins, recipe and its stack's rules, conditions) without "
              "running anything. Errors are file:line:col: path: message.");
  p.Options()("json", "machine-readable result")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("workflow");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  if (!p.Has("workflow")) return ReportError(env, "validate", Status::InvalidArgument(
                                                 "missing WORKFLOW (a .yaml file)"), json);
  ATTUNE_ASSIGN_OR_RETURN_CODE(WorkflowSchema schema,
                               BuildWorkflowSchema(env, p.GetList("plugin-path")), env,
                               "validate", json);
  auto workflow = LoadWorkflowFile(p.Get("workflow"), schema);
  if (!workflow.ok()) return ReportError(env, "validate", workflow.status(), json);
  // The stack's rules on the recipe as written (its own topology, no device): what `run` would
  // refuse before spending anything, found here. The launcher's devices are checked by `run`,
  // which opens the launcher; validating opens nothing that touches a cluster.
  ATTUNE_ASSIGN_OR_RETURN_CODE(
      auto stack,
      CreateStack(env, workflow->stack.name, p.GetList("plugin-path"), workflow->stack.with), env,
      "validate", json);
  if (Status s = stack->Validate(workflow->recipe, ClusterInfo{}); !s.ok()) {
    return ReportError(env, "validate",
                       Status::InvalidArgument(workflow->recipe_path + ": " + s.message() +
                                               " (a campaign would refuse this recipe before running "
                                               "anything: fix it)"),
                       json);
  }
  if (json) {
    *env.out << nlohmann::json{{"ok", true},
                               {"name", workflow->name},
                               {"hash", WorkflowHash(*workflow)},
                               {"workflow", WorkflowToJson(*workflow)}}
                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
  } else {
    *env.out << p.Get("workflow") << ": ok (workflow '" << workflow->name << "', "
             << workflow->steps.size() << " steps, stack " << workflow->stack.name
             << ", launcher " << workflow->launcher.name << ", agent " << workflow->agent.name
             << ")\n";
  }
  return kExitOk;
}

}  // namespace attune::cli
