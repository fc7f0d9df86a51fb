// Copyright attune authors.
//
// Re-opening a lever that lost under a setting a kept move introduced (reopen.h): the MoE case
// where EP 4 -> 8 won, the alltoall dispatcher then lost at EP 8, and the dispatcher at EP 4 was
// never measured.
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "heuristic_agent.h"
#include "view_fixtures.h"

using attune::CampaignView;
using attune::Move;
using attune::Proposal;
using attune::Recipe;
using attune::agents::HeuristicAgent;
using attune::testing::FakeMoves;
using attune::testing::MakeView;
using attune::testing::Record;

namespace {

constexpr const char* kEp = "--expert-model-parallel-size";
constexpr const char* kDispatcher = "--moe-token-dispatcher-type";

void AddMove(std::vector<Move>* moves, const Recipe& r, const std::string& lever,
             const std::string& key, const std::optional<std::string>& to) {
  std::optional<std::string> from = attune::GetValue(r, key);
  if (from != to) moves->push_back({lever, {{key, from, to}}, "", {}, {}});
}

// The fixture's moves plus expert parallelism (2..16), overlapped grad reduce and the token
// dispatcher.
std::vector<Move> MoeMoves(const Recipe& r) {
  std::vector<Move> moves = FakeMoves(r);
  for (const char* ep : {"2", "4", "8", "16"}) AddMove(&moves, r, "expert_parallel", kEp, ep);
  AddMove(&moves, r, "overlap_grad_reduce", "--overlap-grad-reduce", "");
  AddMove(&moves, r, "overlap_grad_reduce", "--overlap-grad-reduce", std::nullopt);
  for (const char* d : {"allgather", "alltoall"}) {
    AddMove(&moves, r, "token_dispatcher", kDispatcher, d);
  }
  return moves;
}

// Record() regenerates moves with the fixture's generator; these views use MoeMoves.
void Regenerate(CampaignView* view) {
  view->legal_moves = MoeMoves(view->leader);
  for (auto& parent : view->parents) parent.legal_moves = MoeMoves(parent.recipe);
}

// Records `p` as the engine would, with the candidate's speedup over the baseline.
void Measure(CampaignView* view, const Proposal& p, const std::string& outcome, double vs_leader) {
  const double leader = view->leader_measurement->tokens_per_s_per_gpu;
  Record(view, p, outcome, std::nullopt, vs_leader);
  view->history.back().speedup_vs_baseline =
      leader * vs_leader / view->baseline_measurement->tokens_per_s_per_gpu;
  Regenerate(view);
}

Proposal Step(const std::string& lever, const std::string& key,
              const std::optional<std::string>& from, const std::string& to) {
  Proposal p;
  p.lever_id = lever;
  p.changes = {{key, from, to}};
  return p;
}

// EP 4 with the allgather dispatcher; expert parallelism and the dispatcher both address
// communication, so they interact. Without a peak, no memory reading favours any lever.
CampaignView MoeView(std::optional<double> peak_gib = std::nullopt) {
  CampaignView view = MakeView(peak_gib);
  view.baseline.args.push_back({kEp, {"4"}});
  view.baseline.args.push_back({kDispatcher, {"allgather"}});
  view.leader = view.baseline;
  view.levers.push_back({"expert_parallel",
                         "",
                         {kEp},
                         {"memory_pressure", "oom", "communication"},
                         0.05,
                         -0.3,
                         true});
  view.levers.push_back(
      {"token_dispatcher", "", {kDispatcher}, {"communication"}, 0.08, -0.02, false});
  Regenerate(&view);
  return view;
}

Proposal Ask(const CampaignView& view) {
  HeuristicAgent agent({});
  auto result = agent.Propose(view);
  REQUIRE(result.ok());
  return *result;
}

}  // namespace

TEST_CASE(
    "a lever that lost under a setting a kept move introduced is re-tried under the "
    "setting's earlier value",
    "[agents][heuristic][reopen]") {
  CampaignView view = MoeView();
  Measure(&view, Step("expert_parallel", kEp, "4", "8"), "new_leader", 1.08);
  Measure(&view, Step("attention_backend", "--attention-backend", std::nullopt, "flash"),
          "new_leader", 1.1);
  Measure(&view, Step("token_dispatcher", kDispatcher, "allgather", "alltoall"), "slower", 0.48);
  // First the setting goes back (EP 8 -> 4), measured alone, with the lost change to follow.
  Proposal back = Ask(view);
  INFO(back.rationale);
  REQUIRE_FALSE(back.done);
  CHECK(back.base_id.empty());
  CHECK(back.lever_id == "expert_parallel");
  REQUIRE(back.changes.size() == 1);
  CHECK(back.changes[0].to == "4");
  CHECK(back.meta["reopens"] == "c003");
  CHECK(back.meta["then"]["lever_id"] == "token_dispatcher");
  CHECK(back.rationale.find("lost") != std::string::npos);
  // Then, even though EP 4 alone was slower than the leader, the dispatcher from there.
  Measure(&view, back, "slower", 0.95);
  Proposal retry = Ask(view);
  INFO(retry.rationale);
  REQUIRE_FALSE(retry.done);
  CHECK(retry.base_id == "c004");
  CHECK(retry.lever_id == "token_dispatcher");
  REQUIRE(retry.changes.size() == 1);
  CHECK(retry.changes[0].to == "alltoall");
  CHECK(retry.meta["follow_up_of"] == "c004");
}

TEST_CASE("a lever that lost under the baseline's own setting is not re-opened",
          "[agents][heuristic][reopen]") {
  CampaignView view = MoeView();
  // The dispatcher lost at EP 4, a value no kept move introduced: nothing to go back to.
  Measure(&view, Step("token_dispatcher", kDispatcher, "allgather", "alltoall"), "slower", 0.48);
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK_FALSE(p.meta.contains("reopens"));
}

TEST_CASE("a loss that undid a kept move is not re-opened", "[agents][heuristic][reopen]") {
  CampaignView view = MoeView();
  Measure(&view, Step("expert_parallel", kEp, "4", "8"), "new_leader", 1.08);
  Measure(&view, Step("token_dispatcher", kDispatcher, "allgather", "alltoall"), "new_leader", 1.5);
  Measure(&view, Step("attention_backend", "--attention-backend", std::nullopt, "flash"),
          "new_leader", 1.1);
  // Going back to allgather loses: that says alltoall still wins, whatever EP is.
  Measure(&view, Step("token_dispatcher", kDispatcher, "alltoall", "allgather"), "slower", 0.5);
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK_FALSE(p.meta.contains("reopens"));
}

TEST_CASE("each loss is re-opened once", "[agents][heuristic][reopen]") {
  CampaignView view = MoeView();
  // Two kept moves of levers that interact with the dispatcher: EP and overlapped grad reduce.
  Measure(&view, Step("expert_parallel", kEp, "4", "8"), "new_leader", 1.08);
  Measure(&view, Step("overlap_grad_reduce", "--overlap-grad-reduce", std::nullopt, ""),
          "new_leader", 1.1);
  Measure(&view, Step("attention_backend", "--attention-backend", std::nullopt, "flash"),
          "new_leader", 1.1);
  Measure(&view, Step("token_dispatcher", kDispatcher, "allgather", "alltoall"), "slower", 0.48);
  Proposal back = Ask(view);
  REQUIRE(back.meta.contains("reopens"));
  Measure(&view, back, "slower", 0.95);
  Proposal retry = Ask(view);
  REQUIRE(retry.meta.contains("follow_up_of"));
  Measure(&view, retry, "slower", 0.9);
  // The other setting could be taken back too, but this loss was re-opened already.
  Proposal next = Ask(view);
  INFO(next.rationale);
  CHECK_FALSE(next.meta.contains("reopens"));
}
