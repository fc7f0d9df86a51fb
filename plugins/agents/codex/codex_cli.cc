// Copyright attune authors.
#include "codex_cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

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

Status TypeError(const std::string& key, const char* expected, const json& found) {
  return Status::InvalidArgument("agent codex: with." + key + ": expected " + expected +
                                 ", found " + found.dump());
}

// The declared schema has checked types, ranges and enums before these read the values.
template <typename T>
void ReadNumber(const json& with, const std::string& key, T* out) {
  if (with.contains(key)) *out = with.at(key).get<T>();
}

void ReadString(const json& with, const std::string& key, std::string* out) {
  if (with.contains(key)) *out = with.at(key).get<std::string>();
}

void ReadBool(const json& with, const std::string& key, bool* out) {
  if (with.contains(key)) *out = with.at(key).get<bool>();
}

Status ReadEnv(const json& with, CodexConfig* c) {
  if (!with.contains("env")) return Status::Ok();
  for (const auto& [k, v] : with.at("env").items()) {
    if (v.is_string())
      c->env.emplace_back(k, v.get<std::string>());
    else if (v.is_number() || v.is_boolean())
      c->env.emplace_back(k, v.dump());
    else
      return TypeError("env." + k, "a string", v);
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

constexpr char kGuardFailed[] = "attune codex guard could not run; the call is refused";
// Seconds the guard may take (it only parses and reads the file system: milliseconds), well
// inside the hook's own timeout: Codex runs the call when a hook times out.
constexpr int kGuardLimitS = 10;
constexpr int kGuardHookTimeoutS = 30;

std::string GuardCommand(const CodexConfig& c) {
  agentkit::GuardConfig guard;
  guard.campaign_dir = c.campaign_dir;
  guard.attune_binary = c.attune_binary;
  guard.k8s_namespace = c.k8s_namespace;
  std::vector<std::string> words = {"timeout", "-k", "2", std::to_string(kGuardLimitS)};
  for (std::string& w : HookCommandPrefix(c)) words.push_back(std::move(w));
  words.push_back("guard");
  for (std::string& a : agentkit::GuardArgs(guard)) words.push_back(std::move(a));
  // Codex 0.171 blocks a call only when the hook answers "deny" or exits 2; a hook that cannot
  // run (exit 127), crashes or times out lets the call through. `timeout` ends a stuck guard
  // before Codex's hook timeout, and the shell tail turns any failure into exit 2.
  return HookCommand(words) + " || { echo '" + kGuardFailed + "' >&2; exit 2; }";
}

std::string StopCommand(const CodexConfig& c) {
  agentkit::ContinuationConfig stop{c.campaign_dir, c.attune_binary, c.stop_hook_cap};
  std::vector<std::string> words = HookCommandPrefix(c);
  words.push_back("stop");
  for (std::string& a : agentkit::ContinuationArgs(stop)) words.push_back(std::move(a));
  return HookCommand(words);
}

// Codex 0.171 reads hooks from a `[hooks]` table of config.toml, in Claude Code's shape: a list of
// matcher groups per event, each with a list of command handlers (timeout in seconds).
void WriteHooks(const CodexConfig& c, std::ostream& o) {
  o << "\n[[hooks.PreToolUse]]\nmatcher = \"*\"\n[[hooks.PreToolUse.hooks]]\n"
    << "type = \"command\"\ncommand = " << TomlString(GuardCommand(c))
    << "\ntimeout = " << kGuardHookTimeoutS << "\n";
  o << "\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\n"
    << "type = \"command\"\ncommand = " << TomlString(StopCommand(c)) << "\ntimeout = 60\n";
}

Status CopySkill(const std::string& from, const fs::path& to, std::vector<std::string>* warnings) {
  std::error_code ec;
  if (from.empty() || !fs::is_regular_file(fs::path(from) / "SKILL.md", ec)) {
    warnings->push_back("codex: no SKILL.md in the skill folder '" + from +
                        "'; the agent runs without the attune skill");
    return Status::Ok();
  }
  fs::remove_all(to, ec);  // a stale copy from an older attune must not linger
  fs::create_directories(to, ec);
  fs::copy_file(fs::path(from) / "SKILL.md", to / "SKILL.md", fs::copy_options::overwrite_existing,
                ec);
  if (!ec && fs::is_directory(fs::path(from) / "references")) {
    fs::copy(fs::path(from) / "references", to / "references",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  }
  if (ec) {
    return Status::IoError("codex: cannot install the skill into " + to.string() + ": " +
                           ec.message());
  }
  return Status::Ok();
}

}  // namespace

std::string TomlString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string FindExecutable(const std::string& name) {
  return support::FindExecutable(name, support::NpmBinDirs());
}

Result<CodexConfig> ParseConfig(const PluginContext& context) {
  const json& with = context.config.is_null() ? json::object() : context.config;
  // The declared schema checks keys, types, ranges and enums (as `attune validate` does).
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(codex::kOptionsSchema, with, "agent codex"));
  CodexConfig c;
  std::string binary = "codex";
  ReadString(with, "binary", &binary);
  ReadString(with, "model", &c.model);
  ReadString(with, "base_url", &c.base_url);
  ReadString(with, "env_key", &c.env_key);
  ReadNumber(with, "timeout_s", &c.timeout_s);
  ReadNumber(with, "retries", &c.retries);
  ReadNumber(with, "api_retries", &c.api_retries);
  ReadNumber(with, "stop_hook_cap", &c.stop_hook_cap);
  ReadString(with, "sandbox", &c.sandbox);
  ATTUNE_RETURN_IF_ERROR(ReadEnv(with, &c));
  ReadString(with, "namespace", &c.k8s_namespace);
  ReadString(with, "skill", &c.skill_dir);
  ReadBool(with, "hooks", &c.hooks);
  ReadBool(with, "resume", &c.resume);
  if (c.env_key.empty()) return TypeError("env_key", "a variable name", with.at("env_key"));
  c.binary = FindExecutable(binary);
  if (c.binary.empty()) c.binary = binary;  // reported when Propose cannot start it
  if (c.skill_dir.empty() && !context.data_dir.empty()) c.skill_dir = context.data_dir + "/skill";
  c.attune_binary = context.attune_binary;
  c.campaign_dir = context.campaign_dir;
  c.data_dir = context.data_dir;
  return c;
}

CodexFolders FoldersFor(const std::string& campaign_dir) {
  fs::path root = fs::path(campaign_dir) / "agent" / "codex";
  CodexFolders f;
  f.home = (root / "home").string();
  f.work = (root / "work").string();
  f.tmp = (root / "work" / ".tmp").string();
  return f;
}

std::vector<std::string> HookCommandPrefix(const CodexConfig& c) {
  std::vector<std::string> prefix = {c.attune_binary};
  std::string here = support::ThisModuleDir();  // where this plugin's library is
  if (!here.empty()) prefix.insert(prefix.end(), {"--plugin-path", here});
  prefix.push_back("codex");
  return prefix;
}

std::string ConfigToml(const CodexConfig& c) {
  std::ostringstream o;
  o << "# Written by attune's codex agent plugin for one campaign; rewritten before every run.\n";
  if (!c.model.empty()) o << "model = " << TomlString(c.model) << "\n";
  if (!c.base_url.empty()) o << "model_provider = " << TomlString(kProviderName) << "\n";
  o << "approval_policy = \"never\"\n"
    << "sandbox_mode = " << TomlString(c.sandbox) << "\n"
    << "web_search = \"disabled\"\n"
    // No login shell: bash -l rereads /etc/profile, which resets PATH and loses attune's folder.
    << "allow_login_shell = false\n"
    << "check_for_update_on_startup = false\n";
  o << "\n[sandbox_workspace_write]\nwritable_roots = []\nnetwork_access = false\n"
    << "exclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n";
  o << "\n[analytics]\nenabled = false\n";
  // Hooks are on by default in 0.171 (trust is what gates them, see BuildArgv); said explicitly so
  // a version that turns them off by default still runs them. `collab` offers sub-agent tools
  // (spawn_agent, ...): a sub-agent is another thread this plugin neither sees nor records.
  o << "\n[features]\ncollab = false\n";
  if (c.hooks) o << "hooks = true\n";
  if (!c.base_url.empty()) {
    o << "\n[model_providers." << kProviderName << "]\n"
      << "name = " << TomlString(kProviderName) << "\n"
      << "base_url = " << TomlString(c.base_url) << "\n"
      << "env_key = " << TomlString(c.env_key) << "\n"
      << "wire_api = \"responses\"\n"
      // Codex 0.171 retries an HTTP error under both knobs (1 + request retries, times 1 + stream
      // retries, requests in all); one knob keeps `api_retries` the number of extra requests.
      << "request_max_retries = " << c.api_retries << "\n"
      << "stream_max_retries = 0\n";
  }
  // No [projects] trust entry for the work folder: Codex lists its .agents/skills without one, and
  // an untrusted project's own .codex/ config layer (hooks, settings) is not loaded.
  if (c.hooks) WriteHooks(c, o);
  return o.str();
}

std::vector<std::string> BuildArgv(const CodexConfig& c, const CodexCall& call) {
  std::vector<std::string> argv = {c.binary, "exec"};
  if (!call.resume_session.empty()) argv.push_back("resume");
  argv.insert(argv.end(), {"--json", "--skip-git-repo-check"});
  if (c.hooks) argv.push_back("--dangerously-bypass-hook-trust");
  if (!c.model.empty()) argv.insert(argv.end(), {"-m", c.model});
  // After `--` a prompt that starts with '-' is not read as a flag.
  argv.push_back("--");
  if (!call.resume_session.empty()) argv.push_back(call.resume_session);
  argv.push_back(call.prompt);
  return argv;
}

std::vector<std::pair<std::string, std::string>> ChildEnvironment(const CodexConfig& c,
                                                                  const CodexFolders& folders) {
  // TMPDIR matters beyond tidiness: Codex 0.171 refuses to create its sandbox helper when
  // CODEX_HOME lies under the temporary directory, and then every sandboxed command fails.
  std::vector<std::pair<std::string, std::string>> env = {{"CODEX_HOME", folders.home},
                                                          {"TMPDIR", folders.tmp},
                                                          {"ATTUNE_CAMPAIGN_DIR", c.campaign_dir},
                                                          {"NO_COLOR", "1"}};
  if (!c.attune_binary.empty()) {
    // So the model's `attune status ...` finds the same attune that runs the campaign.
    const char* path = std::getenv("PATH");
    std::string dir = fs::path(c.attune_binary).parent_path().string();
    env.emplace_back("PATH", dir + ":" + (path ? path : "/usr/bin:/bin"));
  }
  for (const auto& kv : c.env) env.push_back(kv);
  return env;
}

std::string CodexPrompt(const std::string& proposal_prompt, const CodexConfig& c,
                        const CodexFolders& folders) {
  static const std::string kClaim = "Your working directory is the campaign directory.";
  std::string where = "Your working directory is a scratch folder of your own (" + folders.work +
                      "); the campaign directory is " + c.campaign_dir + ": run `attune status " +
                      ShellQuote(c.campaign_dir) + " --json` and `attune events " +
                      ShellQuote(c.campaign_dir) +
                      "` there. The attune skill is in .agents/skills/attune/SKILL.md.";
  std::string prompt = proposal_prompt;
  auto at = prompt.find(kClaim);
  if (at != std::string::npos) return prompt.replace(at, kClaim.size(), where);
  return where + "\n\n" + prompt;
}

Status PrepareFolders(const CodexConfig& c, const CodexFolders& folders,
                      std::vector<std::string>* warnings) {
  std::error_code ec;
  for (const std::string& dir : {folders.home, folders.work, folders.tmp}) {
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("codex: cannot create " + dir + ": " + ec.message());
  }
  ATTUNE_RETURN_IF_ERROR(
      support::WriteFileAtomically(folders.home + "/config.toml", ConfigToml(c)));
  return CopySkill(c.skill_dir, fs::path(folders.work) / ".agents" / "skills" / "attune", warnings);
}

std::vector<std::string> EnforcementGaps(const CodexConfig& c) {
  std::vector<std::string> gaps;
  if (!c.hooks) {
    gaps.push_back(
        "codex: hooks are off (`hooks: false`): no guard judges the model's commands; only the "
        "sandbox and the engine's gate apply");
  }
  gaps.push_back(
      "codex: reads are not confined (the sandbox lets commands read the whole file system)");
  gaps.push_back(
      "codex: the PreToolUse hook judges shell commands (tool Bash) and denies every other tool "
      "it is asked about (view_image, goals, ...), but Codex does not ask it about write_stdin "
      "(input to a command the guard already allowed); web search is off and sub-agents are off "
      "in the generated config, and no MCP server is configured");
  gaps.push_back(
      "codex: the sandbox (bubblewrap + seccomp on Linux) must be usable: where it is not, every "
      "command of the model fails rather than running unconfined");
  return gaps;
}

}  // namespace attune::agents
