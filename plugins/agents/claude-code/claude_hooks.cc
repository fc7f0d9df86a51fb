// Copyright attune authors.
#include "claude_hooks.h"

#include <iostream>
#include <set>
#include <string>

#include "attune/agentkit/continuation.h"

namespace attune::agents {
namespace {

using nlohmann::json;

constexpr int kUsage = 2;

void PrintGuardAnswer(bool allow, const std::string& reason, std::ostream& out) {
  json answer{{"hookSpecificOutput",
               {{"hookEventName", "PreToolUse"},
                {"permissionDecision", allow ? "allow" : "deny"},
                {"permissionDecisionReason", reason}}}};
  out << answer.dump() << "\n";
}

int Guard(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
          std::ostream& err) {
  auto config = agentkit::ParseGuardArgs(args);
  if (!config.ok()) {
    err << "attune claude-code guard: " << config.status().message() << "\n";
    PrintGuardAnswer(false,
                     "attune guard is misconfigured (" + config.status().message() +
                         "); nothing is allowed",
                     out);
    return kUsage;
  }
  const auto call = agentkit::ReadToolCall(in, config->campaign_dir);
  if (!call) {
    PrintGuardAnswer(false, "attune guard: the hook input is not a PreToolUse JSON object", out);
    return 0;
  }
  agentkit::GuardDecision d = JudgeClaudeToolUse(*config, call->tool, call->input, call->cwd);
  PrintGuardAnswer(d.allow, d.allow ? "attune guard: allowed" : d.reason, out);
  return 0;
}

int Stop(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
         std::ostream& err) {
  auto config = agentkit::ParseContinuationArgs(args);
  if (!config.ok()) {
    err << "attune claude-code stop: " << config.status().message() << "\n";
    return kUsage;
  }
  const auto request = agentkit::ReadStopRequest(in, "last_assistant_message");
  if (!request) {
    err << "attune claude-code stop: stdin is not the Stop hook's JSON object; letting the agent "
           "stop\n";
    return 0;  // a hook failure must not block the agent forever
  }
  agentkit::ContinuationDecision d = agentkit::DecideContinuation(*config, *request, err);
  if (d.keep_working) out << json{{"decision", "block"}, {"reason", d.reason}}.dump() << "\n";
  return 0;
}

}  // namespace

agentkit::GuardDecision JudgeClaudeToolUse(const agentkit::GuardConfig& config,
                                           const std::string& tool_name,
                                           const nlohmann::json& tool_input,
                                           const std::string& cwd) {
  static const std::set<std::string> kReadTools = {"Read",  "Grep",      "Glob",        "LS",
                                                   "Skill", "TodoWrite", "NotebookRead"};
  static const std::set<std::string> kWriteTools = {"Write", "Edit", "MultiEdit", "NotebookEdit"};
  if (kReadTools.count(tool_name)) return {true, "read-only tool"};
  if (kWriteTools.count(tool_name)) {
    std::string path;
    for (const char* key : {"file_path", "notebook_path", "path"}) {
      if (tool_input.contains(key) && tool_input.at(key).is_string()) {
        path = tool_input.at(key).get<std::string>();
      }
    }
    return agentkit::JudgeFileWrite(config, tool_name, path, cwd);
  }
  if (tool_name == "Bash") {
    if (!tool_input.is_object() || !tool_input.contains("command") ||
        !tool_input.at("command").is_string()) {
      return {false, "Bash call without a string 'command'"};
    }
    return agentkit::JudgeCommand(config, tool_input.at("command").get<std::string>(), cwd);
  }
  return {false, "the tool '" + tool_name +
                     "' is not allowed; use Read, Grep, Glob or read-only Bash commands"};
}

int RunClaudeHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
                  std::ostream& out, std::ostream& err) {
  if (which == "guard") return Guard(args, in, out, err);
  if (which == "stop") return Stop(args, in, out, err);
  err << "attune claude-code: unknown hook '" << which << "' (expected guard or stop)\n";
  return kUsage;
}

}  // namespace attune::agents
