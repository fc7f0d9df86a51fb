// Copyright attune authors.
#include "options_schema.h"

namespace attune::agents::claude_code {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "proposals from the Claude Code CLI",
  "properties": {
    "binary": {
      "type": "string",
      "description": "the claude executable (default: claude on PATH)"
    },
    "model": {
      "type": "string",
      "description": "model name (default: the CLI's)"
    },
    "max_turns": {
      "type": "integer",
      "minimum": 1,
      "maximum": 100000,
      "default": 30,
      "description": "turns per CLI call"
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
    "api_retries": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000,
      "default": 2,
      "description": "CLAUDE_CODE_MAX_RETRIES"
    },
    "max_budget_usd": {
      "type": "number",
      "minimum": 0,
      "description": "spending limit over the whole campaign, USD"
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
      "description": "environment variables for the CLI (ANTHROPIC_BASE_URL, ...)"
    },
    "namespace": {
      "type": "string",
      "description": "the only Kubernetes namespace kubectl/helm may touch"
    },
    "skill": {
      "type": "string",
      "description": "the skill file (default: <data>/skill/SKILL.md)"
    },
    "stop_hook_cap": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000,
      "default": 3,
      "description": "Stop-hook blocks per query"
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
    "permission_mode": {
      "type": "string",
      "default": "default",
      "description": "--permission-mode"
    },
    "tools": {
      "type": "array",
      "items": {
        "type": "string"
      },
      "description": "tools offered to the model"
    }
  }
})json";

}  // namespace attune::agents::claude_code
