// Copyright attune authors.
#include "options_schema.h"

namespace attune::automodel {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the stack's knowledge is data (stacks/automodel/); its one option widens the list of config sections AutoModel's recipes read",
  "properties": {
    "extra_sections": {
      "type": "array",
      "description": "top-level config sections (or section.key for a closed section such as step_scheduler) your recipe reads that stacks/automodel/config_sections.txt (every release it lists) lacks: a newer release, your own recipe class",
      "items": {"type": "string", "pattern": "^[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)?$"}
    }
  }
})json";

}  // namespace attune::automodel
