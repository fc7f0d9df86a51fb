// Copyright attune authors.
//
// Everything specific to the Claude Code CLI (2.1.x): the plugin's configuration, the command
// line, the hook settings, and reading `--output-format json` results. Facts used here are from
// the team's agent-clis.md (flags, hook formats, result fields) and were checked against the real
// CLI by tests/integration/claude-code.
#ifndef ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_CLI_H_
#define ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_CLI_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attune/plugin.h"
#include "attune/status.h"
#include "attune/support/process.h"

namespace attune::agents {

// The workflow's `with:` for `agent: claude-code`, resolved.
struct ClaudeCodeConfig {
  std::string binary;      // `binary:`; default `claude` on PATH, else setup's install
  std::string model;       // `model:`; "" = the CLI's default
  int max_turns = 30;      // `max_turns:` per CLI call
  double timeout_s = 900;  // `timeout_s:` wall clock for one whole proposal
  int retries = 1;         // `retries:` extra attempts after a failed CLI call
  int api_retries = 2;     // `api_retries:` -> CLAUDE_CODE_MAX_RETRIES
  std::optional<double> max_budget_usd;  // `max_budget_usd:` over the whole campaign
  std::vector<std::pair<std::string, std::string>> env;  // `env:` (ANTHROPIC_BASE_URL, ...)
  std::string k8s_namespace;  // `namespace:` the only one kubectl/helm may touch
  std::string skill_path;     // `skill:`; default <data_dir>/skill/SKILL.md
  int stop_hook_cap = 3;      // `stop_hook_cap:` blocks per query before the Stop hook gives up
  bool hooks = true;          // `hooks:` false runs without the guard (tests of the CLI only)
  bool resume = true;         // `resume:` continue the last recorded session
  std::string permission_mode = "default";                            // `permission_mode:`
  std::vector<std::string> tools = {"Bash", "Read", "Grep", "Glob"};  // `tools:` sent to the model
  // Context, not from `with:`.
  std::string attune_binary;  // hooks run `<attune_binary> claude-code guard|stop`
  std::string campaign_dir;
  std::string data_dir;
};

// Reads and checks `with:`; errors name the key, what was expected and what was found.
Result<ClaudeCodeConfig> ParseConfig(const PluginContext& context);

// `name` resolved on PATH, then in the places tools/setup.d/50-claude-code.sh installs to;
// "" when not found. A name with a '/' is returned as is when executable.
std::string FindExecutable(const std::string& name);

// One CLI invocation.
struct ClaudeCall {
  std::string prompt;
  std::string resume_session;        // --resume <id> when not empty
  std::string append_system_prompt;  // the skill
  std::optional<double> max_budget_usd;
};

// The argv (no shell): claude -p <prompt> --output-format json --max-turns N --settings <json> ...
std::vector<std::string> BuildArgv(const ClaudeCodeConfig& config, const ClaudeCall& call);

// The --settings JSON: PreToolUse -> `attune claude-code guard`, Stop -> `attune claude-code stop`
// (this plugin's own commands, claude_hooks.h), each told where this plugin lives.
nlohmann::json HookSettings(const ClaudeCodeConfig& config);
// The words before `guard`/`stop` in those commands: <attune> [--plugin-path <this plugin's
// folder>] claude-code.
std::vector<std::string> HookCommandPrefix(const ClaudeCodeConfig& config);

// The child's environment overrides (telemetry off, retries bounded, `env:` last).
std::vector<std::pair<std::string, std::string>> ChildEnvironment(const ClaudeCodeConfig& config);

// What one invocation produced.
struct ClaudeRun {
  bool ok = false;     // exit 0, !is_error, and a result text
  std::string result;  // the final text
  std::string session_id;
  int num_turns = 0;
  double total_cost_usd = 0;
  std::string subtype;  // success, error_max_turns, error_max_budget_usd, ...
  std::string terminal_reason;
  int permission_denials = 0;
  std::string error;  // why not ok: exit code, is_error text, stderr tail
};

ClaudeRun ReadRun(const support::ProcessResult& process);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_CLI_H_
