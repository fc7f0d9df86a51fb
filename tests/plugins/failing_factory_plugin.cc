// Broken on purpose: its factory returns an error (e.g. bad configuration).
#include "test_agent.h"

namespace {
attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext& ctx) {
  return attune::Status::InvalidArgument("with.api_key: required but missing (config was " +
                                         ctx.config.dump() + ")");
}
}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "failing", "0.0.1", Create)
