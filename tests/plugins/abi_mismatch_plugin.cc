// Broken on purpose: a descriptor that claims a future ABI version. Hand-written (not
// ATTUNE_PLUGIN) so that the version can differ from kAbiVersion.
#include "test_agent.h"

namespace {
attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext&) {
  return std::unique_ptr<attune::Plugin>(new attune::testplugin::TestAgent("abimismatch"));
}
const attune::PluginDescriptor kDescriptor{attune::kAbiVersion + 998, attune::PluginKind::kAgent,
                                           "abimismatch", "0.0.1", &Create};
}  // namespace

extern "C" __attribute__((visibility("default"))) const attune::PluginDescriptor*
attune_test_abi_descriptor() {
  return &kDescriptor;
}
BOOST_DLL_ALIAS(attune_test_abi_descriptor, attune_plugin)
