// Copyright attune authors.
#include "options_schema.h"

namespace attune::megatron {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the stack's knowledge is data (stacks/megatron/); its one option widens the list of Megatron-LM arguments",
  "properties": {
    "extra_arguments": {
      "type": "array",
      "description": "flags your Megatron-LM accepts that stacks/megatron/arguments.txt (every release it lists) lacks: a newer release, a fork, an extra-arguments provider",
      "items": {"type": "string", "pattern": "^--[A-Za-z0-9][A-Za-z0-9_-]*$"}
    }
  }
})json";

}  // namespace attune::megatron
