// Copyright attune authors.
//
// The PreToolUse guard's policy: what a coding agent working on a campaign may do.
//
// Allowed: read-only inspection (the Read, Grep, Glob, LS, Skill and TodoWrite tools; Bash commands
// such as ls, cat, head, tail, grep, wc, jq, nvidia-smi queries, squeue, sacct), the attune
// commands an agent needs (status, events, stack show, log parse|triage, gate check, recipe
// import), and read-only kubectl/helm inside the campaign's namespace.
// Denied: everything else, in particular kubectl/helm outside the namespace (-A,
// --all-namespaces, another -n/--namespace, a missing -n, KUBECONFIG=, --kubeconfig, --context,
// `kubectl config use-context`), writes into the campaign's event log directory, and any command
// the guard cannot read (unparsable shell, computed command names or namespaces).
//
// Commands are judged after splitting with a shell-word parser (shell_words.h), through wrappers
// (bash|sh -c, env, sudo, xargs, timeout, nice, nohup, eval, find -exec, watch) and every element
// of pipelines, lists and substitutions. The first denial wins; its reason is shown to the model.
//
// Thread-safety: pure functions (FindEventLogDirs reads the file system).
#ifndef ATTUNE_ENGINE_HOOKS_GUARD_POLICY_H_
#define ATTUNE_ENGINE_HOOKS_GUARD_POLICY_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attune::hooks {

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

// Judges one tool call (tool_name and tool_input as in the hook's stdin). `cwd` resolves relative
// paths.
GuardDecision JudgeToolUse(const GuardConfig& config, const std::string& tool_name,
                           const nlohmann::json& tool_input, const std::string& cwd);

// Judges a Bash command line.
GuardDecision JudgeBashCommand(const GuardConfig& config, const std::string& command,
                               const std::string& cwd);

// The event log directories of a campaign: `<dir>/events` and `<dir>/log`, plus the campaign
// directory itself or any direct subdirectory holding a RocksDB log (a CURRENT or ACKED file).
std::vector<std::string> FindEventLogDirs(const std::string& campaign_dir);

// True when `path` (relative to `cwd` when not absolute) lies in or under `dir`, after lexical
// normalization and resolving the symlinks that exist.
bool IsUnder(const std::string& path, const std::string& dir, const std::string& cwd);

}  // namespace attune::hooks

#endif  // ATTUNE_ENGINE_HOOKS_GUARD_POLICY_H_
