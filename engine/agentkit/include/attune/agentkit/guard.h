// Copyright attune authors.
//
// The agent safety envelope: what a coding agent working on a campaign may do. The engine owns this
// policy; each agent plugin maps it onto its CLI's own mechanism (a pre-tool hook that asks
// JudgeCommand / JudgeFileWrite, a sandbox whose writable roots exclude ProtectedDirs, a tool
// allow-list) and says at start what its CLI cannot enforce. The engine's gate still refuses any
// proposal that would change the model, whatever the agent did.
//
// Allowed: reading files; shell commands that only inspect (ls, cat, head, tail, grep, wc, jq,
// nvidia-smi queries, squeue, sacct, ...), the attune commands an agent needs (status, events,
// stack show, log parse|triage, gate check, recipe import), and read-only kubectl/helm inside the
// campaign's namespace.
// Denied: everything else, in particular kubectl/helm outside the namespace (-A,
// --all-namespaces, another -n/--namespace, a missing -n, KUBECONFIG=, --kubeconfig, --context,
// `kubectl config use-context`), any file write (the agent answers with a proposal; it never edits
// the recipe), writes into the campaign's event log directory above all, and any command the guard
// cannot read (unparsable shell, computed command names or namespaces).
//
// Commands are judged after splitting with a shell-word parser (shell_words.h), through wrappers
// (bash|sh -c, env, sudo, xargs, timeout, nice, nohup, eval, find -exec, watch) and every element
// of pipelines, lists and substitutions. The first denial wins; its reason is written for the model
// to read.
//
// Thread-safety: pure functions (FindEventLogDirs and IsUnder read the file system).
#ifndef ATTUNE_AGENTKIT_GUARD_H_
#define ATTUNE_AGENTKIT_GUARD_H_

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::agentkit {

struct GuardConfig {
  std::string campaign_dir;                 // absolute
  std::string k8s_namespace;                // "" = no kubectl/helm allowed at all
  std::vector<std::string> protected_dirs;  // event log directories (absolute)
  std::string attune_binary;                // accepted as `attune` besides the bare name
};

struct GuardDecision {
  bool allow = false;
  std::string reason;  // why; for a denial, the text the model reads
};

// Judges a shell command line run in `cwd`.
GuardDecision JudgeCommand(const GuardConfig& config, const std::string& command,
                           const std::string& cwd);

// Judges a file write or edit by a CLI's own file tool (`tool` names it in the reason): always
// denied, and named as an attempt on the event log when `path` lies in a protected directory.
GuardDecision JudgeFileWrite(const GuardConfig& config, const std::string& tool,
                             const std::string& path, const std::string& cwd);

// Reading a file is allowed everywhere (the event log's bytes teach nothing harmful); a plugin
// whose CLI has a read tool allows it without asking.

// The guard's command-line flags, the same for every agent plugin's hook command:
//   --campaign-dir D (required) [--namespace NS] [--events-dir E]... [--attune PATH]
// Event log directories default to FindEventLogDirs(D); --events-dir adds more. `--name=value` is
// accepted too. kInvalidArgument names the bad flag.
Result<GuardConfig> ParseGuardArgs(const std::vector<std::string>& args);

// The arguments that ParseGuardArgs reads back as `config` (for a plugin writing its hook command).
std::vector<std::string> GuardArgs(const GuardConfig& config);

// The event log directories of a campaign: `<dir>/events` and `<dir>/log`, plus the campaign
// directory itself or any direct subdirectory holding a RocksDB log (a CURRENT or ACKED file).
std::vector<std::string> FindEventLogDirs(const std::string& campaign_dir);

// True when `path` (relative to `cwd` when not absolute) lies in or under `dir`, after lexical
// normalization and resolving the symlinks that exist.
bool IsUnder(const std::string& path, const std::string& dir, const std::string& cwd);

// A pre-tool hook's question as Claude Code and Codex (PreToolUse) and the Gemini CLI (BeforeTool)
// all send it on stdin: {"tool_name", "tool_input", "cwd", ...}. nullopt when `in` is not a JSON
// object naming a tool; `cwd` is `default_cwd` when the hook did not give one.
struct ToolCall {
  std::string tool;
  nlohmann::json input = nlohmann::json::object();
  std::string cwd;
};
std::optional<ToolCall> ReadToolCall(std::istream& in, const std::string& default_cwd);

// A string field of a hook's JSON object; "" when absent or not a string.
std::string HookString(const nlohmann::json& j, const char* key);

}  // namespace attune::agentkit

#endif  // ATTUNE_AGENTKIT_GUARD_H_
