// Copyright attune authors.
#include "claude_cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "attune/agentkit/continuation.h"
#include "attune/agentkit/guard.h"
#include "attune/recipe.h"
#include "attune/support/json_schema.h"
#include "attune/support/module_path.h"
#include "attune/support/process.h"
#include "options_schema.h"

namespace attune::agents {
namespace {

using nlohmann::json;

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

Status TypeError(const std::string& key, const char* expected, const json& found) {
  return Status::InvalidArgument("agent claude-code: with." + key + ": expected " + expected +
                                 ", found " + found.dump());
}

template <typename T>
Status ReadNumber(const json& with, const std::string& key, T* out, double min) {
  if (!with.contains(key)) return Status::Ok();
  const json& v = with.at(key);
  if (!v.is_number() || v.get<double>() < min) {
    return TypeError(key, ("a number >= " + std::to_string(min)).c_str(), v);
  }
  *out = v.get<T>();
  return Status::Ok();
}

Status ReadString(const json& with, const std::string& key, std::string* out) {
  if (!with.contains(key)) return Status::Ok();
  if (!with.at(key).is_string()) return TypeError(key, "a string", with.at(key));
  *out = with.at(key).get<std::string>();
  return Status::Ok();
}

Status ReadBool(const json& with, const std::string& key, bool* out) {
  if (!with.contains(key)) return Status::Ok();
  if (!with.at(key).is_boolean()) return TypeError(key, "true or false", with.at(key));
  *out = with.at(key).get<bool>();
  return Status::Ok();
}

Status ReadEnv(const json& with, ClaudeCodeConfig* c) {
  if (!with.contains("env")) return Status::Ok();
  const json& env = with.at("env");
  if (!env.is_object()) return TypeError("env", "a map of NAME: value", env);
  for (const auto& [k, v] : env.items()) {
    if (v.is_string())
      c->env.emplace_back(k, v.get<std::string>());
    else if (v.is_number() || v.is_boolean())
      c->env.emplace_back(k, v.dump());
    else
      return TypeError("env." + k, "a string", v);
  }
  return Status::Ok();
}

Status ReadTools(const json& with, ClaudeCodeConfig* c) {
  if (!with.contains("tools")) return Status::Ok();
  const json& t = with.at("tools");
  if (!t.is_array()) return TypeError("tools", "a list of tool names", t);
  c->tools.clear();
  for (const auto& item : t) {
    if (!item.is_string()) return TypeError("tools[]", "a string", item);
    c->tools.push_back(item.get<std::string>());
  }
  return Status::Ok();
}

std::string HookCommand(const std::vector<std::string>& words) {
  std::string cmd;
  for (const auto& w : words) {
    if (!cmd.empty()) cmd += ' ';
    cmd += ShellQuote(w);
  }
  return cmd;
}

}  // namespace

std::string FindExecutable(const std::string& name) {
  return support::FindExecutable(name, support::NpmBinDirs());
}

Result<ClaudeCodeConfig> ParseConfig(const PluginContext& context) {
  const json& with = context.config.is_null() ? json::object() : context.config;
  // The declared schema checks keys, types and ranges (the same check `attune validate` makes).
  ATTUNE_RETURN_IF_ERROR(
      support::ValidateOptions(claude_code::kOptionsSchema, with, "agent claude-code"));
  ClaudeCodeConfig c;
  std::string binary = "claude";
  ATTUNE_RETURN_IF_ERROR(ReadString(with, "binary", &binary));
  ATTUNE_RETURN_IF_ERROR(ReadString(with, "model", &c.model));
  ATTUNE_RETURN_IF_ERROR(ReadNumber(with, "max_turns", &c.max_turns, 1));
  ATTUNE_RETURN_IF_ERROR(ReadNumber(with, "timeout_s", &c.timeout_s, 1));
  ATTUNE_RETURN_IF_ERROR(ReadNumber(with, "retries", &c.retries, 0));
  ATTUNE_RETURN_IF_ERROR(ReadNumber(with, "api_retries", &c.api_retries, 0));
  ATTUNE_RETURN_IF_ERROR(ReadNumber(with, "stop_hook_cap", &c.stop_hook_cap, 0));
  if (with.contains("max_budget_usd")) {
    double b = 0;
    ATTUNE_RETURN_IF_ERROR(ReadNumber(with, "max_budget_usd", &b, 0));
    c.max_budget_usd = b;
  }
  ATTUNE_RETURN_IF_ERROR(ReadEnv(with, &c));
  ATTUNE_RETURN_IF_ERROR(ReadString(with, "namespace", &c.k8s_namespace));
  ATTUNE_RETURN_IF_ERROR(ReadString(with, "skill", &c.skill_path));
  ATTUNE_RETURN_IF_ERROR(ReadBool(with, "hooks", &c.hooks));
  ATTUNE_RETURN_IF_ERROR(ReadBool(with, "resume", &c.resume));
  ATTUNE_RETURN_IF_ERROR(ReadString(with, "permission_mode", &c.permission_mode));
  ATTUNE_RETURN_IF_ERROR(ReadTools(with, &c));
  c.binary = FindExecutable(binary);
  if (c.binary.empty()) c.binary = binary;  // reported when Propose cannot start it
  if (c.skill_path.empty() && !context.data_dir.empty()) {
    c.skill_path = context.data_dir + "/skill/SKILL.md";
  }
  c.attune_binary = context.attune_binary;
  c.campaign_dir = context.campaign_dir;
  c.data_dir = context.data_dir;
  return c;
}

std::vector<std::string> HookCommandPrefix(const ClaudeCodeConfig& c) {
  std::vector<std::string> prefix = {c.attune_binary};
  std::string here = support::ThisModuleDir();  // where this plugin's library is
  if (!here.empty()) prefix.insert(prefix.end(), {"--plugin-path", here});
  prefix.push_back("claude-code");
  return prefix;
}

// Claude Code blocks a call when PreToolUse answers "deny" or exits 2; any other failure (attune
// not found: 127, a crash, a refused plugin) is a non-blocking error and the call runs. The shell
// tail makes every such failure a refusal.
constexpr char kGuardFailed[] = "attune claude-code guard could not run; the call is refused";

json HookSettings(const ClaudeCodeConfig& c) {
  agentkit::GuardConfig guard_config;
  guard_config.campaign_dir = c.campaign_dir;
  guard_config.attune_binary = c.attune_binary;
  guard_config.k8s_namespace = c.k8s_namespace;
  std::vector<std::string> guard = HookCommandPrefix(c);
  guard.push_back("guard");
  for (std::string& a : agentkit::GuardArgs(guard_config)) guard.push_back(std::move(a));
  agentkit::ContinuationConfig stop_config{c.campaign_dir, c.attune_binary, c.stop_hook_cap};
  std::vector<std::string> stop = HookCommandPrefix(c);
  stop.push_back("stop");
  for (std::string& a : agentkit::ContinuationArgs(stop_config)) stop.push_back(std::move(a));
  json pre = {
      {"matcher", "*"},
      {"hooks",
       json::array({{{"type", "command"},
                     {"command", HookCommand(guard) + " || { echo '" + kGuardFailed + "' >&2; exit 2; }"},
                     {"timeout", 30}}})}};
  json st = {
      {"hooks",
       json::array({{{"type", "command"}, {"command", HookCommand(stop)}, {"timeout", 60}}})}};
  return json{{"hooks", {{"PreToolUse", json::array({pre})}, {"Stop", json::array({st})}}}};
}

std::vector<std::string> BuildArgv(const ClaudeCodeConfig& c, const ClaudeCall& call) {
  // The prompt comes right after -p: --allowedTools takes a variable number of words and would
  // swallow a prompt placed after it.
  std::vector<std::string> argv = {c.binary,
                                   "-p",
                                   call.prompt,
                                   "--output-format",
                                   "json",
                                   "--max-turns",
                                   std::to_string(c.max_turns),
                                   "--permission-mode",
                                   c.permission_mode};
  std::string tools;
  for (const auto& t : c.tools) {
    if (!tools.empty()) tools += ',';
    tools += t;
  }
  argv.insert(argv.end(), {"--tools", tools});
  if (c.hooks) argv.insert(argv.end(), {"--settings", HookSettings(c).dump()});
  if (!c.model.empty()) argv.insert(argv.end(), {"--model", c.model});
  if (!call.resume_session.empty()) argv.insert(argv.end(), {"--resume", call.resume_session});
  if (call.max_budget_usd) {
    std::ostringstream b;
    b << *call.max_budget_usd;
    argv.insert(argv.end(), {"--max-budget-usd", b.str()});
  }
  if (!call.append_system_prompt.empty()) {
    argv.insert(argv.end(), {"--append-system-prompt", call.append_system_prompt});
  }
  argv.insert(argv.end(), {"--allowedTools", "Read", "Grep", "Glob", "Bash(attune status:*)",
                           "Bash(attune events:*)", "Bash(attune stack show:*)",
                           "Bash(attune log:*)", "Bash(attune gate check:*)"});
  return argv;
}

std::vector<std::pair<std::string, std::string>> ChildEnvironment(const ClaudeCodeConfig& c) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"CLAUDE_CODE_MAX_RETRIES", std::to_string(c.api_retries)},
      {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
      {"DISABLE_TELEMETRY", "1"},
      {"DISABLE_AUTOUPDATER", "1"},
      {"DISABLE_ERROR_REPORTING", "1"},
      {"ATTUNE_CAMPAIGN_DIR", c.campaign_dir}};
  if (!c.attune_binary.empty()) {
    // So the model's `attune status ...` finds the same attune that runs the campaign.
    const char* path = std::getenv("PATH");
    std::string dir = std::filesystem::path(c.attune_binary).parent_path().string();
    env.emplace_back("PATH", dir + ":" + (path ? path : "/usr/bin:/bin"));
  }
  for (const auto& kv : c.env) env.push_back(kv);
  return env;
}

ClaudeRun ReadRun(const support::ProcessResult& p) {
  ClaudeRun r;
  json j = json::parse(p.out, nullptr, false);
  if (!j.is_object()) {
    r.error = "the CLI did not print a JSON result (exit code " + std::to_string(p.exit_code) +
              (p.signal ? ", signal " + std::to_string(p.signal) : "") +
              "); stderr: " + Tail(p.err, 600) + "; stdout: " + Tail(p.out, 300);
    return r;
  }
  r.session_id = j.value("session_id", "");
  r.num_turns = j.value("num_turns", 0);
  r.total_cost_usd = j.contains("total_cost_usd") && j["total_cost_usd"].is_number()
                         ? j["total_cost_usd"].get<double>()
                         : 0.0;
  r.subtype = j.value("subtype", "");
  r.terminal_reason = j.value("terminal_reason", "");
  if (j.contains("permission_denials") && j["permission_denials"].is_array()) {
    r.permission_denials = static_cast<int>(j["permission_denials"].size());
  }
  bool is_error = j.value("is_error", false);
  bool has_result = j.contains("result") && j["result"].is_string();
  if (has_result) r.result = j["result"].get<std::string>();
  r.ok = p.exit_code == 0 && !is_error && has_result;
  if (!r.ok) {
    std::string errors = j.contains("errors") ? j["errors"].dump() : "";
    r.error = "the CLI reported " + (r.subtype.empty() ? std::string("an error") : r.subtype) +
              " (exit code " + std::to_string(p.exit_code) + ", is_error " +
              (is_error ? "true" : "false") +
              (r.terminal_reason.empty() ? "" : ", terminal_reason " + r.terminal_reason) + ")" +
              (errors.empty() ? "" : ": " + errors) +
              (has_result ? ": " + Tail(r.result, 400) : "");
  }
  return r;
}

}  // namespace attune::agents
