// Copyright attune authors.
#include "hooks/stop_hook.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hooks/hooks.h"

namespace fs = std::filesystem;
using attune::hooks::CarriesAnswer;
using attune::hooks::ProgressFromStatusJson;
using nlohmann::json;

namespace {

// A campaign directory and a stand-in `attune` whose `status DIR --json` prints DIR/status.json.
struct StopFixture {
  fs::path dir;
  fs::path fake_attune;
  StopFixture() {
    static int counter = 0;
    dir = fs::temp_directory_path() /
          ("attune-stop-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir);
    fake_attune = dir / "fake-attune";
    std::ofstream(fake_attune) << "#!/bin/sh\ncat \"$2/status.json\"\n";
    fs::permissions(fake_attune, fs::perms::owner_all);
  }
  ~StopFixture() { fs::remove_all(dir); }

  void SetStatus(const json& status) { std::ofstream(dir / "status.json") << status.dump(); }

  // Runs the hook; returns its stdout.
  std::string Stop(const json& input, int cap = 3, std::string* err_text = nullptr) {
    std::istringstream in(input.dump());
    std::ostringstream out, err;
    int rc = attune::RunHook("stop",
                             {"--campaign-dir", dir.string(), "--attune", fake_attune.string(),
                              "--cap", std::to_string(cap)},
                             in, out, err);
    CHECK(rc == 0);
    if (err_text) *err_text = err.str();
    return out.str();
  }
};

json StopInput(bool active, const std::string& session = "s1", const std::string& last = "ok") {
  return json{{"session_id", session},
              {"hook_event_name", "Stop"},
              {"stop_hook_active", active},
              {"last_assistant_message", last}};
}

const json kBudgetLeft = {{"state", "running"},
                          {"budget", {{"total_gpu_hours", 10.0}, {"left_gpu_hours", 4.5}}},
                          {"candidates_left", 3}};

}  // namespace

TEST_CASE("status JSON fields are read under their accepted names", "[hooks][stop]") {
  auto p = ProgressFromStatusJson(kBudgetLeft);
  CHECK(p.readable);
  CHECK_FALSE(p.done);
  CHECK(p.budget_left_gpu_hours == Approx(4.5));
  CHECK(p.candidates_left == 3);
  CHECK(ProgressFromStatusJson(json{{"budget_left_gpu_hours", 2}}).budget_left_gpu_hours ==
        Approx(2));
  CHECK(ProgressFromStatusJson(json{{"state", "finished"}}).done);
  CHECK(ProgressFromStatusJson(json{{"done", true}}).done);
}

TEST_CASE("an answer in the last message is recognised", "[hooks][stop]") {
  CHECK(CarriesAnswer(
      "Here: ```json\n{\"changes\":[{\"key\":\"--x\",\"from\":\"1\",\"to\":\"2\"}]}\n```"));
  CHECK(CarriesAnswer("{\"done\": true, \"rationale\": \"nothing left\"}"));
  CHECK_FALSE(CarriesAnswer("I will look at the logs {not json}"));
  CHECK_FALSE(CarriesAnswer("{\"done\": false}"));
}

TEST_CASE("the stop hook blocks while budget is left, up to its cap", "[hooks][stop]") {
  StopFixture f;
  f.SetStatus(kBudgetLeft);
  std::string first = f.Stop(StopInput(false), 2);
  json answer = json::parse(first);
  CHECK(answer["decision"] == "block");
  CHECK(answer["reason"].get<std::string>().find("4.5 GPU-hours of 10 left") != std::string::npos);
  CHECK(answer["reason"].get<std::string>().find("3 candidates left") != std::string::npos);
  CHECK(json::parse(f.Stop(StopInput(true), 2))["decision"] == "block");
  std::string err;
  CHECK(f.Stop(StopInput(true), 2, &err).empty());
  CHECK(err.find("cap 2") != std::string::npos);
  CHECK(json::parse(std::ifstream(f.dir / "agent" / "stop_hook.json"))["blocks"] == 2);
}

TEST_CASE("a new query or a new session starts the count again", "[hooks][stop]") {
  StopFixture f;
  f.SetStatus(kBudgetLeft);
  CHECK_FALSE(f.Stop(StopInput(false), 1).empty());
  CHECK(f.Stop(StopInput(true), 1).empty());
  CHECK_FALSE(f.Stop(StopInput(false), 1).empty());
  CHECK(f.Stop(StopInput(true), 1).empty());
  CHECK_FALSE(f.Stop(StopInput(true, "s2"), 1).empty());
}

TEST_CASE("the stop hook lets the agent stop when done, out of budget or answered",
          "[hooks][stop]") {
  StopFixture f;
  f.SetStatus(json{{"state", "finished"}, {"budget_left_gpu_hours", 3}});
  CHECK(f.Stop(StopInput(false)).empty());
  f.SetStatus(json{{"state", "running"}, {"budget_left_gpu_hours", 0}});
  CHECK(f.Stop(StopInput(false)).empty());
  f.SetStatus(json{{"state", "running"}, {"budget_left_gpu_hours", 3}, {"candidates_left", 0}});
  CHECK(f.Stop(StopInput(false)).empty());
  f.SetStatus(kBudgetLeft);
  CHECK(f.Stop(StopInput(false, "s1", "{\"done\":true,\"rationale\":\"r\"}")).empty());
}

TEST_CASE("an unreadable status lets the agent stop and says why", "[hooks][stop]") {
  StopFixture f;
  std::string err;
  CHECK(f.Stop(StopInput(false), 3, &err).empty());
  CHECK(err.find("cannot read the campaign status") != std::string::npos);
}

TEST_CASE("hook usage errors", "[hooks]") {
  std::istringstream in("{}");
  std::ostringstream out, err;
  CHECK(attune::RunHook("nope", {}, in, out, err) == 2);
  CHECK(attune::RunHook("stop", {"--cap"}, in, out, err) == 2);
  std::ostringstream gout;
  CHECK(attune::RunHook("guard", {}, in, gout, err) == 2);
  CHECK(json::parse(gout.str())["hookSpecificOutput"]["permissionDecision"] == "deny");
}

TEST_CASE("the guard answers in Claude Code's PreToolUse format", "[hooks][guard]") {
  json input = {{"hook_event_name", "PreToolUse"},
                {"tool_name", "Bash"},
                {"cwd", "/tmp"},
                {"tool_input", {{"command", "kubectl get pods -n other"}}}};
  std::istringstream in(input.dump());
  std::ostringstream out, err;
  CHECK(attune::RunHook("guard", {"--campaign-dir", "/tmp/c", "--namespace", "tune"}, in, out,
                        err) == 0);
  json answer = json::parse(out.str());
  CHECK(answer["hookSpecificOutput"]["hookEventName"] == "PreToolUse");
  CHECK(answer["hookSpecificOutput"]["permissionDecision"] == "deny");
  CHECK(answer["hookSpecificOutput"]["permissionDecisionReason"].get<std::string>().find(
            "-n other") != std::string::npos);
}
