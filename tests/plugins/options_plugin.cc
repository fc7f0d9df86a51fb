// A test plugin that declares an options schema: agent "testoptions". Its factory trusts the host
// to have validated the options (the host does, before it calls any factory).
#include "test_agent.h"

namespace {

const char kSchema[] = R"({
  "type": "object", "additionalProperties": false,
  "properties": {
    "repeats": {"type": "integer", "minimum": 1, "default": 2, "description": "runs per try"},
    "mode": {"enum": ["fast", "slow"], "default": "fast"}
  }})";

attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext&) {
  return std::unique_ptr<attune::Plugin>(new attune::testplugin::TestAgent("testoptions"));
}

}  // namespace

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "testoptions", "1.0.0", Create, kSchema)
