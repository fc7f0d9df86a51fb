// Copyright attune authors.
//
// The Gemini CLI hooks, as this plugin's own commands: the CLI runs them as its BeforeTool and
// AfterAgent hooks (Settings in gemini_cli.h writes the command lines). They translate Gemini's
// hook protocol (0.61, checked against the real CLI) to the agent safety envelope
// (attune/agentkit/guard.h) and the continuation rule (attune/agentkit/continuation.h).
//
//   attune --plugin-path DIR gemini guard --campaign-dir D [--namespace NS] [--events-dir E]...
//                                         [--attune PATH]
//     BeforeTool: reads {"session_id","cwd","hook_event_name":"BeforeTool","tool_name",
//     "tool_input"} on stdin and prints {"decision":"allow"} or {"decision":"deny","reason":...};
//     the CLI hands a denial's reason to the model as the tool's error ("Tool execution blocked:
//     <reason>"). Tools: read_file, read_many_files, list_directory, glob, grep_search,
//     activate_skill, update_topic are allowed (reading); write_file, replace, save_memory and
//     write_todos go to JudgeFileWrite; run_shell_command to JudgeCommand (in its dir_path when
//     given); any other tool is denied.
//   attune --plugin-path DIR gemini stop --campaign-dir D [--cap N] [--attune PATH]
//     AfterAgent: reads {"session_id","prompt","prompt_response","stop_hook_active"} and prints
//     {"decision":"deny","reason":...} to keep the agent working (the CLI sends the reason as the
//     next prompt), or {} to let it stop.
//
// Exit codes: 0 answered; 2 usage error (for guard, also printed as a deny so that a broken hook
// line fails closed).
#ifndef ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_HOOKS_H_
#define ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_HOOKS_H_

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attune/agentkit/guard.h"

namespace attune::agents {

// Judges one Gemini tool call (tool_name and tool_input as in the BeforeTool input).
agentkit::GuardDecision JudgeGeminiToolCall(const agentkit::GuardConfig& config,
                                            const std::string& tool_name,
                                            const nlohmann::json& tool_input,
                                            const std::string& cwd);

// `which` is "guard" or "stop"; `args` are the words after it.
int RunGeminiHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
                  std::ostream& out, std::ostream& err);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_HOOKS_H_
