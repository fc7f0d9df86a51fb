// Copyright attune authors.
//
// The gemini plugin's parts that need no CLI: configuration, argv, settings.json, the policy file,
// the child's environment, the stream-json reader (on output recorded from the real 0.61.0,
// tests/fixtures/gemini/), and the hooks' translation of Gemini's hook protocol.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gemini_agent.h"
#include "gemini_cli.h"
#include "gemini_hooks.h"
#include "gemini_stream.h"

namespace fs = std::filesystem;
using namespace attune;
using namespace attune::agents;
using nlohmann::json;

namespace {

std::string Fixture(const std::string& name) {
  std::ifstream f(std::string(ATTUNE_SOURCE_DIR) + "/tests/fixtures/gemini/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

Result<GeminiConfig> Parse(const json& with) {
  PluginContext ctx;
  ctx.config = with;
  ctx.campaign_dir = "/camp";
  ctx.data_dir = "/data";
  ctx.attune_binary = "/opt/attune/bin/attune";
  return ParseConfig(ctx);
}

GeminiConfig Config(const json& with = json::object()) {
  auto c = Parse(with);
  REQUIRE(c.ok());
  return *c;
}

bool Has(const std::vector<std::string>& v, const std::string& word) {
  return std::find(v.begin(), v.end(), word) != v.end();
}

std::string After(const std::vector<std::string>& v, const std::string& flag) {
  auto it = std::find(v.begin(), v.end(), flag);
  return it == v.end() || it + 1 == v.end() ? "" : *(it + 1);
}

std::string EnvValue(const std::vector<std::pair<std::string, std::string>>& env,
                     const std::string& name) {
  std::string value;
  for (const auto& [k, v] : env) {
    if (k == name) value = v;  // the last one wins, as in the child
  }
  return value;
}

agentkit::GuardConfig Guard() {
  agentkit::GuardConfig c;
  c.campaign_dir = "/camp";
  c.k8s_namespace = "tune";
  c.protected_dirs = {"/camp/events", "/camp/log"};
  return c;
}

// A stand-in for `attune status DIR --json` that prints `status`.
std::string StatusScript(const fs::path& dir, const json& status) {
  fs::create_directories(dir);
  fs::path script = dir / "attune";
  std::ofstream(script) << "#!/bin/sh\ncat <<'EOF'\n" << status.dump() << "\nEOF\n";
  fs::permissions(script, fs::perms::owner_all);
  return script.string();
}

}  // namespace

TEST_CASE("gemini options: defaults, and schema errors name the key", "[gemini][unit]") {
  GeminiConfig c = Config();
  CHECK(c.timeout_s == 900);
  CHECK(c.api_attempts == 2);
  CHECK(c.continuation_cap == 3);
  CHECK(c.skill_dir == "/data/skill");
  CHECK(Has(c.tools, "run_shell_command"));
  CHECK_FALSE(Has(c.tools, "write_file"));
  auto unknown = Parse(json{{"max_turns", 3}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(Contains(unknown.status().message(), "max_turns"));
  auto too_many = Parse(json{{"api_attempts", 11}});
  REQUIRE_FALSE(too_many.ok());
  CHECK(Contains(too_many.status().message(), "api_attempts"));
}

TEST_CASE("gemini argv: headless stream-json, trusted folder, the policy, resume only when asked",
          "[gemini][unit]") {
  GeminiConfig c = Config(json{{"model", "gemini-x"}});
  GeminiWorkFolder f = WorkFolderFor("/camp");
  auto argv = BuildArgv(c, f, GeminiCall{"the prompt", ""});
  CHECK(After(argv, "-p") == "the prompt");
  CHECK(After(argv, "--output-format") == "stream-json");
  CHECK(Has(argv, "--skip-trust"));
  CHECK(After(argv, "--approval-mode") == "default");
  CHECK(After(argv, "--policy") == "/camp/agent/gemini/policy.toml");
  CHECK(After(argv, "--model") == "gemini-x");
  CHECK_FALSE(Has(argv, "--resume"));
  auto resumed = BuildArgv(c, f, GeminiCall{"again", "0b8c-session"});
  CHECK(After(resumed, "--resume") == "0b8c-session");
}

TEST_CASE("gemini settings.json: API-key auth, bounds, telemetry off, the two hooks",
          "[gemini][unit]") {
  json s =
      Settings(Config(json{{"api_attempts", 3}, {"max_session_turns", 7}, {"namespace", "tune"}}));
  CHECK(s["security"]["auth"]["selectedType"] == "gemini-api-key");
  CHECK(s["general"]["maxAttempts"] == 3);
  CHECK(s["model"]["maxSessionTurns"] == 7);
  CHECK(s["telemetry"]["enabled"] == false);
  CHECK(s["privacy"]["usageStatisticsEnabled"] == false);
  CHECK(s["hooksConfig"]["enabled"] == true);
  const json& before = s["hooks"]["BeforeTool"][0];
  CHECK(before["matcher"] == "*");
  std::string guard = before["hooks"][0]["command"];
  CHECK(Contains(guard, "/opt/attune/bin/attune"));
  CHECK(Contains(guard, "gemini guard"));
  CHECK(Contains(guard, "--campaign-dir /camp"));
  CHECK(Contains(guard, "--namespace tune"));
  CHECK(before["hooks"][0]["timeout"] == 30000);  // milliseconds in Gemini's settings
  std::string stop = s["hooks"]["AfterAgent"][0]["hooks"][0]["command"];
  CHECK(Contains(stop, "gemini stop"));
  CHECK(Contains(stop, "--cap 3"));

  json off = Settings(Config(json{{"hooks", false}}));
  CHECK(off["hooksConfig"]["enabled"] == false);
  CHECK_FALSE(off.contains("hooks"));
}

TEST_CASE("a guard hook whose attune fails still denies (Gemini would allow on exit 1)",
          "[gemini][hooks][unit]") {
  GeminiConfig c = Config();
  c.attune_binary = "/bin/false";  // exits 1 and prints nothing, whatever its arguments
  std::string command = Settings(c)["hooks"]["BeforeTool"][0]["hooks"][0]["command"];
  support::ProcessOptions options;
  options.input = Fixture("before-tool-0.61.0.json");
  auto p = support::RunProcess({"/bin/sh", "-c", command}, options);
  REQUIRE(p.ok());
  CHECK(p->exit_code == 2);
  json answer = json::parse(p->out);
  CHECK(answer["decision"] == "deny");
  CHECK(Contains(answer["reason"], "guard hook failed"));
}

TEST_CASE("gemini policy: every tool denied but the offered ones", "[gemini][unit]") {
  std::string toml = PolicyToml(Config(json{{"tools", {"read_file", "run_shell_command"}}}));
  CHECK(Contains(toml, "toolName = \"*\"\ndecision = \"deny\"\npriority = 10"));
  CHECK(Contains(toml,
                 "toolName = [\"read_file\", \"run_shell_command\"]\ndecision = \"allow\"\n"
                 "priority = 100"));
  CHECK_FALSE(Contains(PolicyToml(Config(json{{"tools", json::array()}})), "decision = \"allow\""));
}

TEST_CASE("gemini child environment: own HOME and TMPDIR, the endpoint, env: last",
          "[gemini][unit]") {
  GeminiConfig c = Config(json{{"base_url", "http://127.0.0.1:9"},
                               {"env", {{"GEMINI_API_KEY", "k"}, {"NO_COLOR", "0"}}}});
  auto env = ChildEnvironment(c, WorkFolderFor("/camp"));
  CHECK(EnvValue(env, "HOME") == "/camp/agent/gemini/home");
  CHECK(EnvValue(env, "TMPDIR") == "/camp/agent/gemini/tmp");
  CHECK(EnvValue(env, "GOOGLE_GEMINI_BASE_URL") == "http://127.0.0.1:9");
  CHECK(EnvValue(env, "GEMINI_API_KEY") == "k");
  CHECK(EnvValue(env, "NO_COLOR") == "0");
  CHECK(EnvValue(env, "GEMINI_CLI_NO_RELAUNCH") == "true");
  CHECK(EnvValue(env, "PATH").rfind("/opt/attune/bin:", 0) == 0);
}

TEST_CASE("the work folder holds settings, policy and the skill, without the lessons",
          "[gemini][unit]") {
  fs::path root = fs::temp_directory_path() / ("attune-gem-unit-" + std::to_string(::getpid()));
  GeminiConfig c = Config(json{{"skill", std::string(ATTUNE_SOURCE_DIR) + "/skill"}});
  c.campaign_dir = root.string();
  GeminiWorkFolder f = WorkFolderFor(root.string());
  REQUIRE(PrepareWorkFolder(c, f).ok());
  REQUIRE(PrepareWorkFolder(c, f).ok());  // idempotent
  CHECK(json::parse(std::ifstream(f.settings_path))["security"]["auth"]["selectedType"] ==
        "gemini-api-key");
  CHECK(fs::exists(f.policy_path));
  CHECK(fs::exists(fs::path(f.skill_dest) / "SKILL.md"));
  CHECK(fs::exists(fs::path(f.skill_dest) / "references" / "guardrails.md"));
  CHECK(fs::exists(fs::path(f.skill_dest) / "references" / "agent-gemini.md"));
  CHECK_FALSE(fs::exists(fs::path(f.skill_dest) / "past_tuning_projects"));
  fs::remove_all(root);
}

TEST_CASE("stream-json of the real 0.61.0: session, turns, tools, continuation, tokens",
          "[gemini][unit]") {
  GeminiRun r = ParseStreamJson(Fixture("stream-json-tools-continuation-0.61.0.jsonl"));
  CHECK(r.session_id == "d404f41f-f7a0-4d04-a592-c79c252f5ac7");
  CHECK(r.model == "fake-model");
  CHECK(r.text == "Checking.\nfirst final\nsecond final");
  CHECK(r.turns == 5);
  CHECK(r.tool_calls == 3);
  CHECK(r.tool_errors == 2);
  CHECK(r.continuations == 1);
  CHECK(r.input_tokens == 500);
  CHECK(r.output_tokens == 100);
  CHECK(r.total_tokens == 600);
  CHECK(r.has_result);
  CHECK(r.status == "success");
  CHECK(r.error.empty());

  support::ProcessResult p;
  p.exit_code = 0;
  p.out = Fixture("stream-json-tools-continuation-0.61.0.jsonl");
  CHECK(ReadRun(p).ok);
}

TEST_CASE("stream-json failures: API error, no result, no text", "[gemini][unit]") {
  support::ProcessResult p;
  p.exit_code = 244;
  p.out = Fixture("stream-json-http500-0.61.0.jsonl");
  p.err = "Attempt 2 failed: ... Max attempts reached";
  GeminiRun r = ReadRun(p);
  CHECK_FALSE(r.ok);
  CHECK(r.session_id == "3e9ec159-80ef-4466-bf34-d4f2af898a44");
  CHECK(Contains(r.error, "status error"));
  CHECK(Contains(r.error, "HTTP 500"));
  CHECK(Contains(r.error, "scripted failure"));
  CHECK(Contains(r.error, "Max attempts reached"));

  support::ProcessResult none;
  none.exit_code = 41;
  none.out = "not json\n";
  GeminiRun n = ReadRun(none);
  CHECK_FALSE(n.ok);
  CHECK(Contains(n.error, "no result event"));
  CHECK(Contains(n.error, "authentication"));

  support::ProcessResult empty;
  empty.exit_code = 0;
  empty.out = R"({"type":"init","session_id":"s"})"
              "\n"
              R"({"type":"result","status":"success"})";
  CHECK(Contains(ReadRun(empty).error, "no text"));
  CHECK(Contains(ExitCodeMeaning(53), "max_session_turns"));
}

TEST_CASE("Gemini tools mapped onto the guard", "[gemini][guard][unit]") {
  auto g = Guard();
  CHECK(
      JudgeGeminiToolCall(g, "read_file", json{{"file_path", "/camp/events/LOG"}}, "/camp").allow);
  CHECK(JudgeGeminiToolCall(g, "grep_search", json{{"pattern", "x"}}, "/camp").allow);
  CHECK(JudgeGeminiToolCall(g, "activate_skill", json{{"name", "attune"}}, "/camp").allow);
  auto w = JudgeGeminiToolCall(g, "write_file", json{{"file_path", "/camp/events/x"}}, "/camp");
  CHECK_FALSE(w.allow);
  CHECK(Contains(w.reason, "event log directory /camp/events"));
  auto r = JudgeGeminiToolCall(g, "replace", json{{"file_path", "recipe.yaml"}}, "/camp");
  CHECK_FALSE(r.allow);
  CHECK(Contains(r.reason, "read-only"));
  CHECK_FALSE(JudgeGeminiToolCall(g, "web_fetch", json{{"prompt", "x"}}, "/camp").allow);
  CHECK_FALSE(JudgeGeminiToolCall(g, "run_shell_command", json{{"cmd", "ls"}}, "/camp").allow);
  CHECK(JudgeGeminiToolCall(g, "run_shell_command", json{{"command", "ls"}}, "/camp").allow);
  auto k = JudgeGeminiToolCall(g, "run_shell_command",
                               json{{"command", "kubectl -n other get pods"}}, "/camp");
  CHECK_FALSE(k.allow);
  CHECK(Contains(k.reason, "outside the campaign's namespace"));
}

TEST_CASE("the guard hook answers in Gemini's BeforeTool format and fails closed",
          "[gemini][hooks][unit]") {
  std::istringstream in(Fixture("before-tool-0.61.0.json"));
  std::ostringstream out, err;
  CHECK(RunGeminiHook("guard", {"--campaign-dir", "/camp", "--namespace", "tune"}, in, out, err) ==
        0);
  json answer = json::parse(out.str());
  CHECK(answer["decision"] == "deny");
  CHECK(Contains(answer["reason"], "outside the campaign's namespace"));

  std::istringstream ls(json{
      {"tool_name", "run_shell_command"},
      {"tool_input", {{"command", "ls"}}},
      {"cwd", "/camp"}}.dump());
  std::ostringstream allowed;
  CHECK(RunGeminiHook("guard", {"--campaign-dir", "/camp"}, ls, allowed, err) == 0);
  CHECK(json::parse(allowed.str()) == json{{"decision", "allow"}});

  std::istringstream garbage("not json");
  std::ostringstream denied;
  CHECK(RunGeminiHook("guard", {"--campaign-dir", "/camp"}, garbage, denied, err) == 0);
  CHECK(json::parse(denied.str())["decision"] == "deny");

  std::istringstream any("{}");
  std::ostringstream usage;
  CHECK(RunGeminiHook("guard", {}, any, usage, err) == 2);
  CHECK(json::parse(usage.str())["decision"] == "deny");
  CHECK(RunGeminiHook("nope", {}, any, usage, err) == 2);
}

TEST_CASE("the AfterAgent hook continues with budget left, stops on an answer or none left",
          "[gemini][hooks][unit]") {
  fs::path root = fs::temp_directory_path() / ("attune-gem-stop-" + std::to_string(::getpid()));
  fs::create_directories(root / "camp");
  std::string budget = StatusScript(root / "b1", json{{"state", "running"},
                                                      {"budget_left_gpu_hours", 4},
                                                      {"budget", {{"total_gpu_hours", 10}}}});
  std::vector<std::string> args = {"--campaign-dir", (root / "camp").string(), "--attune", budget};
  json input = json::parse(Fixture("after-agent-0.61.0.json"));
  input["stop_hook_active"] = false;
  std::istringstream in(input.dump());
  std::ostringstream out, err;
  CHECK(RunGeminiHook("stop", args, in, out, err) == 0);
  json keep = json::parse(out.str());
  CHECK(keep["decision"] == "deny");
  CHECK(Contains(keep["reason"], "GPU-hours"));

  input["prompt_response"] = "Here it is:\n```json\n{\"done\": true, \"rationale\": \"x\"}\n```";
  std::istringstream answered(input.dump());
  std::ostringstream let_go;
  CHECK(RunGeminiHook("stop", args, answered, let_go, err) == 0);
  CHECK(json::parse(let_go.str()) == json::object());

  std::string spent =
      StatusScript(root / "b0", json{{"state", "running"}, {"budget_left_gpu_hours", 0}});
  std::istringstream no_budget(json::parse(Fixture("after-agent-0.61.0.json")).dump());
  std::ostringstream stopped;
  CHECK(RunGeminiHook("stop", {"--campaign-dir", (root / "camp").string(), "--attune", spent},
                      no_budget, stopped, err) == 0);
  CHECK(json::parse(stopped.str()) == json::object());
  fs::remove_all(root);
}

TEST_CASE("a resumed campaign finds the last gemini session, not another agent's",
          "[gemini][unit]") {
  CampaignView view;
  CandidateRecord a, b, c;
  a.agent_meta = {{"agent", "gemini"}, {"session_id", "gem-1"}};
  b.agent_meta = {{"agent", "claude-code"}, {"session_id", "claude-1"}};
  c.agent_meta = json::object();
  view.history = {a, b, c};
  CHECK(LastGeminiSession(view) == "gem-1");
  view.history = {b};
  CHECK(LastGeminiSession(view).empty());
}
