// The exported plugin descriptor of the automodel stack.
#include "attune/plugin.h"
#include "attune/support/json_schema.h"
#include "automodel_stack.h"
#include "options_schema.h"

namespace {

attune::Result<std::unique_ptr<attune::Plugin>> CreateAutoModel(const attune::PluginContext& ctx) {
  ATTUNE_RETURN_IF_ERROR(attune::support::ValidateOptions(attune::automodel::kOptionsSchema,
                                                          ctx.config, "stack 'automodel'"));
  auto stack = attune::automodel::AutoModelStack::Create(ctx.data_dir, ctx.config);
  if (!stack.ok()) return stack.status();
  return std::unique_ptr<attune::Plugin>(std::move(stack).value());
}

}  // namespace

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kStack, "automodel", "0.1.0", CreateAutoModel,
                           attune::automodel::kOptionsSchema)
