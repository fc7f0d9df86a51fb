// Copyright attune authors.
//
// The heuristic after out-of-memory failures and predicted overflows: memory savers, the changes
// they make room for (pairs.h), and their follow-ups.
#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
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

double MemoryPrior(const CampaignView& view, const std::string& lever_id) {
  for (const auto& l : view.levers) {
    if (l.id == lever_id) return l.expected_memory;
  }
  return 0;
}

// A view whose first proposal ran out of memory and whose next, the saver proposed for it, was
// measured with `outcome` at `speedup` × the leader; `first` receives the failed proposal.
CampaignView AfterSaver(const std::string& outcome, double speedup, Proposal* first) {
  CampaignView view = MakeView(40.0);
  *first = Ask(view);
  Record(&view, *first, "failed", FailureKind::kOom);
  Proposal saver = Ask(view);
  REQUIRE(saver.meta.contains("then"));
  Record(&view, saver, outcome, std::nullopt, speedup);
  return view;
}

// The id of the last candidate recorded.
std::string LastCandidate(const CampaignView& view) { return view.history.back().candidate_id; }

}  // namespace

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
  // One lever per candidate: the saver alone, with the change it makes room for to come after it.
  CHECK(p.changes.size() == 1);
  REQUIRE(p.meta.contains("then"));
  CHECK(p.meta["then"]["changes"] == attune::ChangesToJson(first.changes));
}

TEST_CASE(
    "a change that ran out of memory is paired with a saver only while the stack still allows it",
    "[agents][heuristic]") {
  CampaignView view = MakeView(40.0);
  Proposal first = Ask(view);
  Record(&view, first, "failed", FailureKind::kOom);
  // The stack no longer lists the change from the leader (the leader set a key that excludes it,
  // as one virtual-pipeline flag excludes the other): a saver for it is worth nothing.
  std::vector<attune::Move> without;
  for (const attune::Move& m : view.legal_moves) {
    if (!(m.lever_id == first.lever_id && m.changes == first.changes)) without.push_back(m);
  }
  REQUIRE(without.size() < view.legal_moves.size());
  view.legal_moves = without;
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  if (p.meta.contains("then"))
    CHECK(p.meta["then"]["changes"] != attune::ChangesToJson(first.changes));
  CHECK(p.meta.value("pair_source", "") != "c001");
}

TEST_CASE("a saver is measured alone, then the change that ran out of memory follows from it",
          "[agents][heuristic]") {
  CampaignView view = MakeView(40.0);
  Proposal first = Ask(view);
  Record(&view, first, "failed", FailureKind::kOom);
  Proposal saver = Ask(view);
  REQUIRE(saver.meta.contains("then"));
  // Even a slower saver is a parent: the hungry change is tried from it, attributable to one lever.
  // Valued against the leader (0.95 × (1 + 0.8 × its gain)), it waits for better moves first.
  Record(&view, saver, "slower", std::nullopt, 0.95);
  std::optional<Proposal> follow;
  for (int i = 0; i < 12 && !follow; ++i) {
    Proposal next = Ask(view);
    REQUIRE_FALSE(next.done);
    if (next.meta.contains("follow_up_of")) {
      follow = next;
    } else {
      Record(&view, next, "slower");
    }
  }
  REQUIRE(follow);
  CHECK(follow->base_id == "c002");
  CHECK(follow->meta["follow_up_of"] == "c002");
  CHECK(follow->changes == first.changes);
  CHECK(follow->rationale.find("made room for") != std::string::npos);
}

TEST_CASE("a saver within noise is followed at once by the change it made room for",
          "[agents][heuristic]") {
  Proposal first;
  CampaignView view = AfterSaver("within_noise", 1.0, &first);
  Proposal next = Ask(view);
  CHECK(next.base_id == "c002");
  CHECK(next.changes == first.changes);
  CHECK(next.changes.size() == 1);
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

TEST_CASE("a hungry move that is predicted not to fit comes after a memory saver",
          "[agents][heuristic]") {
  CampaignView view = MakeView(60.0);  // 75% used: dropping recompute (+54%) would not fit
  for (auto& lever : view.levers) {
    if (lever.id == "recompute") lever.expected_speed = -0.25;
  }
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK(p.changes.size() == 1);
  CHECK(MemoryPrior(view, p.lever_id) < 0);
  CHECK(p.meta["pair_source"] == "predicted");
  REQUIRE(p.meta.contains("then"));
  CHECK(p.meta["then"]["changes"].dump().find("--recompute-granularity") != std::string::npos);
}

TEST_CASE("after a follow-up runs out of memory the next saver for it must save more",
          "[agents][heuristic]") {
  CampaignView view = MakeView(60.0);
  for (auto& lever : view.levers) {
    if (lever.id == "recompute") lever.expected_speed = -0.25;
  }
  Proposal saver = Ask(view);
  REQUIRE(saver.meta.contains("then"));
  auto hungry = attune::ChangesFromJson(saver.meta["then"]["changes"]);
  REQUIRE(hungry.ok());
  Record(&view, saver, "within_noise", std::nullopt, 1.0);
  Proposal follow = Ask(view);
  REQUIRE(follow.meta.contains("follow_up_of"));
  CHECK(follow.changes == *hungry);
  Record(&view, follow, "failed", FailureKind::kOom);
  int follow_ups = 1;
  for (int i = 0; i < 12; ++i) {
    Proposal p = Ask(view);
    if (p.done) break;
    if (p.meta.contains("then") && p.meta["then"]["changes"] == saver.meta["then"]["changes"]) {
      CHECK(p.meta["saver_memory"].get<double>() < saver.meta["saver_memory"].get<double>() - 0.09);
    }
    if (p.meta.contains("follow_up_of") && p.changes == *hungry) ++follow_ups;
    // Savers run (within noise); everything else runs out of memory.
    bool runs = p.meta.contains("then");
    Record(&view, p, runs ? "within_noise" : "failed",
           runs ? std::nullopt : std::optional(FailureKind::kOom), 1.0);
  }
  // After two failed follow-ups the hungry change is not tried again.
  CHECK(follow_ups <= 2);
}

TEST_CASE(
    "a value that ran out of memory after its saver is paired again once a kept move moved its key",
    "[agents][heuristic]") {
  CampaignView view = MakeView(60.0);
  // The distributed optimizer was measured as the saver for micro-batch 1 -> 4, which then ran out
  // of memory from it.
  Proposal saver;
  saver.lever_id = "distributed_optimizer";
  saver.changes = {{"--use-distributed-optimizer", std::nullopt, std::string("")}};
  saver.meta = {{"levers", {"distributed_optimizer"}},
                {"saver_memory", -0.125},
                {"then",
                 {{"lever_id", "micro_batch_size"},
                  {"changes", {{{"key", "--micro-batch-size"}, {"from", "1"}, {"to", "4"}}}},
                  {"gain", 0.1}}}};
  Record(&view, saver, "within_noise", std::nullopt, 1.0);
  Proposal follow;
  follow.base_id = "c001";
  follow.lever_id = "micro_batch_size";
  follow.changes = {{"--micro-batch-size", std::string("1"), std::string("4")}};
  follow.meta = {{"follow_up_of", "c001"}, {"levers", {"micro_batch_size"}}};
  Record(&view, follow, "failed", FailureKind::kOom);
  // Kept moves have since taken the key to 2 and changed another setting: micro-batch 2 -> 4 from
  // there is another change, in another memory context, and the pair's recipe is untried.
  Proposal kept;
  kept.lever_id = "micro_batch_size";
  kept.changes = {{"--micro-batch-size", std::string("1"), std::string("2")}};
  Record(&view, kept, "new_leader", std::nullopt, 1.05);
  Proposal other;
  other.lever_id = "attention_backend";
  other.changes = {{"--attention-backend", std::nullopt, std::string("flash")}};
  Record(&view, other, "new_leader", std::nullopt, 1.05);
  std::erase_if(view.legal_moves, [](const attune::Move& m) {
    return m.lever_id != "micro_batch_size" && m.lever_id != "distributed_optimizer";
  });
  // Before: the ban of micro-batch 4 hid 2 -> 4 from the pairing for good (the follow-up's own
  // failure is a pair's, which only tightens later pairs of the same change).
  Proposal p = Ask(view);
  REQUIRE_FALSE(p.done);
  CHECK(p.lever_id == "distributed_optimizer");
  CHECK(p.changes.size() == 1);
  CHECK(p.meta.value("pair_source", "") == "out of memory before");
  REQUIRE(p.meta.contains("then"));
  auto then = attune::ChangesFromJson(p.meta["then"]["changes"]);
  REQUIRE(then.ok());
  REQUIRE(then->size() == 1);
  CHECK((*then)[0].key == "--micro-batch-size");
  CHECK((*then)[0].from == std::optional<std::string>("2"));
  CHECK((*then)[0].to == std::optional<std::string>("4"));
  CHECK(p.rationale.find("ran out of memory from an earlier recipe") != std::string::npos);
}

TEST_CASE("when exploring, a measured saver's follow-up pays no repeat cost for its lever",
          "[agents][heuristic]") {
  CampaignView view = MakeView(40.0);
  Proposal first = Ask(view);
  Record(&view, first, "failed", FailureKind::kOom);
  // Five measured candidates credited to the hungry lever (its other value, then four records
  // that only count as its measurements): its repeat cost would sink the follow-up below levers
  // never measured.
  std::optional<attune::Move> other;
  for (const attune::Move& m : view.legal_moves) {
    if (m.lever_id == first.lever_id && m.changes != first.changes) other = m;
  }
  REQUIRE(other);
  for (int i = 0; i < 5; ++i) {
    Proposal p;
    p.lever_id = other->lever_id;
    p.changes = other->changes;
    p.base_id = i == 0 ? "" : view.history.back().candidate_id;
    if (i > 0) p.changes = {{"--attention-backend", std::nullopt, "v" + std::to_string(i)}};
    Record(&view, p, "slower");
  }
  Proposal saver = Ask(view);
  REQUIRE(saver.meta.contains("then"));
  // The saver is slower, so the follow-up is worth less than the noise band against the leader,
  // and another candidate was measured since (the follow-up is no longer due at once).
  Record(&view, saver, "slower", std::nullopt, 0.97);
  const std::string saver_candidate = LastCandidate(view);
  Proposal between;
  between.lever_id = "overlap_grad_reduce";
  between.changes = {{"--overlap-grad-reduce", std::nullopt, ""}};
  Record(&view, between, "slower");
  HeuristicConfig config;
  config.min_gain = 0.5;  // nothing beats this: every proposal is an exploration
  Proposal follow = Ask(view, config);
  CHECK(follow.meta.value("explore", false));
  CHECK(follow.meta.contains("follow_up_of"));
  CHECK(follow.base_id == saver_candidate);
  CHECK(follow.changes == first.changes);
}

TEST_CASE("the change a saver made room for comes right after it, before better-valued moves",
          "[agents][heuristic]") {
  // Slightly slower: the follow-up is worth less against the leader than other untried moves,
  // but still something; it comes first all the same.
  Proposal first;
  CampaignView view = AfterSaver("slower", 0.97, &first);
  Proposal next = Ask(view);
  CHECK(next.base_id == LastCandidate(view));
  CHECK(next.changes == first.changes);
  CHECK(next.rationale.find("at once") != std::string::npos);
  // Much slower, the follow-up is worth nothing against the leader: it waits its turn.
  Proposal slow_first;
  CHECK_FALSE(Ask(AfterSaver("slower", 0.8, &slow_first)).meta.contains("follow_up_of"));
}

TEST_CASE("a saver that became the leader leaves the change after it to wait its turn",
          "[agents][heuristic]") {
  // Faster on its own, the saver is the leader: its follow-up is a move from the leader like any
  // other, ranked by its estimate, and is not pushed ahead of the others "at once".
  Proposal first;
  CampaignView view = AfterSaver("new_leader", 1.1, &first);
  REQUIRE(view.leader_id == LastCandidate(view));
  Proposal next = Ask(view);
  REQUIRE_FALSE(next.done);
  CHECK(next.rationale.find("at once") == std::string::npos);
  CHECK(next.base_id.empty());
  // The same saver measured within noise is still followed at once.
  Proposal again;
  CHECK(Ask(AfterSaver("within_noise", 1.0, &again)).rationale.find("at once") !=
        std::string::npos);
}
