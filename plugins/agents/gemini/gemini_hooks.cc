// Copyright attune authors.
#include "gemini_hooks.h"

#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "attune/agentkit/continuation.h"

namespace attune::agents {
namespace {

using nlohmann::json;

constexpr int kUsage = 2;

void PrintGuardAnswer(bool allow, const std::string& reason, std::ostream& out) {
  json answer =
      allow ? json{{"decision", "allow"}} : json{{"decision", "deny"}, {"reason", reason}};
  out << answer.dump() << "\n";
}

int Guard(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
          std::ostream& err) {
  auto config = agentkit::ParseGuardArgs(args);
  if (!config.ok()) {
    err << "attune gemini guard: " << config.status().message() << "\n";
    PrintGuardAnswer(
        false,
        "attune guard is misconfigured (" + config.status().message() + "); nothing is allowed",
        out);
    return kUsage;
  }
  const auto call = agentkit::ReadToolCall(in, config->campaign_dir);
  if (!call) {
    PrintGuardAnswer(false, "attune guard: the hook input is not a BeforeTool JSON object", out);
    return 0;
  }
  agentkit::GuardDecision d = JudgeGeminiToolCall(*config, call->tool, call->input, call->cwd);
  PrintGuardAnswer(d.allow, d.reason, out);
  return 0;
}

int Stop(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
         std::ostream& err) {
  auto config = agentkit::ParseContinuationArgs(args);
  if (!config.ok()) {
    err << "attune gemini stop: " << config.status().message() << "\n";
    return kUsage;
  }
  // prompt_response holds the whole turn's text; its last JSON object is the answer, if any.
  const auto request = agentkit::ReadStopRequest(in, "prompt_response");
  if (!request) {
    err << "attune gemini stop: stdin is not the AfterAgent hook's JSON object; letting the agent "
           "stop\n";
    out << "{}\n";
    return 0;  // a hook failure must not keep the agent going forever
  }
  agentkit::ContinuationDecision d = agentkit::DecideContinuation(*config, *request, err);
  out << (d.keep_working ? json{{"decision", "deny"}, {"reason", d.reason}} : json::object()).dump()
      << "\n";
  return 0;
}

}  // namespace

agentkit::GuardDecision JudgeGeminiToolCall(const agentkit::GuardConfig& config,
                                            const std::string& tool_name,
                                            const nlohmann::json& tool_input,
                                            const std::string& cwd) {
  static const std::set<std::string> kReadTools = {
      "read_file",   "read_many_files", "list_directory", "glob",
      "grep_search", "activate_skill",  "update_topic"};
  static const std::set<std::string> kWriteTools = {"write_file", "replace", "save_memory",
                                                    "write_todos"};
  if (kReadTools.count(tool_name)) return {true, "read-only tool"};
  if (kWriteTools.count(tool_name)) {
    std::string path = agentkit::HookString(tool_input, "file_path");
    return agentkit::JudgeFileWrite(config, tool_name, path, cwd);
  }
  if (tool_name == "run_shell_command") {
    std::string command = agentkit::HookString(tool_input, "command");
    if (command.empty()) return {false, "run_shell_command without a string 'command'"};
    std::string dir = agentkit::HookString(tool_input, "dir_path");
    std::string where =
        dir.empty() ? cwd : std::filesystem::absolute(std::filesystem::path(cwd) / dir).string();
    return agentkit::JudgeCommand(config, command, where);
  }
  return {false, "the tool '" + tool_name +
                     "' is not allowed; use read_file, grep_search, glob, list_directory or "
                     "read-only run_shell_command commands"};
}

int RunGeminiHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
                  std::ostream& out, std::ostream& err) {
  if (which == "guard") return Guard(args, in, out, err);
  if (which == "stop") return Stop(args, in, out, err);
  err << "attune gemini: unknown hook '" << which << "' (expected guard or stop)\n";
  return kUsage;
}

}  // namespace attune::agents
