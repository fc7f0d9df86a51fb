// Levers behind prerequisites on the real Megatron stack. The engine's FindUnlocks: a move that
// meets a lever's prerequisite lists that lever's moves (Move::unlocks); a move that does not, does
// not. And the other way: EP 1 drops the EP overlap it leaves nothing to do for (companion
// ep_overlap_follows_ep) instead of being refused.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "steps/steps.h"
#include "test_support.h"

namespace attune::megatron {
namespace {

using testing::H100;
using testing::MoeRecipe;
using testing::Stack;
using testing::With;

bool Offers(const std::vector<Move>& moves, const std::string& lever) {
  for (const Move& m : moves) {
    if (m.lever_id == lever) return true;
  }
  return false;
}

const Move* Find(const std::vector<Move>& moves, const std::string& key, const std::string& to) {
  for (const Move& m : moves) {
    for (const Change& c : m.changes) {
      if (c.key == key && c.to == to) return &m;
    }
  }
  return nullptr;
}

TEST_CASE("the alltoall dispatcher unlocks the expert-parallel overlap", "[megatron][unlocks]") {
  // EP 4 under the allgather dispatcher (Megatron's default): the overlap is not legal.
  const Recipe r = With(With(MoeRecipe(), "--expert-model-parallel-size", "4"),
                        "--moe-token-dispatcher-type", "allgather");
  std::vector<Move> moves = Stack().LegalMoves(r, H100());
  REQUIRE_FALSE(Offers(moves, "moe_ep_overlap"));
  FindUnlocks(Stack(), r, H100(), &moves);
  const Move* alltoall = Find(moves, "--moe-token-dispatcher-type", "alltoall");
  REQUIRE(alltoall != nullptr);
  REQUIRE(Offers(alltoall->unlocks, "moe_ep_overlap"));
  for (const Move& u : alltoall->unlocks) {
    CHECK(u.unlocks.empty());  // never nested
    for (const Change& c : u.changes) CHECK(c.key != "--moe-token-dispatcher-type");
  }
  // A move that meets no prerequisite of the overlap does not list it.
  const Move* grouped = Find(moves, "--moe-grouped-gemm", "");
  REQUIRE(grouped != nullptr);
  CHECK_FALSE(Offers(grouped->unlocks, "moe_ep_overlap"));
  // No move lists a lever the stack already offers from the recipe.
  for (const Move& m : moves) {
    for (const Move& u : m.unlocks) {
      INFO(m.lever_id << " unlocks " << u.lever_id);
      CHECK_FALSE(Offers(moves, u.lever_id));
    }
  }
}

TEST_CASE("a lever behind two prerequisites is unlocked only by the move that meets the last",
          "[megatron][unlocks]") {
  // PP 2 without a virtual pipeline and the allgather dispatcher: the overlap needs both.
  const Recipe r = With(With(With(MoeRecipe(), "--expert-model-parallel-size", "4"),
                             "--pipeline-model-parallel-size", "2"),
                        "--moe-token-dispatcher-type", "allgather");
  std::vector<Move> moves = Stack().LegalMoves(r, H100());
  FindUnlocks(Stack(), r, H100(), &moves);
  const Move* alltoall = Find(moves, "--moe-token-dispatcher-type", "alltoall");
  REQUIRE(alltoall != nullptr);
  CHECK_FALSE(Offers(alltoall->unlocks, "moe_ep_overlap"));
  // With the alltoall dispatcher, the virtual pipeline is the last prerequisite.
  const Recipe a2a = With(r, "--moe-token-dispatcher-type", "alltoall");
  std::vector<Move> from_a2a = Stack().LegalMoves(a2a, H100());
  REQUIRE_FALSE(Offers(from_a2a, "moe_ep_overlap"));
  FindUnlocks(Stack(), a2a, H100(), &from_a2a);
  bool vpp_unlocks = false;
  for (const Move& m : from_a2a) {
    if (m.lever_id == "virtual_pipeline_stages" || m.lever_id == "virtual_pipeline_layers") {
      vpp_unlocks = vpp_unlocks || Offers(m.unlocks, "moe_ep_overlap");
    }
  }
  CHECK(vpp_unlocks);
}

bool Removes(const Move& m, const std::string& key) {
  for (const Change& c : m.changes) {
    if (c.key == key && !c.to) return true;
  }
  return false;
}

TEST_CASE("EP 1 takes the EP overlap with it; other moves that would break it stay refused",
          "[megatron][unlocks]") {
  const std::string overlap = "--overlap-moe-expert-parallel-comm";
  const Recipe r = With(With(With(MoeRecipe(), "--expert-model-parallel-size", "2"),
                             "--moe-token-dispatcher-type", "alltoall"),
                        overlap, "");
  REQUIRE(Stack().Validate(r, H100()).ok());
  std::vector<Move> moves = Stack().LegalMoves(r, H100());
  // EP 1 has no dispatch to overlap: the move drops the flag (Megatron refuses it there).
  const Move* ep1 = Find(moves, "--expert-model-parallel-size", "1");
  REQUIRE(ep1 != nullptr);
  CHECK(ep1->lever_id == "expert_parallel");
  CHECK(Removes(*ep1, overlap));
  CHECK(ep1->changes.size() == 2);
  // A larger EP keeps it.
  const Move* ep4 = Find(moves, "--expert-model-parallel-size", "4");
  REQUIRE(ep4 != nullptr);
  CHECK_FALSE(Removes(*ep4, overlap));
  // The allgather dispatcher and full recompute would lose the overlap with the dispatch still
  // there: not offered while it is set.
  CHECK(Find(moves, "--moe-token-dispatcher-type", "allgather") == nullptr);
  CHECK(Find(moves, "--recompute-granularity", "full") == nullptr);
  // Every move the stack lists is a recipe it accepts.
  for (const Move& m : moves) {
    Recipe after = r;
    REQUIRE(ApplyChanges(&after, m.changes).ok());
    INFO(m.lever_id);
    CHECK(Stack().Validate(after, H100()).ok());
  }
}

}  // namespace
}  // namespace attune::megatron
