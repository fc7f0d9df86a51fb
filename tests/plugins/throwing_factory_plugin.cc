// Broken on purpose: its factory throws (ATTUNE_PLUGIN turns that into a Status).
#include <stdexcept>

#include "test_agent.h"

namespace {
attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext&) {
  throw std::runtime_error("boom from the throwing test plugin");
}
}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "throwing", "0.0.1", Create)
