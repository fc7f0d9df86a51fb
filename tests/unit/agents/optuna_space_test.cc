// Copyright attune authors.
//
// The optuna agent's search space, trials and mapping back to a legal move (optuna_space.h):
// pure functions of the view, no Python. The helper itself is tested in
// tests/integration/optuna/.
#include "optuna_space.h"

#include <catch2/catch.hpp>

#include "optuna_agent.h"
#include "view_fixtures.h"

using attune::CampaignView;
using attune::FailureKind;
using attune::Measurement;
using attune::Move;
using attune::Proposal;
using attune::agents::optuna::BuildSearchSpace;
using attune::agents::optuna::ChooseMove;
using attune::agents::optuna::OpenMoves;
using attune::agents::optuna::ParseOptunaConfig;
using attune::agents::optuna::SearchSpace;
using attune::testing::MakeView;
using attune::testing::Record;

namespace {

Measurement Tokens(double tokens) {
  Measurement m;
  m.step_time_s = 1;
  m.tokens_per_s_per_gpu = tokens;
  return m;
}

Proposal MoveTo(const CampaignView& view, const std::string& key, const std::string& to) {
  for (const Move& m : view.legal_moves) {
    if (m.changes.front().key == key && m.changes.front().to == to) {
      Proposal p;
      p.changes = m.changes;
      p.lever_id = m.lever_id;
      return p;
    }
  }
  FAIL("no legal move sets " << key << " to " << to);
  return {};
}

CampaignView MeasuredView() {
  CampaignView view = MakeView(30.0);
  view.baseline_measurement = Tokens(1000);
  view.leader_measurement = view.baseline_measurement;
  return view;
}

}  // namespace

TEST_CASE("optuna: every lever with a choice is one categorical parameter, numbers in order",
          "[agents][optuna]") {
  SearchSpace space = BuildSearchSpace(MeasuredView());
  // overlap_grad_reduce has no legal move and no history: nothing to choose, left out.
  CHECK(space.choices.count("overlap_grad_reduce") == 0);
  CHECK(space.choices.at("micro_batch_size") == std::vector<std::string>{"1", "2", "4", "8"});
  CHECK(space.choices.at("recompute") == std::vector<std::string>{"(absent)", "full", "selective"});
  REQUIRE(space.trials.size() == 1);
  CHECK(space.trials[0].candidate_id == "baseline");
  CHECK(space.trials[0].params.at("micro_batch_size") == "1");
  CHECK(space.trials[0].value == 1000);
}

TEST_CASE("optuna: refusals and recipe failures are failed trials; infrastructure is not told",
          "[agents][optuna]") {
  CampaignView view = MeasuredView();
  Record(&view, MoveTo(view, "--micro-batch-size", "8"), "failed", FailureKind::kOom);
  Record(&view, MoveTo(view, "--micro-batch-size", "4"), "failed", FailureKind::kNcclTimeout);
  view.history.back().failure->infrastructure = true;
  Record(&view, MoveTo(view, "--attention-backend", "flash"), "refused");
  Record(&view, MoveTo(view, "--micro-batch-size", "2"), "slower");
  view.history.back().measurement = Tokens(900);
  SearchSpace space = BuildSearchSpace(view);
  std::vector<std::string> told;
  for (const auto& t : space.trials) told.push_back(t.candidate_id + (t.failed ? ":fail" : ":ok"));
  CHECK(told == std::vector<std::string>{"baseline:ok", "c001:fail", "c003:fail", "c004:ok"});
  CHECK(space.trials[1].params.at("micro_batch_size") == "8");
  CHECK(space.trials[3].value == 900);
}

TEST_CASE("optuna: a sampled point maps to the legal move that reaches it, else the nearest",
          "[agents][optuna]") {
  CampaignView view = MeasuredView();
  SearchSpace space = BuildSearchSpace(view);
  auto open = OpenMoves(view);
  std::map<std::string, std::string> point = {{"micro_batch_size", "4"},
                                              {"recompute", "selective"},
                                              {"distributed_optimizer", "(absent)"},
                                              {"attention_backend", "(absent)"}};
  auto exact = ChooseMove(view, space, open, point);
  REQUIRE(exact);
  CHECK(exact->exact);
  CHECK(exact->move->changes.front().to == "4");

  // mbs 4 already failed for the recipe: the nearest open value on that lever is taken.
  Record(&view, MoveTo(view, "--micro-batch-size", "4"), "failed", FailureKind::kOom);
  open = OpenMoves(view);
  auto nearest = ChooseMove(view, space, open, point);
  REQUIRE(nearest);
  CHECK_FALSE(nearest->exact);
  CHECK(nearest->move->lever_id == "micro_batch_size");
  CHECK(nearest->move->changes.front().to != "4");

  // The leader's own point moves nothing.
  std::map<std::string, std::string> leader = {{"micro_batch_size", "1"},
                                               {"recompute", "selective"},
                                               {"distributed_optimizer", "(absent)"},
                                               {"attention_backend", "(absent)"}};
  CHECK_FALSE(ChooseMove(view, space, open, leader).has_value());
}

TEST_CASE("optuna: of the levers the sampler moved, the one with the larger expected effect wins",
          "[agents][optuna]") {
  CampaignView view = MeasuredView();
  SearchSpace space = BuildSearchSpace(view);
  std::map<std::string, std::string> point = {{"micro_batch_size", "2"},
                                              {"recompute", "selective"},
                                              {"distributed_optimizer", "(absent)"},
                                              {"attention_backend", "flash"}};
  auto choice = ChooseMove(view, space, OpenMoves(view), point);
  REQUIRE(choice);
  CHECK(choice->move->lever_id == "micro_batch_size");  // +8% beats attention_backend's +4%

  // recompute (-15% when turned on, so +15% off) outweighs micro-batch's +8%.
  std::map<std::string, std::string> off = {{"micro_batch_size", "2"},
                                            {"recompute", "(absent)"},
                                            {"distributed_optimizer", "(absent)"},
                                            {"attention_backend", "flash"}};
  choice = ChooseMove(view, space, OpenMoves(view), off);
  REQUIRE(choice);
  CHECK(choice->move->lever_id == "recompute");
}

TEST_CASE("optuna: options are checked, samplers that need numbers are refused by name",
          "[agents][optuna]") {
  const std::string helper_dir = ATTUNE_SOURCE_DIR "/plugins/agents/optuna";
  auto ok = ParseOptunaConfig(nlohmann::json::object(), helper_dir, "");
  REQUIRE(ok.ok());
  CHECK(ok->sampler == "tpe");
  CHECK(ok->helper == helper_dir + "/optuna_helper.py");

  auto cmaes = ParseOptunaConfig({{"sampler", "cmaes"}}, helper_dir, "");
  REQUIRE_FALSE(cmaes.ok());
  CHECK_THAT(cmaes.status().message(), Catch::Contains("with.sampler: 'cmaes'") &&
                                           Catch::Contains("use tpe, random or nsga2"));
  auto typo = ParseOptunaConfig({{"sampler", "tpee"}}, helper_dir, "");
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(typo.status().message(), Catch::Contains("with.sampler"));
  auto no_helper = ParseOptunaConfig(nlohmann::json::object(), "/nonexistent", "/nowhere");
  REQUIRE_FALSE(no_helper.ok());
  CHECK_THAT(no_helper.status().message(),
             Catch::Contains("/nonexistent/optuna_helper.py") && Catch::Contains("with.helper"));
  auto no_python = ParseOptunaConfig({{"python", "/no/such/python3"}}, helper_dir, "");
  REQUIRE_FALSE(no_python.ok());
  CHECK_THAT(no_python.status().message(), Catch::Contains("with.python"));
}
