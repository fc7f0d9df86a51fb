// Copyright attune authors.
//
// The claude-code agent plugin against the REAL Claude Code CLI, with a scripted local model
// (tests/fake_model). Run through run_claude_tests.sh, which skips when the CLI is missing.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "attune/agent.h"
#include "agent_cli_fixtures.h"
#include "claude_code_agent.h"
#include "fake_model.h"

namespace fs = std::filesystem;
using attune::agents::CreateClaudeCodeAgent;
using attune::testing::FakeModel;
using attune::testing::MessagesText;
using attune::testing::ToolResults;
using nlohmann::json;

namespace {

const json kMbsProposal = attune::testing::MbsProposal();
const json kBudgetLeft = attune::testing::BudgetLeft();

// A scratch area per test: campaign dir, HOME for the CLI, the fake model's files.
struct Scratch : attune::testing::CliScratch {
  Scratch() : CliScratch("cc") { fs::create_directories(root / "home"); }
};

attune::CampaignView View(const Scratch& s) {
  return attune::testing::TwoMoveView("cc-test", s.campaign());
}

std::unique_ptr<attune::Agent> MakeAgent(const Scratch& s, const FakeModel& model,
                                         json with = json::object()) {
  attune::PluginContext ctx;
  json env = {{"ANTHROPIC_BASE_URL", model.BaseUrl()},
              {"ANTHROPIC_API_KEY", "x"},
              {"HOME", (s.root / "home").string()}};
  json config = {
      {"binary", std::getenv("ATTUNE_CLAUDE_BIN") ? std::getenv("ATTUNE_CLAUDE_BIN") : "claude"},
      {"model", "fake-model"},
      {"timeout_s", 90},
      {"retries", 0},
      {"api_retries", 0},
      {"namespace", "tune"},
      {"env", env},
      {"max_turns", 12}};
  config.update(with);
  ctx.config = config;
  ctx.campaign_dir = s.campaign().string();
  ctx.data_dir = ATTUNE_SOURCE_DIR;
  // Named `attune` so that the model's `attune status ...` finds it on the PATH the plugin sets.
  fs::path attune = s.root / "bin" / "attune";
  if (!fs::exists(attune)) {
    fs::create_directories(attune.parent_path());
    fs::create_symlink(ATTUNE_HOOK_DRIVER, attune);
  }
  ctx.attune_binary = attune.string();
  ctx.log = [](attune::LogLevel, const std::string& m) { UNSCOPED_INFO(m); };
  auto plugin = CreateClaudeCodeAgent(ctx);
  REQUIRE(plugin.ok());
  return std::unique_ptr<attune::Agent>(dynamic_cast<attune::Agent*>(plugin->release()));
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("the real CLI returns the scripted proposal with session, turns and cost in meta",
          "[claude]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  FakeModel model(s.root / "model",
                  json{{"turns",
                        {{{"text", "Checking status."}, {"bash", "attune status . --json"}},
                         {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK_FALSE(p->done);
  REQUIRE(p->changes.size() == 1);
  CHECK(p->changes[0] == attune::Change{"--micro-batch-size", "1", "2"});
  CHECK(p->lever_id == "micro_batch_size");
  CHECK(p->meta["session_id"].get<std::string>().size() == 36);
  CHECK(p->meta["num_turns"] == 2);
  CHECK(p->meta["total_cost_usd"].get<double>() > 0);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  // The prompt and the skill reached the model.
  CHECK(Contains(MessagesText(requests[0]), "## Legal moves from the leader"));
  CHECK(Contains(MessagesText(requests[0]), "memory_headroom"));
  CHECK(Contains(requests[0]["system"].dump(), "attune"));
  // The guard allowed `attune status` and its output came back as the tool result.
  auto results = ToolResults(requests[1]);
  REQUIRE(results.size() == 1);
  CHECK(results[0].value("is_error", true) == false);
  CHECK(Contains(results[0]["content"].dump(), "left_gpu_hours"));
}

TEST_CASE("the guard denies kubectl outside the namespace and the model reads why", "[claude]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  FakeModel model(s.root / "model", json{{"turns",
                                          {{{"bash", "kubectl get pods -n other"}},
                                           {{"bash", "bash -c \"kubectl get pods -A\""}},
                                           {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK(p->meta["permission_denials"] == 2);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 3);
  auto first = ToolResults(requests[1]);
  REQUIRE(first.size() == 1);
  CHECK(first[0]["is_error"] == true);
  CHECK(Contains(first[0]["content"].dump(), "outside the campaign's namespace"));
  CHECK(Contains(first[0]["content"].dump(), "-n other"));
  auto second = ToolResults(requests[2]);
  REQUIRE(second.size() == 2);
  CHECK(second[1]["is_error"] == true);
  CHECK(Contains(second[1]["content"].dump(), "every namespace"));
}

TEST_CASE("without a namespace of its own the guard keeps kubectl in the launcher's namespace", "[claude]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  FakeModel model(s.root / "model", json{{"turns",
                                          {{{"bash", "kubectl get rayjobs -n other"}},
                                           {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model, {{"namespace", ""}});
  attune::CampaignView view = View(s);
  view.cluster.k8s_namespace = "tune";  // what the KubeRay launcher reports
  auto p = agent->Propose(view);
  REQUIRE(p.ok());
  CHECK(p->meta["permission_denials"] == 1);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  auto denied = ToolResults(requests[1]);
  REQUIRE(denied.size() == 1);
  CHECK(denied[0]["is_error"] == true);
  CHECK(Contains(denied[0]["content"].dump(), "outside the campaign's namespace"));
  CHECK(Contains(denied[0]["content"].dump(), "tune"));
}

TEST_CASE("the Stop hook keeps the agent working while budget is left", "[claude]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  FakeModel model(
      s.root / "model",
      json{{"turns", {{{"text", "I think I am finished here."}}, {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK(p->changes.at(0).to == "2");
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  std::string seen = MessagesText(requests[1]);
  CHECK(Contains(seen, "Stop hook feedback"));
  CHECK(Contains(seen, "4 GPU-hours of 10 left"));
}

TEST_CASE("the Stop hook gives up at its cap, and without budget it does not block", "[claude]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  FakeModel model(s.root / "model", json{{"default", {{"text", "Still thinking, no answer."}}}});
  auto agent = MakeAgent(s, model, json{{"stop_hook_cap", 2}});
  auto p = agent->Propose(View(s));
  CHECK_FALSE(p.ok());
  // Two CLI runs (the answer, then the one retry), each: 1 turn + 2 blocked stops.
  CHECK(model.ModelRequests().size() == 6);

  Scratch t;
  t.SetStatus(json{{"state", "running"}, {"budget_left_gpu_hours", 0}});
  FakeModel model2(t.root / "model", json{{"default", {{"text", "No answer."}}}});
  auto agent2 = MakeAgent(t, model2, json{{"stop_hook_cap", 2}});
  CHECK_FALSE(agent2->Propose(View(t)).ok());
  CHECK(model2.ModelRequests().size() == 2);
}

TEST_CASE("an unparsable answer is retried once in the same session, then fails", "[claude]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  FakeModel model(
      s.root / "model",
      json{{"turns", {{{"text", "Maybe try a bigger batch?"}}, {{"text", "{not json either"}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kInvalidArgument);
  CHECK(Contains(p.status().message(), "invalid twice"));
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  // The retry resumed the session: it carries the first exchange and the error.
  std::string seen = MessagesText(requests[1]);
  CHECK(Contains(seen, "Maybe try a bigger batch?"));
  CHECK(Contains(seen, "could not be used"));
  CHECK(Contains(seen, "no JSON object"));
}

TEST_CASE("an illegal move is corrected after the error is fed back", "[claude]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  json wrong_from = kMbsProposal;
  wrong_from["changes"][0]["from"] = "4";
  FakeModel model(s.root / "model",
                  json{{"turns", {{{"proposal", wrong_from}}, {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK(p->meta["calls"] == 2);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  CHECK(Contains(MessagesText(requests[1]), "the leader has \"1\""));
}

TEST_CASE("a model that does not answer in time fails within the timeout", "[claude]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  FakeModel model(s.root / "model", json{{"turns", {{{"sleep", 60}, {"text", "late"}}}}});
  auto agent = MakeAgent(s, model, json{{"timeout_s", 6}, {"retries", 2}});
  auto start = std::chrono::steady_clock::now();
  auto p = agent->Propose(View(s));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kDeadlineExceeded);
  CHECK(took < 6 + 3);
}

TEST_CASE("API errors are retried a bounded number of times, then fail", "[claude]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  FakeModel model(s.root / "model",
                  json{{"default", {{"http_error", 500}, {"message", "scripted failure"}}}});
  auto agent = MakeAgent(s, model, json{{"retries", 1}});
  auto p = agent->Propose(View(s));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kUnavailable);
  CHECK(Contains(p.status().message(), "2 CLI run(s) failed"));
  CHECK(model.ModelRequests().size() == 2);
}

TEST_CASE("a resumed campaign continues the recorded session", "[claude]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  FakeModel model(s.root / "model",
                  json{{"turns",
                        {{{"proposal", kMbsProposal}},
                         {{"text", "Second answer."},
                          {"proposal", {{"done", true}, {"rationale", "nothing left"}}}}}}});
  auto agent = MakeAgent(s, model);
  auto view = View(s);
  auto first = agent->Propose(view);
  REQUIRE(first.ok());
  attune::CandidateRecord c;
  c.index = 1;
  c.candidate_id = "c001";
  c.base_id = "baseline";
  c.changes = first->changes;
  c.outcome = attune::Outcome::kSlower;
  c.agent_meta = first->meta;
  view.history.push_back(c);
  view.proposal_index = 2;
  auto fresh_agent = MakeAgent(s, model);  // as after a restart: state comes from the view only
  auto second = fresh_agent->Propose(view);
  REQUIRE(second.ok());
  CHECK(second->done);
  CHECK(second->meta["session_id"] == first->meta["session_id"]);
  CHECK(second->meta["resumed_session"] == true);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  CHECK(Contains(MessagesText(requests[1]), "memory headroom: 30 of 80 GiB used"));
}

TEST_CASE("the agent's USD budget stops proposals without calling the CLI", "[claude]") {
  Scratch s;
  FakeModel model(s.root / "model", json{{"default", {{"text", "should not be asked"}}}});
  auto agent = MakeAgent(s, model, json{{"max_budget_usd", 0.5}});
  auto view = View(s);
  attune::CandidateRecord c;
  c.agent_meta = {{"total_cost_usd", 0.75}};
  view.history.push_back(c);
  auto p = agent->Propose(view);
  REQUIRE(p.ok());
  CHECK(p->done);
  CHECK(Contains(p->rationale, "budget is spent"));
  CHECK(model.ModelRequests().empty());
}
