// Copyright attune authors.
#include "options_schema.h"

namespace attune::agents::random {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "random search over legal moves; takes no options",
  "properties": {}
})json";

}  // namespace attune::agents::random
