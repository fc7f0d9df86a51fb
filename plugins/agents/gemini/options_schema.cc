// Copyright attune authors.
#include "options_schema.h"

namespace attune::agents::gemini {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "proposals from the Gemini CLI",
  "properties": {
    "binary": {
      "type": "string",
      "description": "the gemini executable (default: gemini on PATH)"
    },
    "model": {
      "type": "string",
      "description": "--model (default: the CLI's)"
    },
    "base_url": {
      "type": "string",
      "description": "GOOGLE_GEMINI_BASE_URL: a Gemini API endpoint (https, or http on localhost)"
    },
    "max_session_turns": {
      "type": "integer",
      "minimum": 1,
      "maximum": 100000,
      "default": 30,
      "description": "model.maxSessionTurns per CLI call (exit 53 past it)"
    },
    "timeout_s": {
      "type": "number",
      "minimum": 1,
      "default": 900,
      "description": "wall clock for one whole proposal, seconds"
    },
    "retries": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000,
      "default": 1,
      "description": "extra attempts after a failed CLI call"
    },
    "api_attempts": {
      "type": "integer",
      "minimum": 1,
      "maximum": 10,
      "default": 2,
      "description": "general.maxAttempts: the CLI's tries per model request (it caps this at 10)"
    },
    "env": {
      "type": "object",
      "additionalProperties": {
        "type": [
          "string",
          "number",
          "boolean"
        ]
      },
      "description": "environment variables for the CLI (GEMINI_API_KEY, ...)"
    },
    "namespace": {
      "type": "string",
      "description": "the only Kubernetes namespace kubectl/helm may touch"
    },
    "skill": {
      "type": "string",
      "description": "the skill folder holding SKILL.md (default: <data>/skill)"
    },
    "continuation_cap": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000,
      "default": 3,
      "description": "AfterAgent continuations per session"
    },
    "hooks": {
      "type": "boolean",
      "default": true,
      "description": "run with the guard hooks (false only for tests of the CLI)"
    },
    "resume": {
      "type": "boolean",
      "default": true,
      "description": "continue the last recorded session"
    },
    "tools": {
      "type": "array",
      "items": {
        "type": "string"
      },
      "description": "the Gemini tools the policy allows; every other tool is denied"
    }
  }
})json";

}  // namespace attune::agents::gemini
