// The command agent's plugin entry point: its options schema, its factory and the one exported
// symbol (attune_add_plugin's ENTRY).
#include "attune/plugin.h"
#include "attune/support/json_schema.h"
#include "command_agent.h"

namespace {

// The workflow's `agent: {name: command, with: {...}}`, checked by attune before a campaign starts.
const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "required": ["command"],
  "properties": {
    "command": {"type": "array", "minItems": 1, "items": {"type": "string"},
                "description": "the program and its arguments; it reads the question on stdin and answers on stdout"},
    "timeout_s": {"type": "number", "minimum": 1, "maximum": 86400, "default": 60,
                  "description": "seconds per answer; the program's process group is killed after it"},
    "cwd": {"type": "string", "description": "where the program runs (default: attune's working directory)"}
  }
})json";

attune::Result<std::unique_ptr<attune::Plugin>> CreateCommandAgent(const attune::PluginContext& ctx) {
  ATTUNE_RETURN_IF_ERROR(attune::support::ValidateOptions(kOptionsSchema, ctx.config, "agent 'command'"));
  command_agent::Options o;
  o.command = ctx.config.at("command").get<std::vector<std::string>>();
  o.timeout_s = ctx.config.value("timeout_s", 60.0);
  o.cwd = ctx.config.value("cwd", "");
  return std::unique_ptr<attune::Plugin>(new command_agent::CommandAgent(std::move(o)));
}

}  // namespace

ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kAgent, "command", "0.1.0", CreateCommandAgent,
                           kOptionsSchema)
