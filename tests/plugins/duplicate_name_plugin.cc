// Broken on purpose: declares the same name as the good test plugin ("testgood").
#include "test_agent.h"

namespace {
attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext&) {
  return std::unique_ptr<attune::Plugin>(new attune::testplugin::TestAgent("testgood"));
}
}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "testgood", "9.9.9", Create)
