// Copyright attune authors.
#include "options_schema.h"

namespace attune::automodel {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the stack takes no options (its knowledge is data: stacks/automodel/)",
  "properties": {}
})json";

}  // namespace attune::automodel
