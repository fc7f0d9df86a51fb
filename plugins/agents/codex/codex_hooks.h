// Copyright attune authors.
//
// The Codex hooks, as this plugin's own commands: Codex runs them as its PreToolUse and Stop hooks
// (ConfigToml in codex_cli.h writes the command lines into CODEX_HOME/config.toml). They translate
// Codex's hook protocol to the agent safety envelope (attune/agentkit/guard.h) and the
// continuation rule (attune/agentkit/continuation.h), which every agent plugin shares.
//
// What Codex 0.171.0 sends and accepts (captured from real runs, tests/integration/codex):
//   attune --plugin-path DIR codex guard --campaign-dir D [--namespace NS] [--events-dir E]...
//                                        [--attune PATH]
//     PreToolUse stdin: {"session_id","turn_id","transcript_path","cwd","hook_event_name":
//     "PreToolUse","model","permission_mode","tool_name":"Bash","tool_input":{"command":"..."},
//     "tool_use_id"}. The shell tool (exec_command) arrives as tool_name "Bash" with the command
//     line as a string. A denial is {"hookSpecificOutput":{"hookEventName":"PreToolUse",
//     "permissionDecision":"deny","permissionDecisionReason":...}}; Codex does not run the command
//     and returns "Command blocked by PreToolUse hook: <reason>. Command: <cmd>" to the model as
//     the tool's output. An allowed call gets no output (exit 0), which lets Codex proceed.
//     Bash goes to JudgeCommand; apply_patch (and Write/Edit, should Codex name them so) to
//     JudgeFileWrite; any other tool is denied.
//   attune --plugin-path DIR codex stop --campaign-dir D [--cap N] [--attune PATH]
//     Stop stdin: {"session_id","turn_id","transcript_path","cwd","hook_event_name":"Stop","model",
//     "permission_mode","stop_hook_active","last_assistant_message"}. {"decision":"block",
//     "reason":...} keeps the agent working: Codex sends the reason to the model as a user message
//     (<hook_prompt ...>reason</hook_prompt>) within the same turn; no output lets it stop.
//
// Exit codes: 0 answered; 2 usage error (for guard, also printed as a deny so that a broken hook
// line fails closed).
#ifndef ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_HOOKS_H_
#define ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_HOOKS_H_

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attune/agentkit/guard.h"

namespace attune::agents {

// Judges one Codex tool call (tool_name and tool_input as in the PreToolUse input).
agentkit::GuardDecision JudgeCodexToolUse(const agentkit::GuardConfig& config,
                                          const std::string& tool_name,
                                          const nlohmann::json& tool_input, const std::string& cwd);

// The first file a Codex patch ("*** Add File: p", "*** Update File: p", ...) touches; "" if none.
std::string FirstPatchedFile(const std::string& patch);

// `which` is "guard" or "stop"; `args` are the words after it.
int RunCodexHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
                 std::ostream& out, std::ostream& err);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_HOOKS_H_
