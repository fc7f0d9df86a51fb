// Copyright attune authors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <utility>

#include "heuristic_agent.h"
#include "history.h"
#include "view_fixtures.h"

using attune::CampaignView;
using attune::FailureKind;
using attune::Proposal;
using attune::agents::HeuristicAgent;
using attune::agents::HeuristicConfig;
using attune::testing::MakeView;
using attune::testing::Record;

namespace {

Proposal Ask(const CampaignView& view, HeuristicConfig config = {}) {
  HeuristicAgent agent(config);
  auto result = agent.Propose(view);
  REQUIRE(result.ok());
  return *result;
}

bool Changes(const Proposal& p, const std::string& key) {
  for (const auto& c : p.changes) {
    if (c.key == key) return true;
  }
  return false;
}

double MemoryPrior(const CampaignView& view, const std::string& lever_id) {
  for (const auto& l : view.levers) {
    if (l.id == lever_id) return l.expected_memory;
  }
  return 0;
}

}  // namespace

TEST_CASE("with memory headroom the heuristic spends it on a faster, hungrier setting",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK((p.lever_id == "micro_batch_size" || p.lever_id == "recompute"));
  CHECK(p.meta["memory"].get<double>() > 0);
  CHECK(p.meta["expected_gain"].get<double>() > view.noise_band);
  CHECK(p.rationale.find("memory_headroom") != std::string::npos);
}

TEST_CASE("with memory headroom the heuristic may drop recompute to go faster",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  // Micro-batch moves are gone (say the stack found none legal): less recompute is what is left.
  std::erase_if(view.legal_moves, [](const attune::Move& m) {
    return m.lever_id == "micro_batch_size";
  });
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK(p.lever_id == "recompute");
  REQUIRE(p.changes.size() == 1);
  CHECK_FALSE(p.changes[0].to.has_value());
}

TEST_CASE("near the memory limit the heuristic does not propose a move that would not fit",
          "[agents][heuristic]") {
  CampaignView view = MakeView(70.0);
  Proposal p = Ask(view);
  // A larger micro-batch may only come paired with a memory saver that makes it fit.
  if (Changes(p, "--micro-batch-size")) CHECK(p.meta.contains("saver_memory"));
  if (!p.done) CHECK_FALSE((p.lever_id == "recompute" && !p.changes[0].to));
}

TEST_CASE("after an out-of-memory failure the heuristic proposes a memory-saving lever",
          "[agents][heuristic]") {
  CampaignView view = MakeView(40.0);
  Proposal first = Ask(view);
  REQUIRE(first.meta["memory"].get<double>() > 0);
  Record(&view, first, "failed", FailureKind::kOom);
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK(MemoryPrior(view, p.lever_id) < 0);
  CHECK(p.rationale.find("oom") != std::string::npos);
  // The memory it saves is spent on the change that did not fit, never on that change alone.
  CHECK(p.changes.size() == 2);
}

TEST_CASE("after an out-of-memory failure without pairing, a memory lever still comes first",
          "[agents][heuristic]") {
  CampaignView view = MakeView(40.0);
  Proposal first = Ask(view);
  REQUIRE(first.meta["memory"].get<double>() > 0);
  Record(&view, first, "failed", FailureKind::kOom);
  HeuristicConfig config;
  config.pair_after_oom = false;
  config.min_gain = -1;  // because we want the ranking, not the stop rule
  Proposal p = Ask(view, config);
  REQUIRE_FALSE(p.done);
  CHECK(MemoryPrior(view, p.lever_id) < 0);
}

TEST_CASE("the heuristic never repeats a refused or failed change", "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  std::set<std::pair<std::string, std::string>> banned;
  for (int i = 0; i < 20; ++i) {
    Proposal p = Ask(view);
    if (p.done) break;
    for (const auto& c : p.changes) {
      CHECK(banned.count({c.key, attune::agents::ValueText(c.to)}) == 0);
    }
    // Alternate refusals and config failures so that every proposal is banned afterwards.
    bool refuse = i % 2 == 0;
    Record(&view, p, refuse ? "refused" : "failed",
           refuse ? std::nullopt : std::optional<FailureKind>(FailureKind::kConfigError));
    for (const auto& c : p.changes) banned.insert({c.key, attune::agents::ValueText(c.to)});
  }
  CHECK(view.history.size() >= 3);
}

TEST_CASE("the heuristic says done when no move is expected to beat the noise band",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  for (auto& lever : view.levers) lever.expected_speed = 0.005;
  Proposal p = Ask(view);
  CHECK(p.done);
  CHECK(p.rationale.find("noise band") != std::string::npos);
}

TEST_CASE("the heuristic says done when one more job does not fit the budget",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  view.budget_left_gpu_hours = 0.5;
  Proposal p = Ask(view);
  CHECK(p.done);
  CHECK(p.rationale.find("budget") != std::string::npos);
}

TEST_CASE("a slower result pushes its lever down and the campaign ends", "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  std::set<std::string> proposed;
  int asked = 0;
  for (; asked < 30; ++asked) {
    Proposal p = Ask(view);
    if (p.done) break;
    CHECK(proposed.insert(attune::DescribeChanges(p.changes)).second);
    Record(&view, p, "slower");
  }
  CHECK(asked < 30);
  CHECK(asked >= 2);
}

TEST_CASE("after a new leader the heuristic keeps going in the direction that paid",
          "[agents][heuristic]") {
  CampaignView view = MakeView(20.0);
  Proposal p = Ask(view);
  REQUIRE(p.meta["memory"].get<double>() > 0);
  Record(&view, p, "new_leader");
  view.leader_measurement->peak_memory_gib = 30.0;
  Proposal next = Ask(view);
  REQUIRE_FALSE(next.done);
  CHECK(next.meta["memory"].get<double>() > 0);
  CHECK(next.changes != p.changes);
}

TEST_CASE("a past lesson lifts a lever above an equal catalog prior", "[agents][heuristic]") {
  CampaignView view = MakeView(std::nullopt);
  view.legal_moves = {{"overlap_grad_reduce", {{"--overlap-grad-reduce", std::nullopt, ""}}, ""},
                      {"attention_backend", {{"--attention-backend", std::nullopt, "flash"}}, ""}};
  for (auto& lever : view.levers) lever.expected_speed = 0.08;
  view.lessons = "lever: attention_backend effect: +20%\n";
  CHECK(Ask(view).lever_id == "attention_backend");
  view.lessons = "lever: overlap_grad_reduce effect: +20%\n";
  CHECK(Ask(view).lever_id == "overlap_grad_reduce");
}

TEST_CASE("the heuristic is deterministic for a given view", "[agents][heuristic]") {
  CampaignView view = MakeView(40.0);
  Proposal a = Ask(view);
  Proposal b = Ask(view);
  CHECK(a.changes == b.changes);
  CHECK(a.rationale == b.rationale);
}

TEST_CASE("heuristic config rejects unknown keys with the key's name", "[agents][heuristic]") {
  auto c = attune::agents::ParseHeuristicConfig({{"min_gian", 0.1}});
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("with.min_gian") != std::string::npos);
}

TEST_CASE("a hungry move that is predicted not to fit comes paired with a memory saver",
          "[agents][heuristic]") {
  CampaignView view = MakeView(60.0);  // 75% used: dropping recompute (+54%) would not fit
  for (auto& lever : view.levers) {
    if (lever.id == "recompute") lever.expected_speed = -0.25;
  }
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK(p.changes.size() == 2);
  CHECK(Changes(p, "--recompute-granularity"));
  CHECK(MemoryPrior(view, p.lever_id) < 0);
  CHECK(p.meta["pair_source"] == "predicted");
}

TEST_CASE("after a pair runs out of memory the next saver for it must save more",
          "[agents][heuristic]") {
  CampaignView view = MakeView(60.0);
  for (auto& lever : view.levers) {
    if (lever.id == "recompute") lever.expected_speed = -0.25;
  }
  Proposal pair = Ask(view);
  REQUIRE(pair.changes.size() == 2);
  const attune::Change hungry = pair.changes[1];  // the saver's change comes first
  Record(&view, pair, "failed", FailureKind::kOom);
  for (int i = 0; i < 5; ++i) {
    Proposal p = Ask(view);
    if (p.done) break;
    bool same_hungry = std::find(p.changes.begin(), p.changes.end(), hungry) != p.changes.end();
    if (same_hungry && p.changes.size() == 2) {
      CHECK(p.meta["saver_memory"].get<double>() <
            pair.meta["saver_memory"].get<double>() - 0.09);
    }
    Record(&view, p, "failed", FailureKind::kOom);
  }
}
