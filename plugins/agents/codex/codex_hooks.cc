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

std::string StringField(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>()
                                                                   : "";
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
  json input = json::parse(in, nullptr, false);
  if (!input.is_object() || StringField(input, "tool_name").empty()) {
    PrintDenial("attune guard: the hook input is not a PreToolUse JSON object", out);
    return 0;
  }
  std::string cwd = StringField(input, "cwd");
  if (cwd.empty()) cwd = config->campaign_dir;
  json tool_input = input.contains("tool_input") ? input.at("tool_input") : json::object();
  agentkit::GuardDecision d =
      JudgeCodexToolUse(*config, StringField(input, "tool_name"), tool_input, cwd);
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
  json input = json::parse(in, nullptr, false);
  if (!input.is_object()) {
    err << "attune codex stop: stdin is not the Stop hook's JSON object; letting the agent stop\n";
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
    std::string command = StringField(tool_input, "command");
    if (command.empty()) return {false, "Bash call without a string 'command'"};
    return agentkit::JudgeCommand(config, command, cwd);
  }
  if (kWriteTools.count(tool_name)) {
    std::string path;
    for (const char* key : {"file_path", "path"}) {
      if (path.empty()) path = StringField(tool_input, key);
    }
    for (const char* key : {"command", "input", "patch"}) {
      if (path.empty()) path = FirstPatchedFile(StringField(tool_input, key));
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
