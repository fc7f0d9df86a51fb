// Copyright attune authors.
//
// The optuna agent against the REAL Optuna (Debian's python3-optuna) through its helper: the
// same view gives the same proposal, an OOM is told back and its move never proposed again, and
// every way the helper can fail is a Status that says where and what to do. CMake skips the whole
// executable (exit 77) when /usr/bin/python3 cannot import optuna.
#include "optuna_agent.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "view_fixtures.h"

using attune::CampaignView;
using attune::FailureKind;
using attune::Measurement;
using attune::Proposal;
using attune::agents::optuna::OptunaAgent;
using attune::agents::optuna::ParseOptunaConfig;
using attune::testing::MakeView;
using attune::testing::Record;

namespace {

const char kHelperDir[] = ATTUNE_SOURCE_DIR "/plugins/agents/optuna";

OptunaAgent MakeAgent(nlohmann::json with = nlohmann::json::object()) {
  auto config = ParseOptunaConfig(with, kHelperDir, "");
  REQUIRE(config.ok());
  return OptunaAgent(*config);
}

Proposal Ask(OptunaAgent& agent, const CampaignView& view) {
  auto p = agent.Propose(view);
  INFO(p.status().message());
  REQUIRE(p.ok());
  return *p;
}

CampaignView MeasuredView() {
  CampaignView view = MakeView(30.0);
  view.baseline_measurement->tokens_per_s_per_gpu = 1000;
  view.leader_measurement = view.baseline_measurement;
  return view;
}

// A script in a fresh temporary folder, made executable.
std::string Script(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / "attune-optuna-test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path) << text;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::string FailureOf(nlohmann::json with, const CampaignView& view) {
  auto config = ParseOptunaConfig(with, kHelperDir, "");
  REQUIRE(config.ok());
  OptunaAgent agent(*config);
  auto p = agent.Propose(view);
  REQUIRE_FALSE(p.ok());
  return p.status().message();
}

}  // namespace

TEST_CASE("optuna: the same view gives the same proposal, from a fresh agent too",
          "[optuna][integration]") {
  CampaignView view = MeasuredView();
  OptunaAgent a = MakeAgent();
  OptunaAgent b = MakeAgent();
  Proposal first = Ask(a, view);
  REQUIRE_FALSE(first.done);
  CHECK(first.changes == Ask(b, view).changes);
  CHECK(first.meta["sampler"] == "tpe");
  CHECK(first.meta["params"].is_object());
  CHECK(first.meta["trial_number"] == 1);  // the baseline is trial 0
  CHECK(first.meta["trials_told"] == 1);
  CHECK(first.meta["match"] == "exact");  // the sampler chose it, not the fallback
  std::set<std::string> picks;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    view.seed = seed;
    picks.insert(attune::DescribeChanges(Ask(a, view).changes));
  }
  CHECK(picks.size() > 2);  // the seed reaches the sampler
}

TEST_CASE("optuna: every sampler walks the legal moves without repeating one, then is done",
          "[optuna][integration]") {
  for (const char* sampler : {"tpe", "random", "nsga2"}) {
    INFO(sampler);
    OptunaAgent agent = MakeAgent({{"sampler", sampler}, {"startup_trials", 2}});
    CampaignView view = MeasuredView();
    std::set<std::string> seen;
    size_t moves = view.legal_moves.size();
    for (size_t i = 0; i <= moves; ++i) {
      Proposal p = Ask(agent, view);
      if (p.done) break;
      CHECK(seen.insert(attune::DescribeChanges(p.changes)).second);
      Record(&view, p, "slower");
      view.history.back().measurement = Measurement{};
      view.history.back().measurement->tokens_per_s_per_gpu = 900 - 10.0 * static_cast<double>(i);
    }
    CHECK(seen.size() == moves);
    CHECK(Ask(agent, view).done);
  }
}

TEST_CASE("optuna: an OOM is told back as a failed trial and its move is not proposed again",
          "[optuna][integration]") {
  OptunaAgent agent = MakeAgent();
  CampaignView view = MeasuredView();
  Proposal first = Ask(agent, view);
  Record(&view, first, "failed", FailureKind::kOom);
  Proposal second = Ask(agent, view);
  CHECK(second.meta["trials_told"] == 2);  // the baseline and the failed trial
  CHECK(second.changes != first.changes);
}

TEST_CASE("optuna: a helper that cannot help fails with where and what to do",
          "[optuna][integration]") {
  CampaignView view = MeasuredView();
  // -S leaves dist-packages (where python3-optuna lives) off sys.path: optuna does not import.
  std::string no_optuna =
      Script("no-optuna-python", "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n");
  CHECK_THAT(
      FailureOf({{"python", no_optuna}}, view),
      Catch::Contains("cannot import optuna") && Catch::Contains("apt-get install python3-optuna"));
  std::string crash =
      Script("crash.py", "import sys\nsys.stderr.write('boom on purpose')\nsys.exit(1)\n");
  CHECK_THAT(FailureOf({{"helper", crash}}, view),
             Catch::Contains("crashed (exit 1") && Catch::Contains("boom on purpose"));
  std::string slow = Script("slow.py", "import time\ntime.sleep(30)\n");
  CHECK_THAT(FailureOf({{"helper", slow}, {"timeout_s", 0.5}}, view),
             Catch::Contains("did not answer within") && Catch::Contains("with.timeout_s"));
  std::string wrong =
      Script("wrong.py", "print('{\"ok\": true, \"points\": [{\"number\": \"x\"}]}')\n");
  CHECK_THAT(FailureOf({{"helper", wrong}}, view), Catch::Contains("answer is malformed"));
}
