// Copyright attune authors.
#include "options_schema.h"

namespace attune::slime {
const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the stack takes no options (its knowledge is data: stacks/slime/ and stacks/megatron/)",
  "properties": {}
})json";
}  // namespace attune::slime
