// Copyright attune authors.
//
// Everything specific to the Codex CLI (0.171.x) except its event stream (codex_events.h) and its
// hook protocol (codex_hooks.h): the plugin's configuration, the per-campaign folders, the
// config.toml the plugin writes, the command line and the child's environment. Facts used here
// were checked against the real CLI by tests/integration/codex (see README.md for what differs
// from the team's agent-clis.md).
//
// Folders, all under <campaign_dir>/agent/codex/:
//   home/  CODEX_HOME: the generated config.toml, Codex's session files and databases
//   work/  the CLI's working directory and the sandbox's only writable root; holds the skill
//          (.agents/skills/attune/) and TMPDIR (.tmp/)
#ifndef ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_CLI_H_
#define ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_CLI_H_

#include <string>
#include <utility>
#include <vector>

#include "attune/plugin.h"
#include "attune/status.h"

namespace attune::agents {

// The workflow's `with:` for `agent: codex`, resolved.
struct CodexConfig {
  std::string binary;                       // `binary:`; default `codex` on PATH, else setup's
  std::string model;                        // `model:`; "" = the CLI's default
  std::string base_url;                     // `base_url:`; "" = the CLI's own provider
  std::string env_key = "OPENAI_API_KEY";   // `env_key:` the key's variable for base_url
  double timeout_s = 900;                   // `timeout_s:` wall clock for one whole proposal
  int retries = 1;                          // `retries:` extra attempts after a failed run
  int api_retries = 2;                      // `api_retries:` the provider's HTTP retries
  std::string sandbox = "workspace-write";  // `sandbox:` workspace-write or read-only
  std::vector<std::pair<std::string, std::string>> env;  // `env:`
  std::string k8s_namespace;  // `namespace:` the only one kubectl/helm may touch
  std::string skill_dir;      // `skill:`; default <data_dir>/skill
  int stop_hook_cap = 3;      // `stop_hook_cap:` continuations per session
  bool hooks = true;          // `hooks:` false runs without the guard (tests of the CLI only)
  bool resume = true;         // `resume:` continue the last recorded session
  // Context, not from `with:`.
  std::string attune_binary;  // hooks run `<attune_binary> codex guard|stop`
  std::string campaign_dir;
  std::string data_dir;
};

// Reads and checks `with:`; errors name the key, what was expected and what was found.
Result<CodexConfig> ParseConfig(const PluginContext& context);

// `name` resolved on PATH, then in the places tools/setup.d/51-codex.sh installs to; "" when not
// found. A name with a '/' is returned as is when executable.
std::string FindExecutable(const std::string& name);

// The plugin's folders for one campaign (see the header comment).
struct CodexFolders {
  std::string home;  // CODEX_HOME
  std::string work;  // cwd and writable root
  std::string tmp;   // TMPDIR, inside work
};
CodexFolders FoldersFor(const std::string& campaign_dir);

// The name of the provider the plugin defines when `base_url` is set.
inline constexpr char kProviderName[] = "attune";

// The config.toml written to CODEX_HOME: model, provider (base_url, env_key, retries), approval
// policy "never", the sandbox confined to the work folder (no /tmp, no $TMPDIR, no network), web
// search off, and, with `hooks`, PreToolUse -> `attune codex guard`, Stop -> `attune codex stop`.
std::string ConfigToml(const CodexConfig& config);

// The words before `guard`/`stop` in the hook commands: <attune> [--plugin-path <this plugin's
// folder>] codex.
std::vector<std::string> HookCommandPrefix(const CodexConfig& config);

// A TOML basic string ("..." with escapes).
std::string TomlString(const std::string& s);

// One CLI invocation.
struct CodexCall {
  std::string prompt;
  std::string resume_session;  // `codex exec resume <id>` when not empty
};

// The argv (no shell): codex exec [resume] --json --skip-git-repo-check
// [--dangerously-bypass-hook-trust] [-m model] -- [<id>] <prompt>. The hooks are the plugin's own
// (written into its CODEX_HOME), so their trust is granted for the invocation rather than
// persisted.
std::vector<std::string> BuildArgv(const CodexConfig& config, const CodexCall& call);

// The child's environment overrides: CODEX_HOME, TMPDIR, PATH with attune's folder first, the
// campaign directory, `env:` last.
std::vector<std::pair<std::string, std::string>> ChildEnvironment(const CodexConfig& config,
                                                                  const CodexFolders& folders);

// The question for Codex: agentkit's prompt, with the sentence about the working directory made
// true for Codex (it works in its own folder) and where the skill is.
std::string CodexPrompt(const std::string& proposal_prompt, const CodexConfig& config,
                        const CodexFolders& folders);

// Creates the folders, writes config.toml (atomically) and copies the skill folder's SKILL.md and
// references/ to <work>/.agents/skills/attune/. A missing skill is not an error (`warnings` says
// so); an unwritable folder is.
Status PrepareFolders(const CodexConfig& config, const CodexFolders& folders,
                      std::vector<std::string>* warnings);

// What the plugin cannot enforce with this configuration, one sentence each (logged at start).
std::vector<std::string> EnforcementGaps(const CodexConfig& config);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_CLI_H_
