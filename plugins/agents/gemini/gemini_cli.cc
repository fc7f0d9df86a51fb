// Copyright attune authors.
#include "gemini_cli.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/agentkit/continuation.h"
#include "attune/agentkit/guard.h"
#include "attune/recipe.h"
#include "attune/support/atomic_file.h"
#include "attune/support/json_schema.h"
#include "attune/support/module_path.h"
#include "attune/support/process.h"
#include "options_schema.h"

namespace attune::agents {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Hook timeouts, milliseconds (Gemini's unit). The guard answers in milliseconds; the stop hook
// runs `attune status`, bounded at 20 s by agentkit.
constexpr int kGuardTimeoutMs = 30000;
constexpr int kStopTimeoutMs = 60000;
constexpr const char* kGuardFailed =
    R"({"decision":"deny","reason":"the attune guard hook failed; the call is refused"})";

// The schema (options_schema.cc) has checked types and ranges already: these only read.
std::string String(const json& with, const char* key, std::string fallback) {
  return with.contains(key) ? with.at(key).get<std::string>() : fallback;
}

template <typename T>
T Number(const json& with, const char* key, T fallback) {
  return with.contains(key) ? with.at(key).get<T>() : fallback;
}

bool Bool(const json& with, const char* key, bool fallback) {
  return with.contains(key) ? with.at(key).get<bool>() : fallback;
}

void ReadEnv(const json& with, GeminiConfig* c) {
  if (!with.contains("env")) return;
  for (const auto& [k, v] : with.at("env").items()) {
    c->env.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
}

std::string HookCommand(const std::vector<std::string>& words) {
  std::string cmd;
  for (const auto& w : words) {
    if (!cmd.empty()) cmd += ' ';
    cmd += ShellQuote(w);
  }
  return cmd;
}

json CommandHook(const std::string& name, const std::string& command, int timeout_ms) {
  return {{"type", "command"}, {"name", name}, {"command", command}, {"timeout", timeout_ms}};
}

// Gemini 0.61 lets a tool run when its BeforeTool hook exits 1 or prints nothing (only JSON output
// or another non-zero exit code denies). The guard always answers in JSON; should attune itself
// fail (a plugin that no longer loads, a crash), the shell turns that into a denial.
std::string FailClosed(const std::string& command) {
  return command + " || { echo " + ShellQuote(kGuardFailed) + "; exit 2; }";
}

std::string TomlString(const std::string& s) {
  return json(s).dump();  // a JSON string literal is a valid TOML basic string
}

Status CopyTree(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(from, ec)) {
    if (!entry.is_regular_file()) continue;
    fs::path rel = fs::relative(entry.path(), from);
    if (rel.string().rfind("past_tuning_projects", 0) == 0) continue;  // lessons reach the prompt
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    fs::create_directories((to / rel).parent_path(), ec);
    ATTUNE_RETURN_IF_ERROR(support::WriteFileAtomically((to / rel).string(), text.str(),
                                                        support::Durability::kCrashOnly));
  }
  if (ec) {
    return Status::Internal("gemini: cannot copy the skill from " + from.string() + " to " +
                            to.string() + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace

std::string FindExecutable(const std::string& name) {
  return support::FindExecutable(name, support::NpmBinDirs());
}

Result<GeminiConfig> ParseConfig(const PluginContext& context) {
  const json& with = context.config.is_null() ? json::object() : context.config;
  // The declared schema checks keys, types and ranges (the same check `attune validate` makes).
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(gemini::kOptionsSchema, with, "agent gemini"));
  GeminiConfig c;
  std::string binary = String(with, "binary", "gemini");
  c.model = String(with, "model", "");
  c.base_url = String(with, "base_url", "");
  c.max_session_turns = Number(with, "max_session_turns", c.max_session_turns);
  c.timeout_s = Number(with, "timeout_s", c.timeout_s);
  c.retries = Number(with, "retries", c.retries);
  c.api_attempts = Number(with, "api_attempts", c.api_attempts);
  c.continuation_cap = Number(with, "continuation_cap", c.continuation_cap);
  ReadEnv(with, &c);
  c.k8s_namespace = String(with, "namespace", "");
  c.skill_dir = String(with, "skill", "");
  c.hooks = Bool(with, "hooks", c.hooks);
  c.resume = Bool(with, "resume", c.resume);
  if (with.contains("tools")) c.tools = with.at("tools").get<std::vector<std::string>>();
  c.binary = FindExecutable(binary);
  if (c.binary.empty()) c.binary = binary;  // reported when Propose cannot start it
  if (c.skill_dir.empty() && !context.data_dir.empty()) c.skill_dir = context.data_dir + "/skill";
  c.attune_binary = context.attune_binary;
  c.campaign_dir = context.campaign_dir;
  c.data_dir = context.data_dir;
  return c;
}

GeminiWorkFolder WorkFolderFor(const std::string& campaign_dir) {
  GeminiWorkFolder f;
  f.root = campaign_dir + "/agent/gemini";
  f.home = f.root + "/home";
  f.settings_path = f.home + "/.gemini/settings.json";
  f.policy_path = f.root + "/policy.toml";
  f.skill_dest = f.home + "/.gemini/skills/attune";
  f.tmp = f.root + "/tmp";
  return f;
}

std::vector<std::string> HookCommandPrefix(const GeminiConfig& c) {
  std::vector<std::string> prefix = {c.attune_binary};
  std::string here = support::ThisModuleDir();  // where this plugin's library is
  if (!here.empty()) prefix.insert(prefix.end(), {"--plugin-path", here});
  prefix.push_back("gemini");
  return prefix;
}

json Settings(const GeminiConfig& c) {
  json s = {
      // Without a selected auth type 0.61 infers "gateway" from GOOGLE_GEMINI_BASE_URL and then
      // refuses it (exit 41, "Invalid auth method selected."); API-key auth keeps the base URL.
      {"security", {{"auth", {{"selectedType", "gemini-api-key"}}}}},
      {"privacy", {{"usageStatisticsEnabled", false}}},
      {"telemetry", {{"enabled", false}}},
      {"general",
       {{"maxAttempts", c.api_attempts},
        {"enableAutoUpdate", false},
        {"enableAutoUpdateNotification", false}}},
      {"model", {{"maxSessionTurns", c.max_session_turns}}},
      {"hooksConfig", {{"enabled", c.hooks}}}};
  if (!c.model.empty()) s["model"]["name"] = c.model;
  if (!c.hooks) return s;
  agentkit::GuardConfig guard_config;
  guard_config.campaign_dir = c.campaign_dir;
  guard_config.attune_binary = c.attune_binary;
  guard_config.k8s_namespace = c.k8s_namespace;
  std::vector<std::string> guard = HookCommandPrefix(c);
  guard.push_back("guard");
  for (std::string& a : agentkit::GuardArgs(guard_config)) guard.push_back(std::move(a));
  agentkit::ContinuationConfig stop_config{c.campaign_dir, c.attune_binary, c.continuation_cap};
  std::vector<std::string> stop = HookCommandPrefix(c);
  stop.push_back("stop");
  for (std::string& a : agentkit::ContinuationArgs(stop_config)) stop.push_back(std::move(a));
  s["hooks"] = {
      {"BeforeTool",
       json::array(
           {{{"matcher", "*"},
             {"hooks", json::array({CommandHook("attune-guard", FailClosed(HookCommand(guard)),
                                                kGuardTimeoutMs)})}}})},
      {"AfterAgent",
       json::array({{{"hooks", json::array({CommandHook("attune-stop", HookCommand(stop),
                                                        kStopTimeoutMs)})}}})}};
  return s;
}

std::string PolicyToml(const GeminiConfig& c) {
  std::string toml =
      "# Written by attune's gemini agent plugin; rewritten before every CLI run.\n"
      "# Every tool is denied unless listed below (`tools:` in the workflow). The BeforeTool hook\n"
      "# (`attune gemini guard`) judges each call of an allowed tool.\n"
      "[[rule]]\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 10\n"
      "denyMessage = \"attune: this tool is not offered to the agent\"\n";
  if (c.tools.empty()) return toml;
  toml += "\n[[rule]]\ntoolName = [";
  for (size_t i = 0; i < c.tools.size(); ++i) {
    toml += (i ? ", " : "") + TomlString(c.tools[i]);
  }
  toml += "]\ndecision = \"allow\"\npriority = 100\n";
  return toml;
}

Status PrepareWorkFolder(const GeminiConfig& c, const GeminiWorkFolder& f) {
  std::error_code ec;
  fs::create_directories(fs::path(f.settings_path).parent_path(), ec);
  if (!ec) fs::create_directories(f.tmp, ec);
  if (ec) {
    return Status::Internal("gemini: cannot create the work folder " + f.home + ": " +
                            ec.message());
  }
  ATTUNE_RETURN_IF_ERROR(support::WriteFileAtomically(f.settings_path, Settings(c).dump(2) + "\n",
                                                      support::Durability::kCrashOnly));
  ATTUNE_RETURN_IF_ERROR(
      support::WriteFileAtomically(f.policy_path, PolicyToml(c), support::Durability::kCrashOnly));
  if (c.skill_dir.empty() || !fs::exists(fs::path(c.skill_dir) / "SKILL.md")) return Status::Ok();
  return CopyTree(c.skill_dir, f.skill_dest);
}

std::vector<std::string> BuildArgv(const GeminiConfig& c, const GeminiWorkFolder& f,
                                   const GeminiCall& call) {
  std::vector<std::string> argv = {
      c.binary,          "-p",      call.prompt, "--output-format", "stream-json", "--skip-trust",
      "--approval-mode", "default", "--policy",  f.policy_path};
  if (!c.model.empty()) argv.insert(argv.end(), {"--model", c.model});
  if (!call.resume_session.empty()) argv.insert(argv.end(), {"--resume", call.resume_session});
  return argv;
}

std::vector<std::pair<std::string, std::string>> ChildEnvironment(const GeminiConfig& c,
                                                                  const GeminiWorkFolder& f) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"HOME", f.home},
      // 0.61 re-executes itself in a second node process to raise the heap limit; one process
      // starts seconds faster and leaves one process group to kill.
      {"GEMINI_CLI_NO_RELAUNCH", "true"},
      {"NO_COLOR", "1"},
      // The CLI writes error reports to the temp directory; keep them in the work folder.
      {"TMPDIR", f.tmp},
      {"ATTUNE_CAMPAIGN_DIR", c.campaign_dir}};
  if (!c.base_url.empty()) env.emplace_back("GOOGLE_GEMINI_BASE_URL", c.base_url);
  if (!c.attune_binary.empty()) {
    // So the model's `attune status ...` finds the same attune that runs the campaign.
    const char* path = std::getenv("PATH");
    std::string dir = fs::path(c.attune_binary).parent_path().string();
    env.emplace_back("PATH", dir + ":" + (path ? path : "/usr/bin:/bin"));
  }
  for (const auto& kv : c.env) env.push_back(kv);
  return env;
}

std::string ExitCodeMeaning(int code) {
  switch (code) {
    case 0:
      return "success";
    case 1:
      return "an error or API failure";
    case 41:
      return "authentication failed (is GEMINI_API_KEY set?)";
    case 42:
      return "bad input (prompt or flags)";
    case 44:
      return "sandbox error";
    case 52:
      return "bad configuration (settings.json or the policy file)";
    case 53:
      return "the session's turn limit (max_session_turns) was reached";
    case 54:
      return "a tool failed fatally";
    case 55:
      return "the folder is not trusted";
    case 130:
      return "cancelled";
    // 0.61 exits with an API error's HTTP status modulo 256 (500 -> 244, 503 -> 247, 429 -> 173).
    case 244:
      return "the API answered HTTP 500 (retries exhausted)";
    case 247:
      return "the API answered HTTP 503 (retries exhausted)";
    case 173:
      return "the API answered HTTP 429 (retries exhausted)";
    default:
      return "an error (for an API error 0.61 exits with the HTTP status modulo 256)";
  }
}

}  // namespace attune::agents
