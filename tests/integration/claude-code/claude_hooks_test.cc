// Copyright attune authors.
//
// The Claude Code hooks (claude_hooks.h): Claude's tool names mapped onto the agent guard, the
// PreToolUse and Stop answers in Claude Code's format, and usage errors that fail closed.
#include <catch2/catch.hpp>
#include <sstream>

#include "claude_hooks.h"

using namespace attune;
using namespace attune::agents;
using nlohmann::json;

namespace {

agentkit::GuardConfig Config() {
  agentkit::GuardConfig c;
  c.campaign_dir = "/camp";
  c.k8s_namespace = "tune";
  c.protected_dirs = {"/camp/events", "/camp/log"};
  return c;
}

}  // namespace

TEST_CASE("Claude Code tools: reads allowed, file edits denied, the event log named", "[claude-code][guard]") {
  auto cfg = Config();
  CHECK(JudgeClaudeToolUse(cfg, "Read", json{{"file_path", "/camp/events/LOG"}}, "/camp").allow);
  CHECK(JudgeClaudeToolUse(cfg, "Grep", json{{"pattern", "x"}}, "/camp").allow);
  CHECK(JudgeClaudeToolUse(cfg, "Glob", json{{"pattern", "*"}}, "/camp").allow);
  auto w =
      JudgeClaudeToolUse(cfg, "Write", json{{"file_path", "/camp/events/x"}, {"content", ""}}, "/camp");
  CHECK_FALSE(w.allow);
  CHECK(w.reason.find("event log directory /camp/events") != std::string::npos);
  auto e = JudgeClaudeToolUse(cfg, "Edit", json{{"file_path", "events/x"}}, "/camp");
  CHECK(e.reason.find("event log") != std::string::npos);
  auto other = JudgeClaudeToolUse(cfg, "Write", json{{"file_path", "/tmp/x"}}, "/camp");
  CHECK_FALSE(other.allow);
  CHECK(other.reason.find("read-only") != std::string::npos);
  CHECK_FALSE(JudgeClaudeToolUse(cfg, "WebFetch", json{{"url", "http://x"}}, "/camp").allow);
  CHECK_FALSE(JudgeClaudeToolUse(cfg, "Bash", json{{"cmd", "ls"}}, "/camp").allow);
  CHECK(JudgeClaudeToolUse(cfg, "Bash", json{{"command", "ls"}}, "/camp").allow);
}

TEST_CASE("hook usage errors", "[claude-code][hooks]") {
  std::istringstream in("{}");
  std::ostringstream out, err;
  CHECK(RunClaudeHook("nope", {}, in, out, err) == 2);
  CHECK(RunClaudeHook("stop", {"--cap"}, in, out, err) == 2);
  std::ostringstream gout;
  CHECK(RunClaudeHook("guard", {}, in, gout, err) == 2);
  CHECK(json::parse(gout.str())["hookSpecificOutput"]["permissionDecision"] == "deny");
}

TEST_CASE("the guard answers in Claude Code's PreToolUse format", "[claude-code][guard]") {
  json input = {{"hook_event_name", "PreToolUse"},
                {"tool_name", "Bash"},
                {"cwd", "/tmp"},
                {"tool_input", {{"command", "kubectl get pods -n other"}}}};
  std::istringstream in(input.dump());
  std::ostringstream out, err;
  CHECK(RunClaudeHook("guard", {"--campaign-dir", "/tmp/c", "--namespace", "tune"}, in, out,
                        err) == 0);
  json answer = json::parse(out.str());
  CHECK(answer["hookSpecificOutput"]["hookEventName"] == "PreToolUse");
  CHECK(answer["hookSpecificOutput"]["permissionDecision"] == "deny");
  CHECK(answer["hookSpecificOutput"]["permissionDecisionReason"].get<std::string>().find(
            "-n other") != std::string::npos);
}

TEST_CASE("the stop hook's usage errors and a non-JSON input let the agent stop",
          "[claude-code][hooks]") {
  std::istringstream in("not json");
  std::ostringstream out, err;
  CHECK(RunClaudeHook("stop", {"--campaign-dir", "/tmp/c"}, in, out, err) == 0);
  CHECK(out.str().empty());
  CHECK(err.str().find("not the Stop hook's JSON object") != std::string::npos);
}
