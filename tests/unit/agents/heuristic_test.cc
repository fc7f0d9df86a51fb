// Copyright attune authors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <utility>

#include "heuristic_agent.h"
#include "heuristic_ask.h"
#include "history.h"
#include "view_fixtures.h"

using attune::CampaignView;
using attune::FailureKind;
using attune::Proposal;
using attune::agents::HeuristicConfig;
using attune::testing::Ask;
using attune::testing::MakeView;
using attune::testing::Record;

namespace {

bool Changes(const Proposal& p, const std::string& key) {
  for (const auto& c : p.changes) {
    if (c.key == key) return true;
  }
  return false;
}

// A view whose leader offers two moves, flash attention then the distributed optimizer, the first
// `speedups.size()` of them measured within noise at those speedups over the leader; the parents
// keep only their moves of the levers `parent_levers`.
CampaignView TwoMoveView(const std::vector<double>& speedups,
                         const std::set<std::string>& parent_levers) {
  CampaignView view = MakeView(std::nullopt);
  view.legal_moves = {
      {"attention_backend", {{"--attention-backend", std::nullopt, "flash"}}, "", {}, {}},
      {"distributed_optimizer", {{"--use-distributed-optimizer", std::nullopt, ""}}, "", {}, {}}};
  const std::vector<attune::Move> moves = view.legal_moves;
  for (size_t i = 0; i < speedups.size() && i < moves.size(); ++i) {
    Proposal p;
    p.changes = moves[i].changes;
    p.lever_id = moves[i].lever_id;
    Record(&view, p, "within_noise", std::nullopt, speedups[i]);
  }
  for (auto& parent : view.parents) {
    std::erase_if(parent.legal_moves,
                  [&](const attune::Move& m) { return parent_levers.count(m.lever_id) == 0; });
  }
  return view;
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
  REQUIRE_FALSE(p.done);
  // A larger micro-batch does not fit: it may only come after a measured memory saver.
  CHECK_FALSE(Changes(p, "--micro-batch-size"));
  CHECK_FALSE((p.lever_id == "recompute" && !p.changes[0].to));
  CHECK(p.changes.size() == 1);
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

TEST_CASE("when no move is expected to beat the noise band the heuristic explores, unless told not to",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  for (auto& lever : view.levers) lever.expected_speed = 0.005;
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK(p.meta.value("explore", false));
  CHECK(p.rationale.find("exploring") != std::string::npos);
  HeuristicConfig config;
  config.explore = false;
  Proposal q = Ask(view, config);
  CHECK(q.done);
  CHECK(q.rationale.find("noise band") != std::string::npos);
}

TEST_CASE("exploring measures each lever once before measuring any lever again",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  for (auto& lever : view.levers) lever.expected_speed = 0.005;
  std::set<std::string> levers_with_moves;
  for (const auto& m : view.legal_moves) levers_with_moves.insert(m.lever_id);
  std::set<std::string> seen;
  for (size_t i = 0; i < levers_with_moves.size(); ++i) {
    Proposal p = Ask(view);
    REQUIRE_FALSE(p.done);
    REQUIRE(p.meta.value("explore", false));
    CHECK(p.meta["lever_measurements"] == 0);
    CHECK(seen.insert(p.lever_id).second);
    Record(&view, p, "within_noise", std::nullopt, 1.0);
  }
  CHECK(seen == levers_with_moves);
}

TEST_CASE("two winners within noise combine: one lever from the other's candidate",
          "[agents][heuristic]") {
  // Only two moves from the leader, both measured within noise and faster.
  CampaignView view = TwoMoveView({1.025, 1.02}, {"attention_backend", "distributed_optimizer"});
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK_FALSE(p.meta.value("explore", false));
  CHECK(p.changes.size() == 1);
  // From one winner, the other winner's lever (each measured within noise on its own).
  REQUIRE((p.base_id == "c001" || p.base_id == "c002"));
  CHECK(p.lever_id == (p.base_id == "c001" ? "distributed_optimizer" : "attention_backend"));
  CHECK(p.meta["expected_gain"].get<double>() > view.noise_band);
}

TEST_CASE("a parent that leads the leader by a hair of noise does not take the leader's moves",
          "[agents][heuristic]") {
  // The flash move measured 0.4% faster than the leader: far inside the noise band, and under
  // half of it.
  CampaignView view = TwoMoveView({1.004}, {"distributed_optimizer"});
  const attune::Move distopt = view.legal_moves[1];
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  // The same lever is offered from the leader and from c001; the leader's wins the tie.
  CHECK(p.lever_id == "distributed_optimizer");
  CHECK(p.base_id.empty());
  // Once it is measured from the leader, the one move left is from c001, valued with c001 counted
  // as fast as the leader.
  Record(&view, p, "within_noise", std::nullopt, 1.0);
  bool found = false;
  for (auto& parent : view.parents) {
    found = found || parent.id == "c001";
    parent.legal_moves.clear();
    if (parent.id == "c001") parent.legal_moves = {distopt};
  }
  REQUIRE(found);
  Proposal q = Ask(view);
  REQUIRE_FALSE(q.done);
  CHECK(q.base_id == "c001");
  CHECK(q.meta["parent_ratio"].get<double>() == 1.0);
  CHECK(q.meta["parent_measured_ratio"].get<double>() == Approx(1.004));
  CHECK(q.rationale.find("under half the noise band") != std::string::npos);
}

TEST_CASE("a move that makes a lever legal is proposed alone for it, then that lever from it",
          "[agents][heuristic]") {
  CampaignView view = MakeView(std::nullopt);
  // A MoE recipe: 16 layers of width 4096, 64 experts top-8, EP 16 over two 8-GPU nodes under
  // the allgather dispatcher, where Megatron does not run the EP overlap.
  attune::Recipe r = view.baseline;
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--num-layers", "16"},
           {"--hidden-size", "4096"},
           {"--seq-length", "4096"},
           {"--num-experts", "64"},
           {"--moe-router-topk", "8"},
           {"--expert-model-parallel-size", "16"},
           {"--moe-token-dispatcher-type", "allgather"}}) {
    r.args.push_back({flag, {value}});
  }
  r.topology = {2, 8, "H100"};
  view.baseline = r;
  view.leader = r;
  view.levers.push_back({"moe_token_dispatcher",
                         "",
                         {"--moe-token-dispatcher-type"},
                         {"communication"},
                         0.0,
                         0.0,
                         false});
  view.levers.push_back({"moe_ep_overlap",
                         "",
                         {"--overlap-moe-expert-parallel-comm"},
                         {"communication"},
                         0.05,
                         0.03,
                         false});
  view.levers.push_back(
      {"gated_prior", "", {"--gated-prior"}, {"communication"}, 0.10, 0.0, false});
  attune::Move alltoall{"moe_token_dispatcher",
                        {{"--moe-token-dispatcher-type", "allgather", "alltoall"}},
                        "",
                        {},
                        {}};
  attune::Move overlap{
      "moe_ep_overlap", {{"--overlap-moe-expert-parallel-comm", std::nullopt, ""}}, "", {}, {}};
  attune::Move gated{"gated_prior", {{"--gated-prior", std::nullopt, ""}}, "", {}, {}};
  attune::Move distopt{
      "distributed_optimizer", {{"--use-distributed-optimizer", std::nullopt, ""}}, "", {}, {}};
  view.legal_moves = {distopt, alltoall};
  // Alone, nothing beats the noise band: the heuristic only explores.
  CHECK(Ask(view).meta.value("explore", false));
  // A lever known only by its catalog prior does not buy the enabler's job.
  view.legal_moves[1].unlocks = {gated};
  Proposal hunch = Ask(view);
  CHECK(hunch.meta.value("explore", false));
  CHECK_FALSE(hunch.meta.contains("unlocks"));
  // The EP overlap, valued by the all-to-all it would hide (half of each rank's routed rows cross
  // the network at EP 16 on two nodes), does.
  view.legal_moves[1].unlocks = {overlap};
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK_FALSE(p.meta.value("explore", false));
  CHECK(p.lever_id == "moe_token_dispatcher");
  CHECK(p.changes == alltoall.changes);
  CHECK(p.meta["unlocks"] == "moe_ep_overlap");
  REQUIRE(p.meta.contains("then"));
  CHECK(p.meta["then"]["changes"] == attune::ChangesToJson(overlap.changes));
  CHECK(p.meta["expected_gain"].get<double>() > view.noise_band);
  CHECK(p.rationale.find("makes moe_ep_overlap") != std::string::npos);
  // Measured a little slower: the stack now offers the overlap from that candidate.
  Record(&view, p, "within_noise", std::nullopt, 0.99);
  bool found = false;
  for (auto& parent : view.parents) {
    if (parent.id != "c001") continue;
    found = true;
    parent.legal_moves.push_back(overlap);
  }
  REQUIRE(found);
  Proposal q = Ask(view);
  REQUIRE_FALSE(q.done);
  CHECK(q.base_id == "c001");
  CHECK(q.lever_id == "moe_ep_overlap");
  CHECK(q.meta["follow_up_of"] == "c001");
  CHECK(q.rationale.find("made legal moe_ep_overlap") != std::string::npos);
}

TEST_CASE("the heuristic says done when one more job does not fit the budget",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  view.budget_left_gpu_hours = 0.5;
  Proposal p = Ask(view);
  CHECK(p.done);
  CHECK(p.rationale.find("budget") != std::string::npos);
}

TEST_CASE("after slower results the heuristic goes on until no untried recipe is left",
          "[agents][heuristic]") {
  CampaignView view = MakeView(24.0);
  std::set<std::string> proposed;
  int asked = 0;
  Proposal p;
  for (; asked < 200; ++asked) {
    p = Ask(view);
    if (p.done) break;
    // Never the same recipe twice, whichever candidate it starts from.
    const attune::Recipe* base = p.base_id.empty() ? &view.leader : nullptr;
    for (const auto& parent : view.parents) {
      if (parent.id == p.base_id) base = &parent.recipe;
    }
    REQUIRE(base != nullptr);
    auto recipe = attune::agents::Apply(*base, p.changes);
    REQUIRE(recipe);
    CHECK(proposed.insert(attune::RecipeId(*recipe)).second);
    CHECK(p.changes.size() == 1);
    Record(&view, p, "slower");
  }
  CHECK(asked < 200);
  CHECK(asked >= 5);
  CHECK(p.rationale.find("no untried legal move") != std::string::npos);
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
  view.legal_moves = {
      {"overlap_grad_reduce", {{"--overlap-grad-reduce", std::nullopt, ""}}, "", {}, {}},
      {"attention_backend", {{"--attention-backend", std::nullopt, "flash"}}, "", {}, {}}};
  for (auto& lever : view.levers) lever.expected_speed = 0.08;
  view.lessons = "lever: attention_backend effect: +20%\n";
  CHECK(Ask(view).lever_id == "attention_backend");
  view.lessons = "lever: overlap_grad_reduce effect: +20%\n";
  CHECK(Ask(view).lever_id == "overlap_grad_reduce");
}

TEST_CASE("a lesson learned on the reverse move does not make the forward move look fast",
          "[agents][heuristic]") {
  // A past campaign sped up 40% by turning full recompute off; that says adding recompute is
  // slower, not faster.
  CampaignView view = MakeView(std::nullopt);
  view.legal_moves = {
      {"overlap_grad_reduce", {{"--overlap-grad-reduce", std::nullopt, ""}}, "", {}, {}},
      {"attention_backend", {{"--attention-backend", std::nullopt, "flash"}}, "", {}, {}}};
  for (auto& lever : view.levers) lever.expected_speed = 0.08;
  view.lessons =
      "- lever: attention_backend effect: +40% outcome: new_leader change: "
      "`--attention-backend: flash -> (absent)` — a slow backend turned off\n";
  Proposal p = Ask(view);
  CHECK(p.lever_id == "overlap_grad_reduce");
  // The same effect on the forward move lifts it.
  view.lessons =
      "- lever: attention_backend effect: +40% outcome: new_leader change: "
      "`--attention-backend: (absent) -> flash` — y\n";
  CHECK(Ask(view).lever_id == "attention_backend");
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
