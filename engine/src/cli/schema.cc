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
  AddPluginsToSchema(*host, &schema);
  return schema;
}

}  // namespace attune::cli
