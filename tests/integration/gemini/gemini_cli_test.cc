// Copyright attune authors.
//
// The gemini agent plugin against the REAL Gemini CLI, with a scripted local Gemini API
// (tests/fake_model/gemini_server.py). Run through run_gemini_tests.sh, which skips when the CLI
// is missing. Every CLI start costs seconds of node start-up: each case runs as few as it can.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/agent.h"
#include "agent_cli_fixtures.h"
#include "fake_gemini.h"
#include "gemini_agent.h"

namespace fs = std::filesystem;
using attune::agents::CreateGeminiAgent;
using attune::testing::ContentsText;
using attune::testing::DeclaredTools;
using attune::testing::FakeGemini;
using attune::testing::FunctionResponses;
using nlohmann::json;

namespace {

const json kMbsProposal = attune::testing::MbsProposal();
const json kBudgetLeft = attune::testing::BudgetLeft();

// A scratch area per test: the campaign dir and the fake model's files.
struct Scratch : attune::testing::CliScratch {
  Scratch() : CliScratch("gem") {}
};

attune::CampaignView View(const Scratch& s) {
  return attune::testing::TwoMoveView("gem-test", s.campaign());
}

std::unique_ptr<attune::Agent> MakeAgent(const Scratch& s, const FakeGemini& model,
                                         json with = json::object()) {
  attune::PluginContext ctx;
  json config = {
      {"binary", std::getenv("ATTUNE_GEMINI_BIN") ? std::getenv("ATTUNE_GEMINI_BIN") : "gemini"},
      {"model", "fake-model"},
      {"base_url", model.BaseUrl()},
      {"env", {{"GEMINI_API_KEY", "x"}}},
      {"timeout_s", 90},
      {"retries", 0},
      {"api_attempts", 1},
      {"namespace", "tune"},
      {"max_session_turns", 12}};
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
  auto plugin = CreateGeminiAgent(ctx);
  REQUIRE(plugin.ok());
  return std::unique_ptr<attune::Agent>(dynamic_cast<attune::Agent*>(plugin->release()));
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string ErrorOf(const json& function_response) {
  return function_response["response"].value("error", "");
}

// Processes whose environment names `needle` (the CLI and its children carry the campaign dir).
int ProcessesWithEnvironment(const std::string& needle) {
  int found = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid == std::to_string(::getpid())) continue;
    std::ifstream f(entry.path() / "environ", std::ios::binary);
    std::stringstream env;
    env << f.rdbuf();
    if (Contains(env.str(), needle)) ++found;
  }
  return found;
}

}  // namespace

TEST_CASE("the real CLI runs attune status through its shell tool and returns the proposal",
          "[gemini]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  FakeGemini model(
      s.root / "model",
      json{{"turns",
            {{{"text", "Checking status."}, {"shell", "attune status . --json"}},
             {{"proposal", kMbsProposal}, {"usage", {{"prompt", 300}, {"candidates", 40}}}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK_FALSE(p->done);
  REQUIRE(p->changes.size() == 1);
  CHECK(p->changes[0] == attune::Change{"--micro-batch-size", "1", "2"});
  CHECK(p->lever_id == "micro_batch_size");
  CHECK(p->meta["agent"] == "gemini");
  CHECK(p->meta["session_id"].get<std::string>().size() == 36);
  CHECK(p->meta["num_turns"] == 2);
  CHECK(p->meta["tool_calls"] == 1);
  CHECK(p->meta["tool_errors"] == 0);
  CHECK(p->meta["input_tokens"] == 100 + 300);
  CHECK(p->meta["output_tokens"] == 20 + 40);
  CHECK(p->meta["total_tokens"] == 460);
  CHECK(p->meta["model"] == "fake-model");
  CHECK(p->meta["resumed_session"] == false);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  // The prompt reached the model; the skill is offered; the policy declared no write tool.
  CHECK(Contains(ContentsText(requests[0]), "## Legal moves from the leader"));
  CHECK(Contains(requests[0]["systemInstruction"].dump(), "<name>attune</name>"));
  auto tools = DeclaredTools(requests[0]);
  CHECK(std::count(tools.begin(), tools.end(), "run_shell_command") == 1);
  CHECK(std::count(tools.begin(), tools.end(), "activate_skill") == 1);
  CHECK(std::count(tools.begin(), tools.end(), "write_file") == 0);
  CHECK(std::count(tools.begin(), tools.end(), "replace") == 0);
  CHECK(std::count(tools.begin(), tools.end(), "web_fetch") == 0);
  // The guard allowed `attune status` and its output came back as the function response.
  auto results = FunctionResponses(requests[1]);
  REQUIRE(results.size() == 1);
  CHECK(results[0]["name"] == "run_shell_command");
  CHECK(Contains(results[0]["response"].dump(), "left_gpu_hours"));
}

TEST_CASE("guard denials and the CLI's workspace check reach the model as tool errors",
          "[gemini]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  std::string inside = (s.campaign() / "notes.txt").string();
  std::string outside = (s.root / "outside.txt").string();
  FakeGemini model(
      s.root / "model",
      json{{"turns",
            {{{"shell", "kubectl -n other get pods"}},
             {{"call",
               {{"name", "write_file"}, {"args", {{"file_path", inside}, {"content", "x"}}}}}},
             {{"call",
               {{"name", "write_file"}, {"args", {{"file_path", outside}, {"content", "x"}}}}}},
             {{"proposal", kMbsProposal}}}}});
  // write_file offered on purpose, so that the guard (not the policy) has to refuse it.
  auto agent =
      MakeAgent(s, model, json{{"tools", {"run_shell_command", "read_file", "write_file"}}});
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK(p->meta["tool_errors"] == 3);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 4);
  auto kubectl = FunctionResponses(requests[1]);
  REQUIRE(kubectl.size() == 1);
  CHECK(Contains(ErrorOf(kubectl[0]), "Tool execution blocked"));
  CHECK(Contains(ErrorOf(kubectl[0]), "outside the campaign's namespace"));
  auto write_inside = FunctionResponses(requests[2]);
  REQUIRE(write_inside.size() == 2);
  CHECK(Contains(ErrorOf(write_inside[1]), "write_file is not allowed"));
  auto write_outside = FunctionResponses(requests[3]);
  REQUIRE(write_outside.size() == 3);
  CHECK(Contains(ErrorOf(write_outside[2]), "outside the allowed workspace"));
  CHECK_FALSE(fs::exists(inside));
  CHECK_FALSE(fs::exists(outside));
}

TEST_CASE("AfterAgent keeps the agent working while budget is left, up to its cap", "[gemini]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  FakeGemini model(s.root / "model", json{{"turns",
                                           {{{"text", "I think I am finished here."}},
                                            {{"text", "Still nothing to say."}},
                                            {{"text", "Nothing."}},
                                            {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model, json{{"continuation_cap", 2}});
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  // Run 1: the answer and two continuations (the cap), then the CLI stops without an answer; the
  // plugin's one retry (same session) gets the proposal.
  CHECK(p->meta["continuations"] == 2);
  CHECK(p->meta["calls"] == 2);
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 4);
  std::string continued = ContentsText(requests[1]);
  CHECK(Contains(continued, "4 GPU-hours of 10 left"));
  CHECK(Contains(ContentsText(requests[3]), "could not be used"));
}

TEST_CASE("with no budget left an unparsable answer is retried once, then fails with its text",
          "[gemini]") {
  Scratch s;
  s.SetStatus(json{{"state", "running"}, {"budget_left_gpu_hours", 0}});
  FakeGemini model(
      s.root / "model",
      json{{"turns", {{{"text", "Maybe try a bigger batch?"}}, {{"text", "{not json either"}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kInvalidArgument);
  CHECK(Contains(p.status().message(), "invalid twice"));
  CHECK(Contains(p.status().message(), "{not json either"));
  // No continuation (no budget): one model call per run; the retry resumed the session.
  auto requests = model.ModelRequests();
  REQUIRE(requests.size() == 2);
  std::string seen = ContentsText(requests[1]);
  CHECK(Contains(seen, "Maybe try a bigger batch?"));
  CHECK(Contains(seen, "no JSON object"));
}

TEST_CASE("a model that does not answer in time: the CLI's process group is killed", "[gemini]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  FakeGemini model(s.root / "model", json{{"turns", {{{"sleep", 60}, {"text", "late"}}}}});
  // 20 s: the CLI (node) must reach the model first, which takes several seconds on a loaded box.
  auto agent = MakeAgent(s, model, json{{"timeout_s", 20}, {"retries", 2}});
  auto start = std::chrono::steady_clock::now();
  auto p = agent->Propose(View(s));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kDeadlineExceeded);
  CHECK(Contains(p.status().message(), "process group was killed"));
  CHECK(took < 20 + 3);
  CHECK(model.ModelRequests().size() == 1);
  CHECK(ProcessesWithEnvironment("ATTUNE_CAMPAIGN_DIR=" + s.campaign().string()) == 0);
}

TEST_CASE("HTTP 500: the CLI tries api_attempts times, then the plugin fails", "[gemini]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  FakeGemini model(
      s.root / "model",
      json{{"default", {{"http_error", 500}, {"message", "scripted failure"}, {"repeat", true}}}});
  // retries: 0 because each CLI attempt waits ~5 s before the next (its built-in back-off).
  auto agent = MakeAgent(s, model, json{{"api_attempts", 2}, {"retries", 0}});
  auto p = agent->Propose(View(s));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kUnavailable);
  CHECK(Contains(p.status().message(), "1 CLI run(s) failed"));
  CHECK(Contains(p.status().message(), "HTTP 500"));
  CHECK(Contains(p.status().message(), "scripted failure"));
  // general.maxAttempts 2: exactly 2 requests, not the CLI's default of 10.
  CHECK(model.ModelRequests().size() == 2);
  // The CLI's error reports stayed in the work folder (TMPDIR).
  CHECK_FALSE(fs::is_empty(s.campaign() / "agent" / "gemini" / "tmp"));
}

TEST_CASE("a restarted campaign resumes the session recorded in the history", "[gemini]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  FakeGemini model(s.root / "model",
                   json{{"turns",
                         {{{"proposal", kMbsProposal}},
                          {{"text", "Second answer."},
                           {"proposal", {{"done", true}, {"rationale", "nothing left"}}}}}},
                        {"default", {{"proposal", {{"done", true}, {"rationale", "fresh"}}}}}});
  auto agent = MakeAgent(s, model);
  auto view = View(s);
  auto first = agent->Propose(view);
  REQUIRE(first.ok());
  CHECK(first->meta["num_turns"] == 1);
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
  CHECK(Contains(ContentsText(requests[1]), "memory headroom: 30 of 80 GiB used"));

  // A session the CLI no longer has (exit 42, no model call): a fresh one, no retry spent.
  view.history.back().agent_meta["session_id"] = "11111111-2222-3333-4444-555555555555";
  auto third = MakeAgent(s, model, json{{"retries", 0}})->Propose(view);
  REQUIRE(third.ok());
  CHECK(third->meta["resumed_session"] == false);
  CHECK(third->meta["calls"] == 2);
  CHECK(third->meta["session_id"] != first->meta["session_id"]);
  CHECK(model.ModelRequests().size() == 3);
}
