// The toy stack's plugin entry point: its options schema, its factory and the one exported symbol.
// A plugin library has exactly one such file (attune_add_plugin's ENTRY).
#include "attune/plugin.h"
#include "attune/support/json_schema.h"
#include "toy_stack.h"

namespace {

// The workflow's `with:` block for this stack (`stack: {name: toy, with: {max_micro_batch: 4}}`),
// as JSON Schema (docs/plugins.md "Options"). attune checks a workflow against it before a
// campaign starts, without creating the plugin.
const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "max_micro_batch": {"type": "integer", "minimum": 1, "maximum": 1024, "default": 8,
                        "description": "the largest micro-batch size the lever proposes"}
  }
})json";

// Errors are values: a bad option is a Status that attune reports, never an exception.
attune::Result<std::unique_ptr<attune::Plugin>> CreateToyStack(const attune::PluginContext& ctx) {
  ATTUNE_RETURN_IF_ERROR(
      attune::support::ValidateOptions(kOptionsSchema, ctx.config, "stack 'toy'"));
  const int max_micro_batch = ctx.config.value("max_micro_batch", 8);
  return std::unique_ptr<attune::Plugin>(new toy::ToyStack(max_micro_batch));
}

}  // namespace

// Kind, name (the `stack:` of recipes and workflows), the plugin's own version, the factory, the
// options schema. The macro also records the plugin ABI version these headers define; attune
// refuses a library built against other headers.
ATTUNE_PLUGIN_WITH_OPTIONS(attune::PluginKind::kStack, "toy", "0.1.0", CreateToyStack,
                           kOptionsSchema)
