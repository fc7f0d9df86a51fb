// Copyright attune authors.
//
// The claude-code plugin's pieces that need no CLI: answer parsing and validation, the prompt,
// the command line and hook settings, the configuration, and the subprocess runner.
#include <catch2/catch.hpp>
#include <chrono>

#include "claude_cli.h"
#include "claude_code_agent.h"
#include "attune/agentkit/prompt.h"
#include "attune/agentkit/proposal.h"
#include "attune/support/process.h"

using namespace attune;
using namespace attune::agents;
using namespace attune::agentkit;
using nlohmann::json;

namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

CampaignView SmallView() {
  CampaignView v;
  v.stack = "megatron";
  v.baseline.stack = "megatron";
  v.baseline.args = {{"--micro-batch-size", {"1"}}, {"--tensor-model-parallel-size", {"2"}}};
  v.leader = v.baseline;
  v.leader_id = "baseline";
  v.levers = {
      {"micro_batch_size", "mbs", {"--micro-batch-size"}, {"memory_headroom"}, 0.1, 0.3, false}};
  v.legal_moves = {
      {"micro_batch_size", {{"--micro-batch-size", "1", "2"}}, "mbs 1 -> 2", {}, {}},
      {"micro_batch_size", {{"--micro-batch-size", "1", "4"}}, "mbs 1 -> 4", {}, {}},
      {"tp_sp",
       {{"--tensor-model-parallel-size", "2", "4"}, {"--sequence-parallel", std::nullopt, ""}},
       "tp 4 + sp",
       {},
       {}}};
  v.noise_band = 0.03;
  return v;
}

}  // namespace

TEST_CASE("the last JSON object of an answer is the proposal", "[claude-code][parser]") {
  auto j = ExtractLastJsonObject(
      "I looked at {\"a\":1}. Final:\n```json\n{\"done\":true,\"rationale\":\"r\"}\n```\n");
  REQUIRE(j.ok());
  CHECK((*j)["done"] == true);
  auto bare = ExtractLastJsonObject(
      "text {\"changes\":[{\"key\":\"--x\",\"from\":\"1\",\"to\":\"2\"}],\"rationale\":\"}{\"} "
      "tail");
  REQUIRE(bare.ok());
  CHECK((*bare)["changes"].size() == 1);
  CHECK_FALSE(ExtractLastJsonObject("no json here { broken").ok());
  CHECK(Contains(ExtractLastJsonObject("nothing").status().message(), "no JSON object"));
}

TEST_CASE("fenced blocks win over later bare objects", "[claude-code][parser]") {
  auto j = ExtractLastJsonObject("```json\n{\"done\":true}\n```\nexample: {\"x\":1}");
  REQUIRE(j.ok());
  CHECK(j->contains("done"));
}

TEST_CASE("answers parse into proposals; the model cannot set meta", "[claude-code][parser]") {
  auto p = ParseAnswer(
      "{\"changes\":[{\"key\":\"--x\",\"from\":null,\"to\":\"2\"}],\"meta\":{\"evil\":1}}");
  REQUIRE(p.ok());
  CHECK_FALSE(p->changes[0].from.has_value());
  CHECK(p->meta.empty());
  CHECK_FALSE(ParseAnswer("{\"rationale\":\"no changes\"}").ok());
}

TEST_CASE("proposals are checked against the legal moves", "[claude-code][parser]") {
  auto v = SmallView();
  Proposal ok;
  ok.changes = {{"--micro-batch-size", "1", "2"}};
  CHECK(ValidateProposal(v, &ok).ok());
  CHECK(ok.lever_id == "micro_batch_size");

  Proposal wrong_from;
  wrong_from.changes = {{"--micro-batch-size", "2", "4"}};
  auto s = ValidateProposal(v, &wrong_from);
  CHECK(Contains(s.message(), "the leader has \"1\""));

  Proposal bad_target;
  bad_target.changes = {{"--micro-batch-size", "1", "3"}};
  CHECK(Contains(ValidateProposal(v, &bad_target).message(), "legal targets: \"2\", \"4\""));

  Proposal unknown;
  unknown.changes = {{"--lr", "1", "2"}};
  unknown.changes[0].from = std::nullopt;
  CHECK(Contains(ValidateProposal(v, &unknown).message(), "no legal move changes --lr"));

  Proposal half;
  half.changes = {{"--tensor-model-parallel-size", "2", "4"}};
  CHECK(Contains(ValidateProposal(v, &half).message(), "do not form one legal move"));

  Proposal both;
  both.changes = {{"--sequence-parallel", std::nullopt, ""},
                  {"--tensor-model-parallel-size", "2", "4"}};
  CHECK(ValidateProposal(v, &both).ok());

  Proposal done;
  done.done = true;
  CHECK(ValidateProposal(v, &done).ok());
}

TEST_CASE("a proposal from another measured candidate is checked against that candidate's moves",
          "[claude-code][parser]") {
  auto v = SmallView();
  ParentView parent;
  parent.id = "c002";
  parent.recipe = v.leader;
  REQUIRE(SetValue(&parent.recipe, "--micro-batch-size", "2").ok());
  parent.legal_moves = {
      {"micro_batch_size", {{"--micro-batch-size", "2", "4"}}, "mbs 2 -> 4", {}, {}}};
  v.parents = {parent};
  auto answer = ParseAnswer(
      "{\"base\": \"c002\", \"changes\": [{\"key\": \"--micro-batch-size\", \"from\": \"2\", \"to\": \"4\"}]}");
  REQUIRE(answer.ok());
  CHECK(answer->base_id == "c002");
  CHECK(ValidateProposal(v, &*answer).ok());
  CHECK(answer->lever_id == "micro_batch_size");
  // The leader's move is not c002's.
  Proposal from_leader_values = *answer;
  from_leader_values.changes = {{"--micro-batch-size", "1", "2"}};
  CHECK(Contains(ValidateProposal(v, &from_leader_values).message(), "the leader has \"2\""));
  Proposal unknown_base = *answer;
  unknown_base.base_id = "c009";
  auto s = ValidateProposal(v, &unknown_base);
  CHECK(Contains(s.message(), "\"c009\" is not a measured candidate"));
  CHECK(Contains(s.message(), "these are: c002"));
  CHECK_FALSE(ParseAnswer("{\"base\": 3, \"changes\": [{\"key\": \"a\", \"from\": \"1\", \"to\": \"2\"}]}").ok());
}

TEST_CASE("without legal moves, catalog keys with the leader's values are accepted",
          "[claude-code][parser]") {
  auto v = SmallView();
  v.legal_moves.clear();
  Proposal p;
  p.changes = {{"--micro-batch-size", "1", "8"}};
  CHECK(ValidateProposal(v, &p).ok());
  p.changes = {{"--tensor-model-parallel-size", "2", "1"}};
  CHECK(Contains(ValidateProposal(v, &p).message(), "not a key of any lever"));
}

TEST_CASE("the prompt carries what the agent needs to decide", "[claude-code][prompt]") {
  auto v = SmallView();
  v.campaign_id = "camp";
  v.budget_left_gpu_hours = 3;
  v.budget_total_gpu_hours = 10;
  v.diagnosis = {{"memory_headroom", 0.5, "peak 20 of 80 GiB"}};
  v.lessons = "mbs 2 helped on H100";
  CandidateRecord c;
  c.index = 1;
  c.candidate_id = "c001";
  c.base_id = "baseline";
  c.changes = {{"--micro-batch-size", "1", "4"}};
  c.outcome = Outcome::kFailed;
  c.failure = Failure{FailureKind::kOom, "cuda_oom", "CUDA out of memory", 12, "lower mbs", false, ""};
  v.history.push_back(c);
  std::string p = BuildProposalPrompt(v);
  for (const char* needle :
       {"noise band (3%)", "GPU-hours left: 3 of 10", "peak 20 of 80 GiB", "c001",
        "failure oom: \"CUDA out of memory\"", "mbs 2 helped on H100",
        "\"key\":\"--micro-batch-size\"", "{\"done\":true", "--micro-batch-size = 1"}) {
    INFO(needle);
    CHECK(Contains(p, needle));
  }
  CHECK(Contains(BuildRetryPrompt("bad from"), "could not be used: bad from"));
  // A categorical lever's order is in the catalog, with what "forward" means.
  Lever recompute{"recompute", "activation recomputation", {"--recompute-granularity"}, {"oom"},
                  -0.2, -0.4, false};
  recompute.order = {{"--recompute-granularity", {"", "selective", "full"}}};
  v.levers.push_back(recompute);
  p = BuildProposalPrompt(v);
  CHECK(Contains(p, "order of --recompute-granularity: (absent) < selective < full"));
  CHECK(Contains(p, "priors of a lever's forward move"));
}

TEST_CASE("a huge history keeps the prompt bounded", "[claude-code][prompt]") {
  auto v = SmallView();
  CandidateRecord c;
  c.outcome = Outcome::kSlower;
  c.rationale = std::string(5000, 'x');
  c.changes = {{"--micro-batch-size", "1", "2"}};
  for (int i = 0; i < 500; ++i) v.history.push_back(c);
  std::string p = BuildProposalPrompt(v);
  CHECK(p.size() <= kMaxPromptBytes);
  CHECK(Contains(p, "older entries omitted"));
  CHECK(Contains(p, "## Answer format"));
}

TEST_CASE("the command line puts the prompt first and carries the hooks", "[claude-code][cli]") {
  ClaudeCodeConfig c;
  c.binary = "/usr/local/bin/claude";
  c.model = "m";
  c.attune_binary = "/opt/attune bin/attune";
  c.campaign_dir = "/c d";
  c.k8s_namespace = "tune";
  ClaudeCall call;
  call.prompt = "PROMPT";
  call.resume_session = "sid";
  auto argv = BuildArgv(c, call);
  REQUIRE(argv.size() > 4);
  CHECK(argv[1] == "-p");
  CHECK(argv[2] == "PROMPT");
  auto has = [&](const std::string& a, const std::string& b) {
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == a && argv[i + 1] == b) return true;
    return false;
  };
  CHECK(has("--output-format", "json"));
  CHECK(has("--max-turns", "30"));
  CHECK(has("--resume", "sid"));
  CHECK(has("--model", "m"));
  CHECK(has("--tools", "Bash,Read,Grep,Glob"));
  json settings = HookSettings(c);
  std::string guard = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"];
  // This plugin's own command, with the folder it was loaded from (here: the test executable's).
  CHECK(guard.rfind("'/opt/attune bin/attune' --plugin-path ", 0) == 0);
  CHECK(Contains(guard,
                 " claude-code guard --campaign-dir '/c d' --attune '/opt/attune bin/attune' "
                 "--namespace tune"));
  // Fail closed: an attune that cannot run (here: no such binary) refuses the call (exit 2).
  support::ProcessOptions po;
  po.timeout_s = 10;
  po.input = R"({"tool_name":"Bash","tool_input":{"command":"ls"}})";
  auto ran = support::RunProcess({"/bin/sh", "-c", guard}, po);
  REQUIRE(ran.ok());
  CHECK(ran->exit_code == 2);
  CHECK(Contains(ran->err, "could not run; the call is refused"));
  std::string stop = settings["hooks"]["Stop"][0]["hooks"][0]["command"];
  CHECK(Contains(stop, " claude-code stop --campaign-dir '/c d'"));
  CHECK(Contains(stop, "--cap 3"));
}

TEST_CASE("the child environment turns telemetry off and bounds retries", "[claude-code][cli]") {
  ClaudeCodeConfig c;
  c.env = {{"ANTHROPIC_BASE_URL", "http://127.0.0.1:1"}, {"DISABLE_TELEMETRY", "0"}};
  auto env = ChildEnvironment(c);
  auto get = [&](const std::string& k) {
    std::string v;
    for (auto& [a, b] : env)
      if (a == k) v = b;  // the last one wins, as in support::RunProcess
    return v;
  };
  CHECK(get("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC") == "1");
  CHECK(get("CLAUDE_CODE_MAX_RETRIES") == "2");
  CHECK(get("ANTHROPIC_BASE_URL") == "http://127.0.0.1:1");
  CHECK(get("DISABLE_TELEMETRY") == "0");  // `env:` is applied last, deliberately
}

TEST_CASE("configuration errors name the key", "[claude-code][config]") {
  PluginContext ctx;
  ctx.config = {{"max_turns", "many"}};
  CHECK_THAT(ParseConfig(ctx).status().message(),
             Catch::Contains("with.max_turns: expected an integer in [1, 100000], found 'many'"));
  ctx.config = {{"max_turnz", 3}};
  CHECK_THAT(
      ParseConfig(ctx).status().message(),
      Catch::Contains("with.max_turnz: unknown key 'max_turnz' (did you mean 'max_turns'?)"));
  ctx.config = {{"env", {{"A", json::array()}}}};
  CHECK(Contains(ParseConfig(ctx).status().message(), "with.env.A"));
  ctx.config = {{"max_budget_usd", 2.5}, {"namespace", "ns"}, {"tools", {"Read"}}};
  ctx.data_dir = "/data";
  auto c = ParseConfig(ctx);
  REQUIRE(c.ok());
  CHECK(c->max_budget_usd == 2.5);
  CHECK(c->k8s_namespace == "ns");
  CHECK(c->tools == std::vector<std::string>{"Read"});
  CHECK(c->skill_path == "/data/skill/SKILL.md");
}

TEST_CASE("CLI results are read, errors included", "[claude-code][cli]") {
  support::ProcessResult ok;
  ok.exit_code = 0;
  ok.out =
      R"J({"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"R","session_id":"s","total_cost_usd":0.002,"permission_denials":[{"tool_name":"Bash"}]})J";
  auto r = ReadRun(ok);
  CHECK(r.ok);
  CHECK(r.result == "R");
  CHECK(r.num_turns == 2);
  CHECK(r.permission_denials == 1);
  support::ProcessResult turns;
  turns.exit_code = 1;
  turns.out =
      R"J({"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"],"session_id":"s"})J";
  auto t = ReadRun(turns);
  CHECK_FALSE(t.ok);
  CHECK(Contains(t.error, "error_max_turns"));
  CHECK(Contains(t.error, "Reached maximum number of turns"));
  support::ProcessResult api;
  api.exit_code = 1;
  api.out = R"J({"subtype":"success","is_error":true,"result":"API Error: 500 scripted"})J";
  CHECK(Contains(ReadRun(api).error, "API Error: 500"));
  support::ProcessResult junk;
  junk.exit_code = 1;
  junk.err = "boom";
  CHECK(Contains(ReadRun(junk).error, "stderr: boom"));
}

TEST_CASE("recorded cost and session come from the history", "[claude-code]") {
  CampaignView v;
  CandidateRecord a, b, c;
  a.agent_meta = {{"total_cost_usd", 0.25}, {"session_id", "s1"}};
  b.agent_meta = {{"total_cost_usd", 0.5}, {"session_id", "s2"}};
  c.agent_meta = json::object();
  v.history = {a, b, c};
  CHECK(RecordedCostUsd(v) == Approx(0.75));
  CHECK(LastSessionId(v) == "s2");
}

