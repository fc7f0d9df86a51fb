// Copyright attune authors.
//
// Everything specific to the Gemini CLI (@google/gemini-cli 0.61): the plugin's configuration, the
// work folder the CLI runs with (its own HOME holding .gemini/settings.json, a policy file, the
// skill), the command line and the child's environment. Facts used here were checked against the
// real 0.61.0 by tests/integration/gemini (docs/agent-gemini.md lists where the team's reference
// differs).
#ifndef ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_CLI_H_
#define ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_CLI_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attune/plugin.h"
#include "attune/status.h"

namespace attune::agents {

// The workflow's `with:` for `agent: gemini`, resolved.
struct GeminiConfig {
  std::string binary;          // `binary:`; default `gemini` on PATH, else setup's install
  std::string model;           // `model:`; "" = the CLI's default
  std::string base_url;        // `base_url:` -> GOOGLE_GEMINI_BASE_URL; "" = Google's endpoint
  int max_session_turns = 30;  // `max_session_turns:` -> model.maxSessionTurns per CLI call
  double timeout_s = 900;      // `timeout_s:` wall clock for one whole proposal
  int retries = 1;             // `retries:` extra attempts after a failed CLI call
  int api_attempts = 2;        // `api_attempts:` -> general.maxAttempts (tries per request)
  std::vector<std::pair<std::string, std::string>> env;  // `env:` (GEMINI_API_KEY, ...)
  std::string k8s_namespace;  // `namespace:` the only one kubectl/helm may touch
  std::string skill_dir;      // `skill:`; default <data_dir>/skill
  int continuation_cap = 3;   // `continuation_cap:` AfterAgent continuations per session
  bool hooks = true;          // `hooks:` false runs without the guard (tests of the CLI only)
  bool resume = true;         // `resume:` continue the last recorded session
  // `tools:` the only tools the policy allows (all others are denied, so the CLI does not even
  // declare them to the model). Read-only tools and the shell, which the BeforeTool hook judges.
  std::vector<std::string> tools = {"run_shell_command", "read_file",   "read_many_files",
                                    "list_directory",    "grep_search", "glob",
                                    "activate_skill"};
  // Context, not from `with:`.
  std::string attune_binary;  // hooks run `<attune_binary> gemini guard|stop`
  std::string campaign_dir;
  std::string data_dir;
};

// Reads and checks `with:`; errors name the key, what was expected and what was found.
Result<GeminiConfig> ParseConfig(const PluginContext& context);

// `name` resolved on PATH, then in the places tools/setup.d/52-gemini.sh installs to; "" when not
// found. A name with a '/' is returned as is when executable.
std::string FindExecutable(const std::string& name);

// Where one campaign's CLI state lives: <campaign_dir>/agent/gemini/.
struct GeminiWorkFolder {
  std::string root;           // <campaign_dir>/agent/gemini
  std::string home;           // root/home: HOME for the CLI (sessions, settings, user skills)
  std::string settings_path;  // home/.gemini/settings.json
  std::string policy_path;    // root/policy.toml, passed with --policy
  std::string skill_dest;     // home/.gemini/skills/attune
  std::string tmp;            // root/tmp: TMPDIR (the CLI's error reports land there)
};
GeminiWorkFolder WorkFolderFor(const std::string& campaign_dir);

// The settings.json the plugin writes: API-key auth (so GOOGLE_GEMINI_BASE_URL is honoured
// without the interactive auth dialog), telemetry, usage statistics and auto-update off, the
// retry and turn bounds, and the hooks (BeforeTool -> `attune gemini guard`, AfterAgent ->
// `attune gemini stop`) when `hooks:` is on.
nlohmann::json Settings(const GeminiConfig& config);

// The policy file (TOML, user tier): every tool denied at low priority, `tools:` allowed above it.
// In headless mode a rule that would ask the user becomes a denial, and a denied tool is not
// declared to the model at all.
std::string PolicyToml(const GeminiConfig& config);

// The words before `guard`/`stop` in the hook commands: <attune> [--plugin-path <this plugin's
// folder>] gemini.
std::vector<std::string> HookCommandPrefix(const GeminiConfig& config);

// Writes settings.json, the policy and the skill (SKILL.md and references/) into the work folder.
// Idempotent; every file is written atomically.
Status PrepareWorkFolder(const GeminiConfig& config, const GeminiWorkFolder& folder);

// One CLI invocation.
struct GeminiCall {
  std::string prompt;
  std::string resume_session;  // --resume <id> when not empty
};

// The argv (no shell): gemini -p <prompt> --output-format stream-json --skip-trust
// --approval-mode default --policy <file> [--model M] [--resume ID].
std::vector<std::string> BuildArgv(const GeminiConfig& config, const GeminiWorkFolder& folder,
                                   const GeminiCall& call);

// The child's environment overrides: HOME and TMPDIR (the work folder's), no relaunch, no colour,
// the endpoint, PATH with attune's directory first, ATTUNE_CAMPAIGN_DIR; `env:` last.
std::vector<std::pair<std::string, std::string>> ChildEnvironment(const GeminiConfig& config,
                                                                  const GeminiWorkFolder& folder);

// What an exit code of the CLI means (0.61: 1 error, 41 auth, 42 input, 44 sandbox, 52 config,
// 53 turn limit, 54 tool execution, 55 untrusted folder, 130 cancelled, and an API error's HTTP
// status modulo 256: 244 for 500).
std::string ExitCodeMeaning(int exit_code);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_CLI_H_
