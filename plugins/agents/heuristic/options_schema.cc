// Copyright attune authors.
#include "options_schema.h"

namespace attune::agents::heuristic {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the built-in skill-guided agent",
  "properties": {
    "min_gain": {
      "type": "number",
      "description": "the smallest expected gain worth a job (fraction)"
    },
    "pair_after_oom": {
      "type": "boolean",
      "description": "propose a memory-saving lever together with one that ran out of memory"
    }
  }
})json";

}  // namespace attune::agents::heuristic
