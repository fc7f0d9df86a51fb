// Copyright attune authors.
//
// The continuation rule (agentkit/continuation.h): keep the agent working while budget is left, up
// to a cap per session; let it stop when done, out of budget, answered or unreadable.
#include "attune/agentkit/continuation.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>


namespace fs = std::filesystem;
using attune::agentkit::CarriesAnswer;
using attune::agentkit::ContinuationConfig;
using attune::agentkit::ContinuationDecision;
using attune::agentkit::DecideContinuation;
using attune::agentkit::ProgressFromStatusJson;
using attune::agentkit::StopRequest;
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

  // One decision; returns the reason when the agent is told to keep working, "" otherwise.
  std::string Stop(const StopRequest& request, int cap = 3, std::string* err_text = nullptr) {
    std::ostringstream err;
    ContinuationConfig config{dir.string(), fake_attune.string(), cap};
    ContinuationDecision d = DecideContinuation(config, request, err);
    if (err_text) *err_text = err.str();
    CHECK_FALSE(d.reason.empty());  // a decision always says why
    return d.keep_working ? d.reason : "";
  }
};

StopRequest StopInput(bool after_continuation, const std::string& session = "s1",
                      const std::string& last = "ok") {
  return StopRequest{session, after_continuation, last};
}

const json kBudgetLeft = {{"state", "running"},
                          {"budget", {{"total_gpu_hours", 10.0}, {"left_gpu_hours", 4.5}}},
                          {"candidates_left", 3}};

}  // namespace

TEST_CASE("status JSON fields are read under their accepted names", "[agentkit][continuation]") {
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

TEST_CASE("an answer in the last message is recognised", "[agentkit][continuation]") {
  CHECK(CarriesAnswer(
      "Here: ```json\n{\"changes\":[{\"key\":\"--x\",\"from\":\"1\",\"to\":\"2\"}]}\n```"));
  CHECK(CarriesAnswer("{\"done\": true, \"rationale\": \"nothing left\"}"));
  CHECK_FALSE(CarriesAnswer("I will look at the logs {not json}"));
  CHECK_FALSE(CarriesAnswer("{\"done\": false}"));
}

TEST_CASE("the agent is told to continue while budget is left, up to the cap", "[agentkit][continuation]") {
  StopFixture f;
  f.SetStatus(kBudgetLeft);
  std::string first = f.Stop(StopInput(false), 2);
  CHECK(first.find("4.5 GPU-hours of 10 left") != std::string::npos);
  CHECK(first.find("3 candidates left") != std::string::npos);
  CHECK_FALSE(f.Stop(StopInput(true), 2).empty());
  std::string err;
  CHECK(f.Stop(StopInput(true), 2, &err).empty());
  CHECK(err.find("cap 2") != std::string::npos);
  CHECK(json::parse(std::ifstream(f.dir / "agent" / "stop_hook.json"))["blocks"] == 2);
}

TEST_CASE("a new query or a new session starts the count again", "[agentkit][continuation]") {
  StopFixture f;
  f.SetStatus(kBudgetLeft);
  CHECK_FALSE(f.Stop(StopInput(false), 1).empty());
  CHECK(f.Stop(StopInput(true), 1).empty());
  CHECK_FALSE(f.Stop(StopInput(false), 1).empty());
  CHECK(f.Stop(StopInput(true), 1).empty());
  CHECK_FALSE(f.Stop(StopInput(true, "s2"), 1).empty());
}

TEST_CASE("the agent may stop when done, out of budget or answered",
          "[agentkit][continuation]") {
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

TEST_CASE("an unreadable status lets the agent stop and says why", "[agentkit][continuation]") {
  StopFixture f;
  std::string err;
  CHECK(f.Stop(StopInput(false), 3, &err).empty());
  CHECK(err.find("cannot read the campaign status") != std::string::npos);
}

TEST_CASE("continuation flags parse and print back", "[agentkit][continuation]") {
  auto c = attune::agentkit::ParseContinuationArgs(
      {"--campaign-dir", "/tmp/c", "--cap=4", "--attune", "/bin/attune"});
  REQUIRE(c.ok());
  CHECK(c->campaign_dir == "/tmp/c");
  CHECK(c->cap == 4);
  CHECK(c->attune_binary == "/bin/attune");
  auto again = attune::agentkit::ParseContinuationArgs(attune::agentkit::ContinuationArgs(*c));
  REQUIRE(again.ok());
  CHECK(again->cap == 4);
  CHECK(again->campaign_dir == "/tmp/c");
  CHECK_FALSE(attune::agentkit::ParseContinuationArgs({"--cap", "2"}).ok());  // no campaign dir
  CHECK(attune::agentkit::ParseContinuationArgs({"--campaign-dir", "/c", "--cap", "x"})
            .status()
            .message()
            .find("--cap expects a number") != std::string::npos);
  CHECK(attune::agentkit::ParseContinuationArgs({"--campaign-dir", "/c", "--cpa", "2"})
            .status()
            .message()
            .find("unknown flag '--cpa'") != std::string::npos);
}

TEST_CASE("a stop hook's question names the field that holds the agent's last text",
          "[agentkit][hooks]") {
  std::istringstream claude(
      R"({"session_id":"s1","stop_hook_active":true,"last_assistant_message":"done","prompt_response":"x"})");
  auto r = attune::agentkit::ReadStopRequest(claude, "last_assistant_message");
  REQUIRE(r.has_value());
  CHECK(r->session_id == "s1");
  CHECK(r->after_continuation);
  CHECK(r->last_message == "done");
  std::istringstream gemini(R"({"session_id":"s2","prompt_response":"the whole turn"})");
  r = attune::agentkit::ReadStopRequest(gemini, "prompt_response");
  REQUIRE(r.has_value());
  CHECK_FALSE(r->after_continuation);
  CHECK(r->last_message == "the whole turn");
  std::istringstream broken("{");
  CHECK_FALSE(attune::agentkit::ReadStopRequest(broken, "prompt_response").has_value());
}
