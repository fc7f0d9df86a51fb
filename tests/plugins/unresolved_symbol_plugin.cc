// Broken on purpose: depends on a function that nothing defines, so RTLD_NOW refuses it.
#include "test_agent.h"

extern "C" int attune_test_symbol_that_does_not_exist(int);

namespace {
attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext&) {
  if (attune_test_symbol_that_does_not_exist(1) == 0) return attune::Status::Internal("never");
  return std::unique_ptr<attune::Plugin>(new attune::testplugin::TestAgent("unresolved"));
}
}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "unresolved", "0.0.1", Create)
