#include "cli/schema.h"

#include "steps/campaign_runner.h"
#include "steps/step_kinds.h"

namespace attune::cli {

Result<WorkflowSchema> BuildWorkflowSchema(const Env& env,
                                           const std::vector<std::string>& extra_paths) {
  WorkflowSchema schema;
  schema = BuiltinStepSchema();
  ATTUNE_ASSIGN_OR_RETURN(auto host, LoadPlugins(env, extra_paths));
  AddPluginsToSchema(*host, &schema);
  return schema;
}

}  // namespace attune::cli
