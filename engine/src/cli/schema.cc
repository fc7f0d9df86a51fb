#include "cli/schema.h"

#ifdef ATTUNE_HAVE_STEPS
#include "steps/campaign_runner.h"
#endif

namespace attune::cli {

Result<WorkflowSchema> BuildWorkflowSchema(const Env& env,
                                           const std::vector<std::string>& extra_paths) {
  WorkflowSchema schema;
#ifdef ATTUNE_HAVE_STEPS
  schema = BuiltinStepSchema();
#endif
  ATTUNE_ASSIGN_OR_RETURN(auto host, LoadPlugins(env, extra_paths));
  for (const LoadedPlugin* p : host->List()) {
    switch (p->kind) {
      case PluginKind::kStack: schema.stacks.insert(p->name); break;
      case PluginKind::kLauncher: schema.launchers.insert(p->name); break;
      case PluginKind::kAgent: schema.agents.insert(p->name); break;
    }
  }
  return schema;
}

}  // namespace attune::cli
