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
      "description": "after a change runs out of memory (or is predicted to), try a memory-saving lever alone and then that change from it"
    },
    "explore": {
      "type": "boolean",
      "description": "when no move is expected to beat min_gain, go on with the best-ranked untried move (default true); false ends the campaign there"
    }
  }
})json";

}  // namespace attune::agents::heuristic
