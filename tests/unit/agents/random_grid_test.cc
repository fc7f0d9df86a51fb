// Copyright attune authors.
#include <catch2/catch.hpp>

#include <set>

#include "grid_agent.h"
#include "random_agent.h"
#include "view_fixtures.h"

using attune::CampaignView;
using attune::Proposal;
using attune::agents::GridAgent;
using attune::agents::ParseGridConfig;
using attune::agents::RandomAgent;
using attune::testing::MakeView;
using attune::testing::Record;

namespace {

Proposal AskRandom(const CampaignView& view) {
  RandomAgent agent;
  auto p = agent.Propose(view);
  REQUIRE(p.ok());
  return *p;
}

GridAgent MakeGrid(const nlohmann::json& with) {
  auto space = ParseGridConfig(with);
  REQUIRE(space.ok());
  return GridAgent(*space);
}

}  // namespace

TEST_CASE("random proposals are reproducible for a seed", "[agents][random]") {
  CampaignView view = MakeView(30.0);
  Proposal a = AskRandom(view);
  Proposal b = AskRandom(view);
  CHECK(a.changes == b.changes);
  std::set<std::string> picks;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    view.seed = seed;
    picks.insert(attune::DescribeChanges(AskRandom(view).changes));
  }
  CHECK(picks.size() > 3);  // different seeds spread over the moves
}

TEST_CASE("random never repeats a move and is done when all are tried", "[agents][random]") {
  CampaignView view = MakeView(30.0);
  size_t moves = view.legal_moves.size();
  std::set<std::string> seen;
  for (size_t i = 0; i < moves + 2; ++i) {
    Proposal p = AskRandom(view);
    if (p.done) break;
    CHECK(seen.insert(attune::DescribeChanges(p.changes)).second);
    Record(&view, p, i % 2 ? "slower" : "within_noise");
  }
  CHECK(seen.size() == moves);
  CHECK(AskRandom(view).done);
}

TEST_CASE("grid walks its space in order and then says done", "[agents][grid]") {
  GridAgent grid = MakeGrid(
      {{"space", {{"--micro-batch-size", {"1", "2", "4"}},
                  {"--recompute-granularity", {nullptr, "selective"}}}}});
  CampaignView view = MakeView(30.0);
  std::vector<long long> points;
  for (int i = 0; i < 10; ++i) {
    auto p = grid.Propose(view);
    REQUIRE(p.ok());
    if (p->done) break;
    points.push_back(p->meta["grid_point"].get<long long>());
    Record(&view, *p, "slower");
  }
  // Keys sort as --micro-batch-size, --recompute-granularity (last fastest); the leader is point 1
  // (mbs 1, selective), so it is skipped.
  CHECK(points == std::vector<long long>{0, 2, 3, 4, 5});
  auto last = grid.Propose(view);
  REQUIRE(last.ok());
  CHECK(last->done);
}

TEST_CASE("grid points are diffs from the current leader", "[agents][grid]") {
  GridAgent grid = MakeGrid({{"space", {{"--micro-batch-size", {2, 4}}}}});
  CampaignView view = MakeView(30.0);
  auto first = grid.Propose(view);
  REQUIRE(first.ok());
  REQUIRE(first->changes.size() == 1);
  CHECK(first->changes[0].from == std::optional<std::string>("1"));
  CHECK(first->lever_id == "micro_batch_size");
  Record(&view, *first, "new_leader");
  auto second = grid.Propose(view);
  REQUIRE(second.ok());
  REQUIRE(second->changes.size() == 1);
  CHECK(second->changes[0].from == std::optional<std::string>("2"));
  CHECK(second->changes[0].to == std::optional<std::string>("4"));
}

TEST_CASE("grid config errors name the key", "[agents][grid]") {
  auto bad = ParseGridConfig({{"space", {{"--micro-batch-size", "2"}}}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("with.space.--micro-batch-size") != std::string::npos);
  auto missing = ParseGridConfig(nlohmann::json::object());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("with.space") != std::string::npos);
}
