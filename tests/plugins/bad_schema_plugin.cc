// Broken: the declared options schema uses a keyword outside the subset ("minimun"); the host
// must refuse the library when it loads it.
#include "test_agent.h"

namespace {

const char kSchema[] = R"({"type": "object", "properties": {"n": {"type": "integer", "minimun": 1}}})";

attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext&) {
  return std::unique_ptr<attune::Plugin>(new attune::testplugin::TestAgent("badschema"));
}

}  // namespace

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "badschema", "0.0.1", Create, kSchema)
