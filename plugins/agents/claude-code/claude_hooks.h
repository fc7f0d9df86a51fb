// Copyright attune authors.
//
// The Claude Code hooks, as this plugin's own commands: Claude Code runs them as its PreToolUse and
// Stop hooks (HookSettings in claude_cli.h writes the command lines). They translate Claude Code's
// hook protocol to the agent safety envelope (attune/agentkit/guard.h) and the continuation rule
// (attune/agentkit/continuation.h), which every agent plugin shares.
//
//   attune --plugin-path DIR claude-code guard --campaign-dir D [--namespace NS] [--events-dir E]...
//                                              [--attune PATH]
//     PreToolUse: reads the hook JSON on stdin ({"tool_name", "tool_input", "cwd", ...}), prints
//     {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"|"deny",
//      "permissionDecisionReason":...}} and exits 0. Tools: Read, Grep, Glob, LS, Skill, TodoWrite
//     and NotebookRead are allowed (reading); Write, Edit, MultiEdit and NotebookEdit go to
//     JudgeFileWrite; Bash to JudgeCommand; any other tool is denied.
//   attune --plugin-path DIR claude-code stop --campaign-dir D [--cap N] [--attune PATH]
//     Stop: reads {"session_id", "stop_hook_active", "last_assistant_message"} and prints
//     {"decision":"block","reason":...} to keep the agent working, or nothing to let it stop.
//
// Exit codes: 0 answered; 2 usage error (for guard, also printed as a deny so that a broken hook
// line fails closed).
#ifndef ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_HOOKS_H_
#define ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_HOOKS_H_

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attune/agentkit/guard.h"

namespace attune::agents {

// Judges one Claude Code tool call (tool_name and tool_input as in the PreToolUse input).
agentkit::GuardDecision JudgeClaudeToolUse(const agentkit::GuardConfig& config,
                                           const std::string& tool_name,
                                           const nlohmann::json& tool_input,
                                           const std::string& cwd);

// `which` is "guard" or "stop"; `args` are the words after it.
int RunClaudeHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
                  std::ostream& out, std::ostream& err);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_HOOKS_H_
