// Copyright attune authors.
#include "options_schema.h"

namespace attune::agents::codex {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "proposals from the OpenAI Codex CLI (codex exec)",
  "properties": {
    "binary": {
      "type": "string",
      "description": "the codex executable (default: codex on PATH)"
    },
    "model": {
      "type": "string",
      "description": "model name (default: the CLI's)"
    },
    "base_url": {
      "type": "string",
      "description": "an OpenAI Responses API endpoint (e.g. http://127.0.0.1:8000/v1); sets a model provider of its own"
    },
    "env_key": {
      "type": "string",
      "default": "OPENAI_API_KEY",
      "description": "the environment variable holding the API key for base_url"
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
      "description": "extra attempts after a failed CLI run"
    },
    "api_retries": {
      "type": "integer",
      "minimum": 0,
      "maximum": 100,
      "default": 2,
      "description": "the provider's request_max_retries and stream_max_retries"
    },
    "sandbox": {
      "type": "string",
      "enum": ["workspace-write", "read-only"],
      "default": "workspace-write",
      "description": "Codex sandbox mode for the model's commands"
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
      "description": "environment variables for the CLI (the API key, ...)"
    },
    "namespace": {
      "type": "string",
      "description": "the only Kubernetes namespace kubectl/helm may touch"
    },
    "skill": {
      "type": "string",
      "description": "the skill folder (default: <data>/skill)"
    },
    "stop_hook_cap": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000,
      "default": 3,
      "description": "Stop-hook continuations per session"
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
    }
  }
})json";

}  // namespace attune::agents::codex
