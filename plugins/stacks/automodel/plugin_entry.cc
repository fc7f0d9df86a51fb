// The exported plugin descriptor of the automodel stack.
#include "attune/plugin.h"
#include "automodel_stack.h"

namespace {

attune::Result<std::unique_ptr<attune::Plugin>> CreateAutoModel(const attune::PluginContext& ctx) {
  auto stack = attune::automodel::AutoModelStack::Create(ctx.data_dir);
  if (!stack.ok()) return stack.status();
  return std::unique_ptr<attune::Plugin>(std::move(stack).value());
}

}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kStack, "automodel", "0.1.0", CreateAutoModel)
