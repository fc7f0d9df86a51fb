// Pure parts of the steps layer: job names, the step schema, `if:` values, status rendering.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "../campaign/campaign_fixtures.h"
#include "steps/campaign_runner.h"
#include "steps/step_kinds.h"
#include "steps/job_driver.h"
#include "steps/steps.h"

namespace attune {
namespace {

using testing::LogBuilder;
using nlohmann::json;

TEST_CASE("job names are deterministic from campaign, candidate, pair and attempt", "[steps]") {
  CHECK(JobName("camp", JobAsk{"c003", JobPurpose::kCandidate, 0, "tune"}, 1) == "camp-c003-1");
  CHECK(JobName("camp", JobAsk{"baseline", JobPurpose::kBaseline, 0, "b"}, 2) == "camp-baseline-2");
  CHECK(JobName("camp", JobAsk{"c003", JobPurpose::kVerify, 2, "v"}, 1) == "camp-verify-c003-p2-1");
}

TEST_CASE("the built-in step schema declares each kind's options with types and ranges",
          "[steps]") {
  WorkflowSchema s = BuiltinStepSchema();
  CHECK(s.step_kinds.size() == 5);
  using Names = std::vector<std::string>;
  CHECK(s.step_kinds.at("benchmark").PropertyNames() == Names{"repeats"});
  CHECK(s.step_kinds.at("tune").PropertyNames() == Names{"agent_retries", "infra_retries", "max_candidates", "stop"});
  CHECK(s.step_kinds.at("verify").PropertyNames() == Names{"infra_retries", "repeats"});
  CHECK(s.step_kinds.at("profile").PropertyNames() == Names{"infra_retries"});
  CHECK(s.step_kinds.at("report").PropertyNames().empty());
  const auto& bench = s.step_kinds.at("benchmark");
  CHECK(bench.Check(nlohmann::json{{"repeats", 2}}) == std::nullopt);
  CHECK(bench.Check(nlohmann::json{{"repeats", "three"}})->message ==
        "expected an integer in [1, 100], found 'three'");
  CHECK(bench.Check(nlohmann::json{{"repeats", 0}}).has_value());
  CHECK(bench.Check(nlohmann::json{{"repeats", 2.5}}).has_value());
  CHECK(bench.Check(nlohmann::json{{"repeats", std::nan("")}}).has_value());
  CHECK(bench.Check(nlohmann::json{{"repeat", 2}})->at_key);
  CHECK(s.step_kinds.at("report").Check(nlohmann::json{{"x", 1}}).has_value());
}

TEST_CASE("a step's integer options default to what its schema declares", "[steps]") {
  StepDecl bench{"b", "benchmark", nlohmann::json::object(), ""};
  CHECK(StepIntOption(bench, "repeats").value() == 3);
  bench.with["repeats"] = 5;
  CHECK(StepIntOption(bench, "repeats").value() == 5);
  StepDecl tune{"t", "tune", nlohmann::json::object(), ""};
  CHECK(StepIntOption(tune, "agent_retries").value() == 3);
  CHECK(StepIntOption(tune, "infra_retries").value() == 2);
  StepDecl verify{"v", "verify", nlohmann::json{{"infra_retries", 0}}, ""};
  CHECK(StepIntOption(verify, "infra_retries").value() == 0);
  CHECK(StepIntOption(verify, "repeats").value() == 3);
  // max_candidates defaults to the budget's, not to a schema value: asking for it is a bug.
  auto missing = StepIntOption(tune, "max_candidates");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kInternal);
  CHECK_THAT(missing.status().message(), Catch::Contains("no integer default for 'max_candidates'"));
}

TEST_CASE("the names if: may use are exactly those the state provides", "[steps]") {
  std::set<std::string> provided;
  const CampaignState empty;
  for (const auto& [name, value] : ConditionValues(empty)) provided.insert(name);
  CHECK(provided == ConditionNames());
  CHECK(BuiltinStepSchema().condition_names == ConditionNames());
}

TEST_CASE("if: values come from the folded state", "[steps]") {
  LogBuilder b(1.0);
  b.BaselineRun(1, 1000).Propose("c001", 1, "2").Gate("c001", true).Rank("c001", "new_leader", 1200, 1.2);
  b.Add(events::kLeaderChanged, json{{"from", "baseline"}, {"to", "c001"}, {"reason", "faster"}});
  auto v = ConditionValues(b.Fold());
  CHECK(v.at("leader") == "c001");
  CHECK(v.at("leader_changed") == true);
  CHECK(v.at("candidates") == 1);
  CHECK(v.at("failed_jobs") == 0);
  CHECK(v.at("budget_spent_gpu_hours").get<double>() == Approx(0.2));
  CHECK(v.at("budget_left_gpu_hours").get<double>() == Approx(0.8));
}

TEST_CASE("the human status names steps, leader, budget and jobs in flight", "[steps]") {
  json status{{"campaign_id", "x"}, {"state", "paused"}, {"stack", "megatron"}, {"launcher", "sim"},
              {"agent", "heuristic"},
              {"steps", json::array({json{{"id", "baseline"}, {"status", "done"}, {"outcome", "done"}}})},
              {"leader", "c002"}, {"leader_change", "--micro-batch-size: 1 -> 2"}, {"speedup", 1.25},
              {"speedup_verified", false}, {"candidates", 3}, {"jobs", 5}, {"failed_jobs", 1},
              {"jobs_in_flight", json::array({json{{"job", "x-c003-1"}, {"submitted", true}}})},
              {"budget", {{"total_gpu_hours", 2.0}, {"charged_gpu_hours", 0.5},
                          {"reserved_gpu_hours", 0.25}, {"left_gpu_hours", 1.25}}}};
  std::ostringstream out;
  PrintCampaignStatus(status, out);
  const std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("campaign x (paused)"));
  CHECK_THAT(text, Catch::Contains("step baseline"));
  CHECK_THAT(text, Catch::Contains("leader c002 --micro-batch-size: 1 -> 2; speedup 1.250x"));
  CHECK_THAT(text, Catch::Contains("0.5000 charged + 0.2500 reserved of 2.0000 GPU-hours; 1.2500 left"));
  CHECK_THAT(text, Catch::Contains("in flight: x-c003-1"));
  status["speedup_verified"] = true;
  status["speedup_caveat"] =
      "not established: in 1 of 2 paired runs the leader ran no faster than the baseline";
  std::ostringstream caveated;
  PrintCampaignStatus(status, caveated);
  CHECK_THAT(caveated.str(),
             Catch::Contains("speedup 1.250x (verified); not established: in 1 of 2 paired runs"));
}

TEST_CASE("progress lines summarize events for people", "[steps]") {
  CHECK(SummarizeEvent(events::kLeaderChanged, json{{"from", "baseline"}, {"to", "c001"}, {"reason", "faster"}}) ==
        "leader baseline -> c001 (faster)");
  CHECK_THAT(SummarizeEvent(events::kGateVerdict, json{{"candidate", "c002"}, {"pass", false},
                                                       {"rule_id", "obj.lr"}, {"reason", "lr changed"}}),
             Catch::Contains("refused by the gate: obj.lr: lr changed"));
}

TEST_CASE("a proposal may start from the baseline or a measured candidate, nothing else", "[steps]") {
  LogBuilder b;
  b.BaselineRun(1, 1000);
  b.Propose("c001", 1, "2").Gate("c001", true);
  b.Request("t-c001-1", "c001", "candidate", testing::TestRecipe("2")).Finish("t-c001-1", 300, testing::TestMeasurement(950));
  b.Rank("c001", "slower", 950, 0.95);
  Failure oom;
  oom.kind = FailureKind::kOom;
  b.Propose("c002", 2, "4").Gate("c002", true);
  b.Request("t-c002-1", "c002", "candidate", testing::TestRecipe("4")).Finish("t-c002-1", 30, std::nullopt, oom);
  b.Rank("c002", "failed");
  b.Propose("c003", 3, "8", "c001");
  b.Propose("c004", 4, "3").Gate("c004", false, "obj.lr").Rank("c004", "refused");
  const CampaignState s = b.Fold();
  CHECK(ParentRefusal(s, "baseline").empty());
  CHECK(ParentRefusal(s, "c001").empty());  // slower, but measured: a parent
  CHECK_THAT(ParentRefusal(s, "c002"), Catch::Contains("was failed") && Catch::Contains("must be measured"));
  CHECK_THAT(ParentRefusal(s, "c003"), Catch::Contains("not ranked yet"));
  CHECK_THAT(ParentRefusal(s, "c004"), Catch::Contains("was refused"));
  CHECK_THAT(ParentRefusal(s, "c099"), Catch::Contains("not a candidate of this campaign"));
  // The candidate's recorded base is the one the agent named.
  CHECK(s.FindCandidate("c003")->base_id == "c001");
}

TEST_CASE("parents: the fastest measured candidates, then the ones measured last", "[steps]") {
  LogBuilder b;
  b.BaselineRun(1, 1000);
  // c001..c011 measured slower than the baseline (the leader), c001 the fastest, c011 the
  // slowest; c012 failed.
  for (int i = 1; i <= 11; ++i) {
    char id[8];
    std::snprintf(id, sizeof id, "c%03d", i);
    const std::string value = std::to_string(i + 1);
    b.Propose(id, i, value).Gate(id, true);
    b.Request(std::string("t-") + id + "-1", id, "candidate", testing::TestRecipe(value))
        .Finish(std::string("t-") + id + "-1", 300, testing::TestMeasurement(990 - 10 * i));
    b.Rank(id, "slower", 990 - 10 * i, (990 - 10 * i) / 1000.0);
  }
  Failure oom;
  oom.kind = FailureKind::kOom;
  b.Propose("c012", 12, "99").Gate("c012", true);
  b.Request("t-c012-1", "c012", "candidate", testing::TestRecipe("99")).Finish("t-c012-1", 30, std::nullopt, oom);
  b.Rank("c012", "failed");
  const std::vector<std::string> ids = ParentIds(b.Fold());
  // The leader (the baseline) is not its own parent; the eight fastest, then the two measured
  // last that are not among them (c011, c010), most recent first; never the failed c012.
  CHECK(ids == std::vector<std::string>{"c001", "c002", "c003", "c004", "c005", "c006", "c007", "c008",
                                        "c011", "c010"});
}

}  // namespace
}  // namespace attune
