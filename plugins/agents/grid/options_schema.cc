// Copyright attune authors.
#include "options_schema.h"

namespace attune::agents::grid {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "required": [
    "space"
  ],
  "description": "exhaustive search over a grid of recipe values",
  "properties": {
    "space": {
      "type": "object",
      "minProperties": 1,
      "description": "recipe key -> list of values, e.g. {\"--micro-batch-size\": [\"1\", \"2\"]}",
      "additionalProperties": {
        "type": "array",
        "minItems": 1,
        "items": {
          "type": [
            "string",
            "number",
            "boolean",
            "null"
          ]
        }
      }
    }
  }
})json";

}  // namespace attune::agents::grid
