// Copyright attune authors.
//
// The codex plugin's pieces that need no CLI: the configuration and its errors, config.toml, the
// command line, the prompt, the JSONL reader (on lines as Codex 0.171.0 prints them) and the hook
// translation (Codex's PreToolUse input in, Codex's answers out).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/agentkit/prompt.h"
#include "codex_agent.h"
#include "codex_cli.h"
#include "codex_events.h"
#include "codex_hooks.h"

using namespace attune;
using namespace attune::agents;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

CodexConfig Config() {
  PluginContext ctx;
  ctx.config =
      json{{"binary", "/opt/codex"}, {"model", "gpt-test"}, {"base_url", "http://127.0.0.1:9/v1"},
           {"env_key", "MY_KEY"},    {"api_retries", 1},    {"namespace", "tune"}};
  ctx.campaign_dir = "/camp";
  ctx.attune_binary = "/usr/bin/attune";
  auto c = ParseConfig(ctx);
  REQUIRE(c.ok());
  return *c;
}

support::ProcessResult Output(int exit_code, const std::string& out) {
  support::ProcessResult p;
  p.exit_code = exit_code;
  p.out = out;
  return p;
}

// Lines as Codex 0.171.0 printed them against the fake server (ids shortened).
const char kGoodRun[] =
    R"({"type":"thread.started","thread_id":"01a2412e-2a67-7582-be68-e0cc28bb1996"})"
    "\n"
    R"({"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found."}})"
    "\n"
    R"({"type":"turn.started"})"
    "\n"
    R"({"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"checking"}})"
    "\n"
    R"({"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'ls'","aggregated_output":"x\n","exit_code":0,"status":"completed"}})"
    "\n"
    R"({"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"{\"done\":true}"}})"
    "\n"
    R"({"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":7,"cache_write_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":0}})"
    "\n";

const char kFailedRun[] =
    R"({"type":"thread.started","thread_id":"t1"})"
    "\n"
    R"({"type":"turn.started"})"
    "\n"
    R"({"type":"error","message":"We're currently experiencing high demand"})"
    "\n"
    R"({"type":"turn.failed","error":{"message":"We're currently experiencing high demand"}})"
    "\n";

agentkit::GuardConfig Guard() {
  agentkit::GuardConfig g;
  g.campaign_dir = "/camp";
  g.k8s_namespace = "tune";
  g.protected_dirs = {"/camp/events"};
  return g;
}

std::string RunHook(const std::string& which, const std::vector<std::string>& args,
                    const json& input, int* code = nullptr) {
  std::istringstream in(input.dump());
  std::ostringstream out, err;
  int rc = RunCodexHook(which, args, in, out, err);
  if (code) *code = rc;
  return out.str();
}

}  // namespace

TEST_CASE("codex options: defaults, and errors name the key", "[codex][config]") {
  PluginContext ctx;
  ctx.data_dir = "/data";
  auto c = ParseConfig(ctx);
  REQUIRE(c.ok());
  CHECK(c->sandbox == "workspace-write");
  CHECK(c->env_key == "OPENAI_API_KEY");
  CHECK(c->skill_dir == "/data/skill");
  CHECK(c->hooks);
  ctx.config = json{{"sandbox", "danger-full-access"}};
  auto bad = ParseConfig(ctx);
  REQUIRE_FALSE(bad.ok());
  CHECK(Contains(bad.status().message(), "sandbox"));
  ctx.config = json{{"timeout", 3}};
  auto unknown = ParseConfig(ctx);
  REQUIRE_FALSE(unknown.ok());
  CHECK(Contains(unknown.status().message(), "timeout"));
}

TEST_CASE(
    "config.toml: provider, never-ask approvals, a sandbox confined to the work folder, "
    "the hooks",
    "[codex][config]") {
  CodexConfig c = Config();
  CodexFolders f = FoldersFor(c.campaign_dir);
  CHECK(f.home == "/camp/agent/codex/home");
  CHECK(f.work == "/camp/agent/codex/work");
  CHECK(f.tmp == "/camp/agent/codex/work/.tmp");
  std::string toml = ConfigToml(c);
  CHECK(Contains(toml, "model = \"gpt-test\"\n"));
  CHECK(Contains(toml, "model_provider = \"attune\"\n"));
  CHECK(Contains(toml, "[model_providers.attune]\n"));
  CHECK(Contains(toml, "base_url = \"http://127.0.0.1:9/v1\"\n"));
  CHECK(Contains(toml, "env_key = \"MY_KEY\"\n"));
  CHECK(Contains(toml, "wire_api = \"responses\"\n"));
  CHECK(Contains(toml, "request_max_retries = 1\nstream_max_retries = 0\n"));
  CHECK(Contains(toml, "approval_policy = \"never\"\n"));
  CHECK(Contains(toml, "sandbox_mode = \"workspace-write\"\n"));
  CHECK(Contains(toml, "exclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n"));
  CHECK(Contains(toml, "network_access = false\n"));
  CHECK(Contains(toml, "web_search = \"disabled\"\n"));
  CHECK(Contains(toml, "allow_login_shell = false\n"));
  CHECK(Contains(toml, "[features]\ncollab = false\nhooks = true\n"));
  CHECK(Contains(toml, "[[hooks.PreToolUse]]\nmatcher = \"*\"\n"));
  CHECK(Contains(toml, "command = \"timeout -k 2 10 /usr/bin/attune "));
  CHECK(Contains(toml, "\ntimeout = 30\n"));
  CHECK(
      Contains(toml, "codex guard --campaign-dir /camp --attune /usr/bin/attune --namespace tune"));
  CHECK(Contains(toml,
                 "--namespace tune || { echo 'attune codex guard could not run; the call is "
                 "refused' >&2; exit 2; }\"\n"));
  CHECK(Contains(toml, "[[hooks.Stop]]\n"));
  CHECK_FALSE(Contains(toml, "[projects"));
  CHECK(Contains(toml, "codex stop --campaign-dir /camp --attune /usr/bin/attune --cap 3"));
  c.hooks = false;
  c.base_url.clear();
  std::string bare = ConfigToml(c);
  CHECK_FALSE(Contains(bare, "[[hooks."));
  CHECK_FALSE(Contains(bare, "model_provider"));
}

TEST_CASE("TOML strings escape quotes, backslashes and control characters", "[codex][config]") {
  CHECK(TomlString("a\"b\\c\nd") == "\"a\\\"b\\\\c\\nd\"");
  CHECK(TomlString(std::string("x\x01")) == "\"x\\u0001\"");
}

TEST_CASE("argv: a new session, and a resumed one, with the prompt after --", "[codex][argv]") {
  CodexConfig c = Config();
  auto fresh = BuildArgv(c, {"-hello", ""});
  CHECK(fresh == std::vector<std::string>{"/opt/codex", "exec", "--json", "--skip-git-repo-check",
                                          "--dangerously-bypass-hook-trust", "-m", "gpt-test", "--",
                                          "-hello"});
  auto resumed = BuildArgv(c, {"again", "sid-1"});
  CHECK(resumed == std::vector<std::string>{"/opt/codex", "exec", "resume", "--json",
                                            "--skip-git-repo-check",
                                            "--dangerously-bypass-hook-trust", "-m", "gpt-test",
                                            "--", "sid-1", "again"});
  c.hooks = false;
  c.model.clear();
  CHECK(BuildArgv(c, {"p", ""}) == std::vector<std::string>{"/opt/codex", "exec", "--json",
                                                            "--skip-git-repo-check", "--", "p"});
}

TEST_CASE("the child gets its own CODEX_HOME and a TMPDIR outside /tmp", "[codex][argv]") {
  CodexConfig c = Config();
  auto env = ChildEnvironment(c, FoldersFor("/camp"));
  auto get = [&](const std::string& k) {
    for (const auto& [name, value] : env)
      if (name == k) return value;
    return std::string();
  };
  CHECK(get("CODEX_HOME") == "/camp/agent/codex/home");
  CHECK(get("TMPDIR") == "/camp/agent/codex/work/.tmp");
  CHECK(get("PATH").rfind("/usr/bin:", 0) == 0);
}

TEST_CASE("the prompt tells Codex where it works and where the campaign is", "[codex][prompt]") {
  CodexConfig c = Config();
  CampaignView v;
  v.stack = "megatron";
  std::string prompt = CodexPrompt(agentkit::BuildProposalPrompt(v), c, FoldersFor("/camp"));
  // Pins agentkit's sentence: if it changes, this plugin's replacement must follow.
  CHECK_FALSE(Contains(prompt, "Your working directory is the campaign directory."));
  CHECK(Contains(prompt, "scratch folder of your own (/camp/agent/codex/work)"));
  CHECK(Contains(prompt, "attune status /camp --json"));
}

TEST_CASE("the JSONL reader: session, usage, the last message, commands", "[codex][events]") {
  CodexRun r = ReadRun(Output(0, kGoodRun));
  CHECK(r.ok);
  CHECK(r.session_id == "01a2412e-2a67-7582-be68-e0cc28bb1996");
  CHECK(r.turns == 1);
  CHECK(r.session_usage.input == 300);
  CHECK(r.session_usage.cached_input == 7);
  CHECK(r.session_usage.output == 60);
  CHECK(r.commands == 1);
  CHECK(r.result == "{\"done\":true}");
  CHECK(r.errors.empty());  // an error *item* (a warning) is not an error of the run
}

TEST_CASE("the JSONL reader: a failed turn, no events, a non-zero exit", "[codex][events]") {
  CodexRun failed = ReadRun(Output(1, kFailedRun));
  CHECK_FALSE(failed.ok);
  CHECK(failed.session_id == "t1");
  CHECK(Contains(failed.error, "the turn failed (exit code 1)"));
  CHECK(Contains(failed.error, "high demand"));
  auto silent = Output(2, "not json\n");
  silent.err = "Error: Model provider `x` not found";
  CodexRun none = ReadRun(silent);
  CHECK_FALSE(none.ok);
  CHECK(Contains(none.error, "no JSON events"));
  CHECK(Contains(none.error, "Model provider"));
  CHECK_FALSE(ReadRun(Output(1, kGoodRun)).ok);
}

TEST_CASE("Codex tool calls: Bash judged as a command, patches as writes, others denied",
          "[codex][guard]") {
  auto g = Guard();
  CHECK(JudgeCodexToolUse(g, "Bash", json{{"command", "attune status /camp --json"}}, "/w").allow);
  auto k = JudgeCodexToolUse(g, "Bash", json{{"command", "kubectl -n other get pods"}}, "/w");
  CHECK_FALSE(k.allow);
  CHECK(Contains(k.reason, "outside the campaign's namespace"));
  CHECK_FALSE(JudgeCodexToolUse(g, "Bash", json{{"command", "echo x > /etc/y"}}, "/w").allow);
  CHECK_FALSE(JudgeCodexToolUse(g, "Bash", json::object(), "/w").allow);
  auto patch = JudgeCodexToolUse(
      g, "apply_patch",
      json{{"command", "*** Begin Patch\n*** Update File: /camp/events/LOG\n@@\n*** End Patch"}},
      "/w");
  CHECK_FALSE(patch.allow);
  CHECK(Contains(patch.reason, "event log"));
  CHECK_FALSE(JudgeCodexToolUse(g, "mcp__x__y", json::object(), "/w").allow);
  CHECK(FirstPatchedFile("*** Begin Patch\n*** Add File: a/b.txt\n+x\n") == "a/b.txt");
  CHECK(FirstPatchedFile("no patch") == "");
}

TEST_CASE("the guard hook answers a denial in Codex's format and nothing for an allowed call",
          "[codex][hooks]") {
  std::vector<std::string> args = {"--campaign-dir", "/camp", "--namespace", "tune"};
  json input = {{"hook_event_name", "PreToolUse"},
                {"tool_name", "Bash"},
                {"cwd", "/camp"},
                {"tool_input", {{"command", "kubectl get pods -A"}}}};
  json denial = json::parse(RunHook("guard", args, input));
  CHECK(denial["hookSpecificOutput"]["hookEventName"] == "PreToolUse");
  CHECK(denial["hookSpecificOutput"]["permissionDecision"] == "deny");
  CHECK(Contains(denial["hookSpecificOutput"]["permissionDecisionReason"].get<std::string>(),
                 "every namespace"));
  input["tool_input"]["command"] = "ls -la";
  CHECK(RunHook("guard", args, input).empty());
  int code = 0;
  json broken = json::parse(RunHook("guard", {"--bogus"}, input, &code));
  CHECK(code == 2);
  CHECK(broken["hookSpecificOutput"]["permissionDecision"] == "deny");
  json garbage = json::parse(RunHook("guard", args, json("not an object")));
  CHECK(garbage["hookSpecificOutput"]["permissionDecision"] == "deny");
}

TEST_CASE("the stop hook lets Codex stop when the answer is there or the status is unreadable",
          "[codex][hooks]") {
  fs::path dir = fs::temp_directory_path() / ("attune-codex-stop-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::string> args = {"--campaign-dir", dir.string(), "--attune", "/bin/false"};
  json input = {{"hook_event_name", "Stop"},
                {"session_id", "s"},
                {"stop_hook_active", false},
                {"last_assistant_message", "thinking"}};
  CHECK(RunHook("stop", args, input).empty());  // `attune status` fails: let it stop
  input["last_assistant_message"] = "```json\n{\"done\":true,\"rationale\":\"r\"}\n```";
  CHECK(RunHook("stop", args, input).empty());
  int code = 0;
  RunHook("stop", {}, input, &code);
  CHECK(code == 2);
  fs::remove_all(dir);
}

TEST_CASE("the last codex session comes from this agent's own meta", "[codex][resume]") {
  CampaignView v;
  CandidateRecord a, b, c;
  a.agent_meta = {{"agent", "codex"}, {"session_id", "s1"}};
  b.agent_meta = {{"agent", "claude-code"}, {"session_id", "other"}};
  c.agent_meta = json::object();
  v.history = {a, b, c};
  CHECK(LastCodexSession(v) == "s1");
  v.history = {b};
  CHECK(LastCodexSession(v).empty());
}

TEST_CASE("a resumed session's recorded running totals are found for it", "[codex][resume]") {
  CampaignView v;
  CandidateRecord a, b;
  a.agent_meta = {{"agent", "codex"},
                  {"session_id", "s1"},
                  {"session_input_tokens", 100},
                  {"session_output_tokens", 10}};
  b.agent_meta = {{"agent", "codex"},
                  {"session_id", "s1"},
                  {"session_input_tokens", 250},
                  {"session_cached_input_tokens", 5},
                  {"session_output_tokens", 30}};
  v.history = {a, b};
  CodexUsage u = RecordedSessionUsage(v, "s1");
  CHECK(u.input == 250);
  CHECK(u.cached_input == 5);
  CHECK(u.output == 30);
  CHECK(RecordedSessionUsage(v, "s2").input == 0);
}

TEST_CASE("preparing the folders writes config.toml and installs the skill", "[codex][skill]") {
  fs::path root = fs::temp_directory_path() / ("attune-codex-prep-" + std::to_string(::getpid()));
  CodexConfig c = Config();
  c.campaign_dir = root.string();
  c.skill_dir = std::string(ATTUNE_SOURCE_DIR) + "/skill";
  CodexFolders f = FoldersFor(c.campaign_dir);
  std::vector<std::string> warnings;
  REQUIRE(PrepareFolders(c, f, &warnings).ok());
  CHECK(warnings.empty());
  CHECK(fs::exists(f.home + "/config.toml"));
  CHECK(fs::exists(f.tmp));
  CHECK(fs::exists(f.work + "/.agents/skills/attune/SKILL.md"));
  CHECK(fs::exists(f.work + "/.agents/skills/attune/references/agent-codex.md"));
  c.skill_dir = (root / "nowhere").string();
  REQUIRE(PrepareFolders(c, f, &warnings).ok());
  REQUIRE(warnings.size() == 1);
  CHECK(Contains(warnings[0], "without the attune skill"));
  fs::remove_all(root);
}
