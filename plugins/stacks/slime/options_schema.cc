// Copyright attune authors.
#include "options_schema.h"

namespace attune::slime {
const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the stack's knowledge is data (stacks/slime/ and stacks/megatron/); its one option widens the list of arguments slime's train.py accepts",
  "properties": {
    "extra_arguments": {
      "type": "array",
      "description": "flags your slime accepts that stacks/slime/arguments.txt and stacks/megatron/arguments.txt (every release they list) lack: a newer release, a fork, an add_custom_arguments hook",
      "items": {"type": "string", "pattern": "^--[A-Za-z0-9][A-Za-z0-9_-]*$"}
    }
  }
})json";
}  // namespace attune::slime
