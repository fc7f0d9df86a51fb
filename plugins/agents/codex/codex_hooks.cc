// Copyright attune authors.
#include "codex_hooks.h"

#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "attune/agentkit/continuation.h"

namespace attune::agents {
namespace {

using nlohmann::json;

constexpr int kUsage = 2;

void PrintDenial(const std::string& reason, std::ostream& out) {
  json answer{{"hookSpecificOutput",
               {{"hookEventName", "PreToolUse"},
                {"permissionDecision", "deny"},
                {"permissionDecisionReason", reason}}}};
  out << answer.dump() << "\n";
}

int Guard(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
          std::ostream& err) {
  auto config = agentkit::ParseGuardArgs(args);
  if (!config.ok()) {
    err << "attune codex guard: " << config.status().message() << "\n";
    PrintDenial(
        "attune guard is misconfigured (" + config.status().message() + "); nothing is allowed",
        out);
    return kUsage;
  }
  const auto call = agentkit::ReadToolCall(in, config->campaign_dir);
  if (!call) {
    PrintDenial("attune guard: the hook input is not a PreToolUse JSON object", out);
    return 0;
  }
  agentkit::GuardDecision d = JudgeCodexToolUse(*config, call->tool, call->input, call->cwd);
  if (!d.allow) PrintDenial(d.reason, out);
  return 0;
}

int Stop(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
         std::ostream& err) {
  auto config = agentkit::ParseContinuationArgs(args);
  if (!config.ok()) {
    err << "attune codex stop: " << config.status().message() << "\n";
    return kUsage;
  }
  const auto request = agentkit::ReadStopRequest(in, "last_assistant_message");
  if (!request) {
    err << "attune codex stop: stdin is not the Stop hook's JSON object; letting the agent stop\n";
    return 0;  // a hook failure must not block the agent forever
  }
  agentkit::ContinuationDecision d = agentkit::DecideContinuation(*config, *request, err);
  if (d.keep_working) out << json{{"decision", "block"}, {"reason", d.reason}}.dump() << "\n";
  return 0;
}

}  // namespace

std::string FirstPatchedFile(const std::string& patch) {
  static const char* kMarkers[] = {
      "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "};
  std::istringstream lines(patch);
  std::string line;
  while (std::getline(lines, line)) {
    for (const char* m : kMarkers) {
      if (line.rfind(m, 0) == 0) return line.substr(std::string(m).size());
    }
  }
  return "";
}

agentkit::GuardDecision JudgeCodexToolUse(const agentkit::GuardConfig& config,
                                          const std::string& tool_name,
                                          const nlohmann::json& tool_input,
                                          const std::string& cwd) {
  static const std::set<std::string> kWriteTools = {"apply_patch", "ApplyPatch", "Write", "Edit"};
  if (tool_name == "Bash") {
    std::string command = agentkit::HookString(tool_input, "command");
    if (command.empty()) return {false, "Bash call without a string 'command'"};
    return agentkit::JudgeCommand(config, command, cwd);
  }
  if (kWriteTools.count(tool_name)) {
    std::string path;
    for (const char* key : {"file_path", "path"}) {
      if (path.empty()) path = agentkit::HookString(tool_input, key);
    }
    for (const char* key : {"command", "input", "patch"}) {
      if (path.empty()) path = FirstPatchedFile(agentkit::HookString(tool_input, key));
    }
    return agentkit::JudgeFileWrite(config, tool_name, path, cwd);
  }
  return {false, "the tool '" + tool_name +
                     "' is not allowed here; use read-only shell commands (ls, cat, grep, attune "
                     "status/events)"};
}

int RunCodexHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
                 std::ostream& out, std::ostream& err) {
  if (which == "guard") return Guard(args, in, out, err);
  if (which == "stop") return Stop(args, in, out, err);
  err << "attune codex: unknown hook '" << which << "' (expected guard or stop)\n";
  return kUsage;
}

}  // namespace attune::agents
