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
  json input = json::parse(in, nullptr, false);
  if (!input.is_object() || !input.contains("tool_name") || !input.at("tool_name").is_string()) {
    PrintGuardAnswer(false, "attune guard: the hook input is not a PreToolUse JSON object", out);
    return 0;
  }
  std::string cwd = input.value("cwd", config->campaign_dir);
  json tool_input = input.contains("tool_input") ? input.at("tool_input") : json::object();
  agentkit::GuardDecision d =
      JudgeClaudeToolUse(*config, input.at("tool_name").get<std::string>(), tool_input, cwd);
  PrintGuardAnswer(d.allow, d.allow ? "attune guard: allowed" : d.reason, out);
  return 0;
}

std::string StringField(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
}

int Stop(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
         std::ostream& err) {
  auto config = agentkit::ParseContinuationArgs(args);
  if (!config.ok()) {
    err << "attune claude-code stop: " << config.status().message() << "\n";
    return kUsage;
  }
  json input = json::parse(in, nullptr, false);
  if (!input.is_object()) {
    err << "attune claude-code stop: stdin is not the Stop hook's JSON object; letting the agent "
           "stop\n";
    return 0;  // a hook failure must not block the agent forever
  }
  agentkit::StopRequest request;
  request.session_id = StringField(input, "session_id");
  request.after_continuation = input.value("stop_hook_active", false) == true;
  request.last_message = StringField(input, "last_assistant_message");
  agentkit::ContinuationDecision d = agentkit::DecideContinuation(*config, request, err);
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
