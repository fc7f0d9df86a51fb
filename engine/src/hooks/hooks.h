// Copyright attune authors.
//
// `attune hook guard|stop ...`: the commands Claude Code (or another coding-agent CLI with
// Claude-compatible hooks) runs as its PreToolUse and Stop hooks. The CLI exposes RunHook; the
// claude-code agent plugin writes the hook commands into the settings it passes to the CLI.
//
//   attune hook guard --campaign-dir D [--namespace NS] [--events-dir E]... [--attune PATH]
//     PreToolUse: reads the hook JSON on stdin, prints
//     {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"|"deny",
//      "permissionDecisionReason":...}} and exits 0. Policy: guard_policy.h. Event log directories
//     default to FindEventLogDirs(D); --events-dir adds more.
//   attune hook stop --campaign-dir D [--cap N] [--attune PATH]
//     Stop: prints {"decision":"block","reason":...} to keep the agent working, or nothing to let
//     it stop. Policy and the status source: stop_hook.h.
//
// Exit codes: 0 answered; 2 usage error (for guard, also printed as a deny so that a broken hook
// line fails closed).
#ifndef ATTUNE_ENGINE_HOOKS_HOOKS_H_
#define ATTUNE_ENGINE_HOOKS_HOOKS_H_

#include <iosfwd>
#include <string>
#include <vector>

namespace attune::hooks {

// `which` is "guard" or "stop"; `args` are the words after it.
int RunHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
            std::ostream& out, std::ostream& err);

}  // namespace attune::hooks

namespace attune {
using hooks::RunHook;
}  // namespace attune

#endif  // ATTUNE_ENGINE_HOOKS_HOOKS_H_
