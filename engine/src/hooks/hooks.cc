// Copyright attune authors.
#include "hooks/hooks.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "hooks/guard_policy.h"
#include "hooks/stop_hook.h"

namespace attune::hooks {
namespace {

using nlohmann::json;

constexpr int kUsage = 2;

// --name value pairs; a repeated name keeps every value. Returns false on a malformed list.
bool ParseFlags(const std::vector<std::string>& args, std::multimap<std::string, std::string>* out,
                std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      *error = "unexpected argument '" + a + "'";
      return false;
    }
    auto eq = a.find('=');
    if (eq != std::string::npos) {
      out->emplace(a.substr(2, eq - 2), a.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      out->emplace(a.substr(2), args[++i]);
    } else {
      *error = "'" + a + "' needs a value";
      return false;
    }
  }
  return true;
}

std::string Get(const std::multimap<std::string, std::string>& flags, const std::string& name) {
  auto it = flags.find(name);
  return it == flags.end() ? "" : it->second;
}

void PrintGuardAnswer(bool allow, const std::string& reason, std::ostream& out) {
  json answer{{"hookSpecificOutput",
               {{"hookEventName", "PreToolUse"},
                {"permissionDecision", allow ? "allow" : "deny"},
                {"permissionDecisionReason", reason}}}};
  out << answer.dump() << "\n";
}

int Guard(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
          std::ostream& err) {
  std::multimap<std::string, std::string> flags;
  std::string error;
  if (!ParseFlags(args, &flags, &error) || Get(flags, "campaign-dir").empty()) {
    if (error.empty()) error = "--campaign-dir is required";
    err << "attune hook guard: " << error << "\n";
    PrintGuardAnswer(false, "attune guard is misconfigured (" + error + "); nothing is allowed",
                     out);
    return kUsage;
  }
  GuardConfig config;
  config.campaign_dir = std::filesystem::absolute(Get(flags, "campaign-dir")).string();
  config.k8s_namespace = Get(flags, "namespace");
  config.attune_binary = Get(flags, "attune");
  config.protected_dirs = FindEventLogDirs(config.campaign_dir);
  for (auto [it, end] = flags.equal_range("events-dir"); it != end; ++it) {
    config.protected_dirs.push_back(std::filesystem::absolute(it->second).string());
  }
  json input = json::parse(in, nullptr, false);
  if (!input.is_object() || !input.contains("tool_name") || !input.at("tool_name").is_string()) {
    PrintGuardAnswer(false, "attune guard: the hook input is not a PreToolUse JSON object", out);
    return 0;
  }
  std::string cwd = input.value("cwd", config.campaign_dir);
  json tool_input = input.contains("tool_input") ? input.at("tool_input") : json::object();
  GuardDecision d = JudgeToolUse(config, input.at("tool_name").get<std::string>(), tool_input, cwd);
  PrintGuardAnswer(d.allow, d.allow ? "attune guard: allowed" : d.reason, out);
  return 0;
}

int Stop(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
         std::ostream& err) {
  std::multimap<std::string, std::string> flags;
  std::string error;
  if (!ParseFlags(args, &flags, &error) || Get(flags, "campaign-dir").empty()) {
    err << "attune hook stop: " << (error.empty() ? "--campaign-dir is required" : error) << "\n";
    return kUsage;
  }
  StopConfig config;
  config.campaign_dir = std::filesystem::absolute(Get(flags, "campaign-dir")).string();
  config.attune_binary = Get(flags, "attune");
  std::string cap = Get(flags, "cap");
  if (!cap.empty()) {
    try {
      config.cap = std::stoi(cap);
    } catch (const std::exception&) {
      err << "attune hook stop: --cap expects a number, got '" << cap << "'\n";
      return kUsage;
    }
  }
  return RunStopHook(config, in, out, err);
}

}  // namespace

int RunHook(const std::string& which, const std::vector<std::string>& args, std::istream& in,
            std::ostream& out, std::ostream& err) {
  if (which == "guard") return Guard(args, in, out, err);
  if (which == "stop") return Stop(args, in, out, err);
  err << "attune hook: unknown hook '" << which << "' (expected guard or stop)\n";
  return kUsage;
}

}  // namespace attune::hooks
