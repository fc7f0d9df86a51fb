// Copyright attune authors.
//
// The codex agent plugin against the REAL Codex CLI, with a scripted local OpenAI Responses API
// server (tests/fake_model/responses_server.py). Run through run_codex_tests.sh, which skips when
// the CLI is missing. Each case is one or a few real `codex exec` runs (about 1 s each).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "attune/agent.h"
#include "agent_cli_fixtures.h"
#include "attune/support/process.h"
#include "codex_agent.h"
#include "responses_model.h"

namespace fs = std::filesystem;
using attune::agents::CreateCodexAgent;
using attune::testing::InputText;
using attune::testing::ResponsesModel;
using attune::testing::ToolOutputs;
using nlohmann::json;

namespace {

const json kMbsProposal = attune::testing::MbsProposal();
const json kBudgetLeft = attune::testing::BudgetLeft();

// A scratch area per test: the campaign dir, the fake model's files.
struct Scratch : attune::testing::CliScratch {
  Scratch() : CliScratch("codex") {}
  std::string work() const { return (campaign() / "agent" / "codex" / "work").string(); }
  std::string home() const { return (campaign() / "agent" / "codex" / "home").string(); }
};

attune::CampaignView View(const Scratch& s) {
  return attune::testing::TwoMoveView("codex-test", s.campaign());
}

// `attune_binary` "" = the test stand-in (codex_hook_driver.cc), named `attune`.
std::unique_ptr<attune::Agent> MakeAgent(const Scratch& s, const ResponsesModel& model,
                                         json with = json::object(),
                                         const std::string& attune_binary = "") {
  attune::PluginContext ctx;
  json config = {
      {"binary", std::getenv("ATTUNE_CODEX_BIN") ? std::getenv("ATTUNE_CODEX_BIN") : "codex"},
      {"model", "fake-model"},
      {"base_url", model.BaseUrl()},
      {"env_key", "ATTUNE_FAKE_KEY"},
      {"env", {{"ATTUNE_FAKE_KEY", "x"}}},
      {"timeout_s", 60},
      {"retries", 0},
      {"api_retries", 0},
      {"namespace", "tune"}};
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
  ctx.attune_binary = attune_binary.empty() ? attune.string() : attune_binary;
  ctx.log = [](attune::LogLevel, const std::string& m) { UNSCOPED_INFO(m); };
  auto plugin = CreateCodexAgent(ctx);
  REQUIRE(plugin.ok());
  return std::unique_ptr<attune::Agent>(dynamic_cast<attune::Agent*>(plugin->release()));
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Processes whose environment names `codex_home` as CODEX_HOME (the CLI and its children).
int ProcessesWithHome(const std::string& codex_home) {
  int n = 0;
  std::string needle = "CODEX_HOME=" + codex_home + '\0';
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream f(entry.path() / "environ", std::ios::binary);
    if (!f) continue;
    std::stringstream env;
    env << f.rdbuf();
    if (Contains(env.str() + '\0', needle)) ++n;
  }
  return n;
}

// Processes whose command line contains `text` (NUL-separated words joined by spaces).
int ProcessesRunning(const std::string& text) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream f(entry.path() / "cmdline", std::ios::binary);
    if (!f) continue;
    std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (Contains(cmdline, text)) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE(
    "the real CLI returns the scripted proposal with session, turns and tokens in meta; "
    "attune status runs",
    "[codex]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  std::string status_cmd = "attune status " + s.campaign().string() + " --json";
  ResponsesModel model(s.root / "model",
                       json{{"turns",
                             {{{"text", "Checking status."}, {"shell", status_cmd}},
                              {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK_FALSE(p->done);
  REQUIRE(p->changes.size() == 1);
  CHECK(p->changes[0] == attune::Change{"--micro-batch-size", "1", "2"});
  CHECK(p->meta["agent"] == "codex");
  CHECK(p->meta["session_id"].get<std::string>().size() == 36);
  CHECK(p->meta["turns"] == 1);
  CHECK(p->meta["input_tokens"] == 200);  // the fake reports 100 + 20 per request
  CHECK(p->meta["output_tokens"] == 40);
  CHECK(p->meta["commands"] == 1);
  CHECK_FALSE(p->meta.contains("total_cost_usd"));
  auto requests = model.Requests();
  REQUIRE(requests.size() == 2);
  // The prompt, the corrected working-directory sentence and the installed skill reached the model.
  std::string first = InputText(requests[0]);
  CHECK(Contains(first, "## Legal moves from the leader"));
  CHECK(Contains(first, "the campaign directory is " + s.campaign().string()));
  CHECK(Contains(first, "- attune: Tune the training throughput"));
  CHECK(Contains(first, s.work() + "/.agents/skills"));
  // The guard allowed `attune status` and its output (run in the sandbox) came back to the model.
  auto outputs = ToolOutputs(requests[1]);
  REQUIRE(outputs.size() == 1);
  CHECK(Contains(outputs[0], "left_gpu_hours"));
  CHECK_FALSE(Contains(outputs[0], "blocked"));
}

TEST_CASE(
    "the guard denies kubectl outside the namespace and a write outside the work folder; "
    "the model reads why",
    "[codex]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  std::string outside = (s.root / "outside.txt").string();
  ResponsesModel model(s.root / "model", json{{"turns",
                                               {{{"shell", "kubectl -n other get pods"}},
                                                {{"shell", "echo x > " + outside}},
                                                {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK(p->meta["commands"] == 0);  // neither command ran
  auto requests = model.Requests();
  REQUIRE(requests.size() == 3);
  auto first = ToolOutputs(requests[1]);
  REQUIRE(first.size() == 1);
  CHECK(Contains(first[0], "Command blocked by PreToolUse hook"));
  CHECK(Contains(first[0], "outside the campaign's namespace"));
  auto second = ToolOutputs(requests[2]);
  REQUIRE(second.size() == 2);
  CHECK(Contains(second[1], "Command blocked by PreToolUse hook"));
  CHECK(Contains(second[1], outside));
  CHECK_FALSE(fs::exists(outside));
}

TEST_CASE("a guard hook that cannot run refuses the call (fail closed)", "[codex]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  ResponsesModel model(s.root / "model",
                       json{{"turns", {{{"shell", "ls"}}, {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model, json::object(), (s.root / "missing" / "attune").string());
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());  // the Stop hook cannot run either: Codex lets the agent stop
  CHECK(p->meta["commands"] == 0);
  auto requests = model.Requests();
  REQUIRE(requests.size() == 2);
  auto out = ToolOutputs(requests[1]);
  REQUIRE(out.size() == 1);
  CHECK(Contains(out[0], "Command blocked by PreToolUse hook"));
  CHECK(Contains(out[0], "attune codex guard could not run; the call is refused"));
}

TEST_CASE("a stuck guard hook refuses the call before Codex's hook timeout lets it through",
          "[codex]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  std::ofstream(s.campaign() / "test_guard_stuck_s") << 25;  // past the 10 s limit, < 30 s
  ResponsesModel model(s.root / "model",
                       json{{"turns", {{{"shell", "ls"}}, {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK(p->meta["commands"] == 0);
  auto requests = model.Requests();
  REQUIRE(requests.size() == 2);
  auto out = ToolOutputs(requests[1]);
  REQUIRE(out.size() == 1);
  CHECK(Contains(out[0], "attune codex guard could not run; the call is refused"));
}

TEST_CASE("without hooks the sandbox still confines writes to the work folder (as root too)",
          "[codex]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  std::string outside = (s.root / "outside.txt").string();
  ResponsesModel model(
      s.root / "model",
      json{{"turns",
            {{{"shell", "echo x > " + outside + "; echo y > inside.txt; echo wrote"}},
             {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model, {{"hooks", false}});
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  auto requests = model.Requests();
  REQUIRE(requests.size() == 2);
  auto out = ToolOutputs(requests[1]);
  REQUIRE(out.size() == 1);
  CHECK(Contains(out[0], "Read-only file system"));
  CHECK_FALSE(fs::exists(outside));
  CHECK(fs::exists(fs::path(s.work()) / "inside.txt"));
}

TEST_CASE("the Stop hook keeps the agent working while budget is left", "[codex]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  ResponsesModel model(
      s.root / "model",
      json{{"turns", {{{"text", "I think I am finished here."}}, {{"proposal", kMbsProposal}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE(p.ok());
  CHECK(p->changes.at(0).to == "2");
  auto requests = model.Requests();
  REQUIRE(requests.size() == 2);
  std::string seen = InputText(requests[1]);
  CHECK(Contains(seen, "<hook_prompt"));
  CHECK(Contains(seen, "4 GPU-hours of 10 left"));
}

TEST_CASE("the Stop hook gives up at its cap, and without budget it does not continue", "[codex]") {
  Scratch s;
  s.SetStatus(kBudgetLeft);
  ResponsesModel model(s.root / "model",
                       json{{"default", {{"text", "Still thinking, no answer."}}}});
  auto agent = MakeAgent(s, model, json{{"stop_hook_cap", 2}});
  auto p = agent->Propose(View(s));
  CHECK_FALSE(p.ok());
  // Two CLI runs (the answer, then the one retry), each: 1 request + 2 continuations.
  CHECK(model.Requests().size() == 6);

  Scratch t;
  t.SetStatus(json{{"state", "running"}, {"budget_left_gpu_hours", 0}});
  ResponsesModel model2(t.root / "model", json{{"default", {{"text", "No answer."}}}});
  auto agent2 = MakeAgent(t, model2, json{{"stop_hook_cap", 2}});
  CHECK_FALSE(agent2->Propose(View(t)).ok());
  CHECK(model2.Requests().size() == 2);
}

TEST_CASE(
    "an unparsable answer is retried once in the same session, then fails with the raw "
    "text",
    "[codex]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  ResponsesModel model(
      s.root / "model",
      json{{"turns", {{{"text", "Maybe try a bigger batch?"}}, {{"text", "{not json either"}}}}});
  auto agent = MakeAgent(s, model);
  auto p = agent->Propose(View(s));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kInvalidArgument);
  CHECK(Contains(p.status().message(), "invalid twice"));
  CHECK(Contains(p.status().message(), "raw answer: {not json either"));
  auto requests = model.Requests();
  REQUIRE(requests.size() == 2);
  // The retry resumed the session: it carries the first exchange and the error.
  std::string seen = InputText(requests[1]);
  CHECK(Contains(seen, "Maybe try a bigger batch?"));
  CHECK(Contains(seen, "could not be used"));
}

TEST_CASE("past the timeout the CLI and its sandboxed tool processes are killed", "[codex]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  // The model starts a long command (in Codex's sandbox, a session of its own), then never answers.
  ResponsesModel model(s.root / "model", json::parse(R"({"turns": [{"shell": "sleep 77.25"}],
                                                         "default": {"sleep": 60, "text": "late"}})"));
  auto agent = MakeAgent(s, model, json{{"timeout_s", 5}, {"retries", 2}, {"hooks", false}});
  auto start = std::chrono::steady_clock::now();
  auto p = agent->Propose(View(s));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kDeadlineExceeded);
  CHECK(Contains(p.status().message(), "process group was killed"));
  CHECK(took < 5 + 4);
  REQUIRE(model.Requests().size() >= 1);  // the command was asked for
  // The sandbox's processes die with their parent (bubblewrap --die-with-parent): give the kernel
  // a moment to deliver that.
  for (int i = 0; i < 50 && ProcessesRunning("sleep 77.25") + ProcessesWithHome(s.home()) > 0;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(ProcessesWithHome(s.home()) == 0);
  CHECK(ProcessesRunning("sleep 77.25") == 0);
}

TEST_CASE("HTTP 500 is retried a bounded number of times, then fails", "[codex]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  ResponsesModel model(s.root / "model",
                       json{{"default", {{"http_error", 500}, {"message", "scripted failure"}}}});
  auto agent = MakeAgent(s, model, json{{"retries", 1}, {"api_retries", 1}});
  auto p = agent->Propose(View(s));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == attune::StatusCode::kUnavailable);
  CHECK(Contains(p.status().message(), "2 CLI run(s) failed"));
  CHECK(Contains(p.status().message(), "the turn failed"));
  // 2 runs x (1 request + 1 provider retry).
  CHECK(model.Requests().size() == 4);
}

TEST_CASE("a resumed campaign continues the recorded session", "[codex]") {
  Scratch s;
  s.SetStatus(json{{"state", "finished"}});
  ResponsesModel model(s.root / "model",
                       json{{"turns",
                             {{{"proposal", kMbsProposal}},
                              {{"text", "Second answer."},
                               {"proposal", {{"done", true}, {"rationale", "nothing left"}}}}}}});
  auto agent = MakeAgent(s, model);
  auto view = View(s);
  auto first = agent->Propose(view);
  REQUIRE(first.ok());
  CHECK(first->meta["resumed_session"] == false);
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
  // Codex reports the session's running total (200 after the second request); the second
  // proposal used one request's worth.
  CHECK(second->meta["session_input_tokens"] == 200);
  CHECK(second->meta["input_tokens"] == 100);
  CHECK(second->meta["output_tokens"] == 20);
  auto requests = model.Requests();
  REQUIRE(requests.size() == 2);
  CHECK(Contains(InputText(requests[1]), "memory headroom: 30 of 80 GiB used"));
}

TEST_CASE("codex --strict-config accepts every key of the generated config.toml", "[codex]") {
  Scratch s;
  ResponsesModel model(s.root / "model", json{{"default", {{"text", "fin"}}}});
  attune::PluginContext ctx;
  ctx.config = {
      {"binary", std::getenv("ATTUNE_CODEX_BIN") ? std::getenv("ATTUNE_CODEX_BIN") : "codex"},
      {"model", "fake-model"},
      {"base_url", model.BaseUrl()},
      {"env_key", "ATTUNE_FAKE_KEY"},
      {"env", {{"ATTUNE_FAKE_KEY", "x"}}}};
  ctx.campaign_dir = s.campaign().string();
  ctx.attune_binary = ATTUNE_HOOK_DRIVER;
  auto config = attune::agents::ParseConfig(ctx);
  REQUIRE(config.ok());
  auto folders = attune::agents::FoldersFor(config->campaign_dir);
  std::vector<std::string> warnings;
  REQUIRE(attune::agents::PrepareFolders(*config, folders, &warnings).ok());
  auto argv = attune::agents::BuildArgv(*config, {"hi", ""});
  argv.insert(argv.begin() + 2, "--strict-config");
  attune::support::ProcessOptions options;
  options.env = attune::agents::ChildEnvironment(*config, folders);
  options.cwd = folders.work;
  options.timeout_s = 60;
  auto run = attune::support::RunProcess(argv, options);
  REQUIRE(run.ok());
  INFO(run->err);
  CHECK(run->exit_code == 0);
  CHECK(Contains(run->out, "turn.completed"));
  // The check has teeth: an unknown top-level key is refused.
  std::string toml = attune::agents::ConfigToml(*config);
  std::ofstream(folders.home + "/config.toml", std::ios::trunc) << "no_such_key = 1\n" << toml;
  auto refused = attune::support::RunProcess(argv, options);
  REQUIRE(refused.ok());
  CHECK(refused->exit_code != 0);
}
