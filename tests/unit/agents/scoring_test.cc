// Copyright attune authors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "history.h"
#include "reading.h"
#include "scoring.h"
#include "view_fixtures.h"

using attune::Change;
using attune::Move;
using attune::agents::EstimateMove;
using attune::agents::MakeScoringContext;
using attune::agents::ShapeOf;

namespace {

bool Has(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// A failure of `kind` whose triage rule is "x" (the other fields keep their defaults).
attune::Failure Failed(attune::FailureKind kind) {
  attune::Failure f;
  f.kind = kind;
  f.signature = "x";
  return f;
}

// c001: micro-batch 1 -> 2 from the baseline, ranked `outcome` at `speedup` over the baseline,
// measured as the baseline was.
attune::CandidateRecord MicroBatchDoubling(const attune::CampaignView& view, attune::Outcome outcome,
                                           std::optional<double> speedup) {
  attune::CandidateRecord r;
  r.candidate_id = "c001";
  r.base_id = "baseline";
  r.lever_id = "micro_batch_size";
  r.changes = {{"--micro-batch-size", "1", "2"}};
  r.outcome = outcome;
  r.measurement = view.baseline_measurement;
  r.speedup_vs_baseline = speedup;
  return r;
}

// c001: `changes` of `lever_id` from the baseline, failed with `kind`.
attune::CandidateRecord FailedRecord(const std::string& lever_id, std::vector<Change> changes,
                                     attune::FailureKind kind) {
  attune::CandidateRecord r;
  r.candidate_id = "c001";
  r.base_id = "baseline";
  r.lever_id = lever_id;
  r.changes = std::move(changes);
  r.outcome = attune::Outcome::kFailed;
  r.failure = Failed(kind);
  return r;
}

}  // namespace

TEST_CASE("a move's direction follows switches, numbers and the catalog's orders",
          "[agents][scoring]") {
  CHECK(ShapeOf({{"--overlap-grad-reduce", std::nullopt, ""}}, nullptr).direction == 1);
  CHECK(ShapeOf({{"--overlap-grad-reduce", "", std::nullopt}}, nullptr).direction == -1);
  auto up = ShapeOf({{"--micro-batch-size", "1", "4"}}, nullptr);
  CHECK(up.direction == 1);
  CHECK(up.steps == Approx(2));
  attune::Lever recompute;
  recompute.keys = {"--recompute-granularity", "--recompute-method"};
  recompute.order = {{"--recompute-granularity", {"", "selective", "full"}}};
  CHECK(ShapeOf({{"--recompute-granularity", "full", "selective"}}, &recompute).direction == -1);
  CHECK(ShapeOf({{"--recompute-granularity", std::nullopt, "selective"}}, &recompute).direction ==
        1);
  // Without the catalog's order two "on" values are a categorical move of unknown direction.
  CHECK(ShapeOf({{"--recompute-granularity", "full", "selective"}}, nullptr).strength < 1);
  CHECK(ShapeOf({{"--attention-backend", "flash", "fused"}}, nullptr).strength < 1);
}

TEST_CASE("a move from a value the recipe's config holds reads from that value",
          "[agents][scoring]") {
  // AutoModel's activation checkpointing: "true" (full) in the config file, no override. The
  // stack tells the meaning of the absent override in Move::defaults.
  attune::Lever ac;
  ac.keys = {"--distributed.activation_checkpointing"};
  ac.order = {{"--distributed.activation_checkpointing", {"false", "selective", "true"}}};
  const std::map<std::string, std::string> config_full = {
      {"--distributed.activation_checkpointing", "true"}};
  auto to_selective = ShapeOf({{"--distributed.activation_checkpointing", std::nullopt,
                                "selective"}},
                              &ac, &config_full);
  CHECK(to_selective.direction == -1);
  CHECK(to_selective.strength == 1);
  CHECK(ShapeOf({{"--distributed.activation_checkpointing", "selective", "true"}}, &ac).direction ==
        1);
  CHECK(ShapeOf({{"--distributed.activation_checkpointing", "selective", "false"}}, &ac)
            .direction == -1);
}

TEST_CASE("a move addresses the memory diagnosis its own memory sign implies",
          "[agents][scoring]") {
  attune::CampaignView view = attune::testing::MakeView(30.0);
  // A catalog that lists both memory directions for micro-batch size, as real catalogs do.
  for (auto& lever : view.levers) {
    if (lever.id == "micro_batch_size") lever.addresses = {"memory_headroom", "memory_pressure"};
  }
  auto ctx = MakeScoringContext(view);
  Move bigger{"micro_batch_size", {{"--micro-batch-size", "1", "2"}}, "", {}, {}};
  auto e = EstimateMove(ctx, bigger, 0);
  CHECK(Has(e.addresses, "memory_headroom"));
  CHECK_FALSE(Has(e.addresses, "memory_pressure"));
  CHECK(e.memory > 0);
  Move less_recompute{
      "recompute", {{"--recompute-granularity", "selective", std::nullopt}}, "", {}, {}};
  auto r = EstimateMove(ctx, less_recompute, 1);
  CHECK(r.direction == -1);
  CHECK(r.speed > 0);
  CHECK(Has(r.addresses, "memory_headroom"));
}

TEST_CASE("a measured slowdown of a lever lowers its next estimate", "[agents][scoring]") {
  attune::CampaignView view = attune::testing::MakeView(30.0);
  Move step{"micro_batch_size", {{"--micro-batch-size", "1", "4"}}, "", {}, {}};
  double before = EstimateMove(MakeScoringContext(view), step, 0).speed;
  view.history.push_back(MicroBatchDoubling(view, attune::Outcome::kSlower, 0.95));
  double after = EstimateMove(MakeScoringContext(view), step, 0).speed;
  CHECK(after < before);
}

TEST_CASE("a measured micro-batch doubling predicts the next one by the fixed cost it spreads",
          "[agents][scoring]") {
  // Micro-batch 1 -> 2 measured +59%: a step costs a + c·b with k = a/c = 2·0.59/(2 − 1.59) =
  // 2.878, so 2 -> 4 is worth 2·(k + 2)/(k + 4) − 1 = +41.8% and 2 -> 8 (k + 2)·4/(k + 8) − 1 =
  // +79.3%: diminishing, by what the measurement says, and needing no diagnosis (relevance 1).
  attune::CampaignView view = attune::testing::MakeView(30.0);
  view.history.push_back(MicroBatchDoubling(view, attune::Outcome::kNewLeader, 1.59));
  Move next{"micro_batch_size", {{"--micro-batch-size", "2", "4"}}, "", {}, {}};
  auto e = EstimateMove(MakeScoringContext(view), next, 0);
  const double k = 2 * 0.59 / (2 - 1.59);
  CHECK(e.speed == Approx(2 * (k + 2) / (k + 4) - 1));
  CHECK(e.speed == Approx(0.418).margin(0.001));
  CHECK(e.speed_measured);
  CHECK(e.relevance == 1.0);
  Move far{"micro_batch_size", {{"--micro-batch-size", "2", "8"}}, "", {}, {}};
  CHECK(EstimateMove(MakeScoringContext(view), far, 0).speed == Approx(4 * (k + 2) / (k + 8) - 1));
  // A doubling that measured no gain leaves the prior, blended with the loss, to decide.
  view.history.back().speedup_vs_baseline = 0.97;
  view.history.back().outcome = attune::Outcome::kWithinNoise;
  auto flat = EstimateMove(MakeScoringContext(view), next, 0);
  CHECK_FALSE(flat.speed_measured);
  CHECK(flat.speed < 0.08);
  // A lever that does not spend memory against launch overhead is never extrapolated so.
  for (auto& lever : view.levers) {
    if (lever.id == "micro_batch_size") lever.addresses = {"memory_headroom"};
  }
  view.history.back().speedup_vs_baseline = 1.59;
  CHECK_FALSE(EstimateMove(MakeScoringContext(view), next, 0).speed_measured);
}

TEST_CASE("a move is not expected to beat a measured move of its lever that went as far or further",
          "[agents][scoring]") {
  // The baseline recomputes everything; full -> none was measured at +20% from it. Full ->
  // selective goes half as far in the same direction: whatever its prior, relevance and history
  // say, it is not expected to gain more than that.
  attune::CampaignView view = attune::testing::MakeView(20.0);
  for (auto& lever : view.levers) {
    if (lever.id == "recompute") lever.expected_speed = -0.6;  // a prior that promises +60% back
  }
  Move selective{"recompute", {{"--recompute-granularity", "full", "selective"}}, "", {}, {}};
  auto before = EstimateMove(MakeScoringContext(view), selective, 0);
  REQUIRE(before.gain > 0.2);
  CHECK(before.capped_by.empty());
  attune::CandidateRecord r;
  r.candidate_id = "c001";
  r.base_id = "baseline";
  r.lever_id = "recompute";
  r.changes = {{"--recompute-granularity", "full", std::nullopt}};
  r.outcome = attune::Outcome::kNewLeader;
  r.measurement = view.baseline_measurement;
  r.speedup_vs_baseline = 1.2;
  view.history.push_back(r);
  auto after = EstimateMove(MakeScoringContext(view), selective, 0);
  CHECK(after.gain == Approx(0.2));
  CHECK(after.capped_by == "c001");
  // A move in the other direction, or one from another recipe, is not bounded by it.
  Move more{"recompute", {{"--recompute-granularity", "selective", "full"}}, "", {}, {}};
  CHECK(EstimateMove(MakeScoringContext(view), more, 1).capped_by.empty());
  view.history.back().base_id = "c000";
  CHECK(EstimateMove(MakeScoringContext(view), selective, 0).capped_by.empty());
  // A sibling whose first run failed for the infrastructure and ran again still bounds it; a
  // failed sibling bounds nothing.
  view.history.back().base_id = "baseline";
  view.history.back().failure = Failed(attune::FailureKind::kNcclTimeout);
  CHECK(EstimateMove(MakeScoringContext(view), selective, 0).capped_by == "c001");
  view.history.back().outcome = attune::Outcome::kFailed;
  CHECK(EstimateMove(MakeScoringContext(view), selective, 0).capped_by.empty());
}

TEST_CASE("a measured memory change replaces part of the lever's memory prior",
          "[agents][scoring]") {
  attune::CampaignView view = attune::testing::MakeView(30.0);
  // Micro-batch 1 -> 2 used 10% more memory where the catalog expects 35%: the next estimate
  // averages the two, and the reverse move reads the same measurement inverted.
  attune::CandidateRecord r = MicroBatchDoubling(view, attune::Outcome::kWithinNoise, std::nullopt);
  r.measurement->peak_memory_gib = 33.0;
  view.history.push_back(r);
  auto ctx = MakeScoringContext(view);
  Move up{"micro_batch_size", {{"--micro-batch-size", "2", "4"}}, "", {}, {}};
  Move down{"micro_batch_size", {{"--micro-batch-size", "2", "1"}}, "", {}, {}};
  const double forward = (0.35 + 0.10) / 2;
  CHECK(EstimateMove(ctx, up, 0).memory == Approx(forward));
  CHECK(EstimateMove(ctx, down, 1).memory == Approx(1 / (1 + forward) - 1));
}

TEST_CASE("a failed move bans its lever's change but not the companion that came with it",
          "[agents][history]") {
  attune::CampaignView view = attune::testing::MakeView(30.0);
  view.levers.push_back({"tensor_parallel", "", {"--tensor-model-parallel-size"},
                         {"memory_pressure"}, -0.05, -0.35, true});
  attune::CandidateRecord r = FailedRecord("tensor_parallel",
                                           {{"--tensor-model-parallel-size", std::nullopt, "2"},
                                            {"env:CUDA_DEVICE_MAX_CONNECTIONS", std::nullopt, "1"}},
                                           attune::FailureKind::kConfigError);
  view.history.push_back(r);
  auto tried = attune::agents::CollectTried(view);
  CHECK(tried.banned.count({"--tensor-model-parallel-size", "2"}) == 1);
  CHECK(tried.banned.count({"env:CUDA_DEVICE_MAX_CONNECTIONS", "1"}) == 0);
  CHECK(attune::agents::AlreadyTried(
      tried, view.leader, {{"--tensor-model-parallel-size", std::nullopt, "2"}}));
}

TEST_CASE("a change that ran out of memory is banned only until a base has freed memory",
          "[agents][history]") {
  attune::CampaignView view = attune::testing::MakeView(30.0);  // the baseline peaks at 30 GiB
  attune::CandidateRecord r = FailedRecord("micro_batch_size", {{"--micro-batch-size", "1", "4"}},
                                           attune::FailureKind::kOom);
  view.history.push_back(r);
  auto tried = attune::agents::CollectTried(view);
  CHECK(tried.banned.count({"--micro-batch-size", "4"}) == 0);
  REQUIRE(tried.oom_at_peak_gib.count({"--micro-batch-size", "4"}) == 1);
  CHECK(tried.oom_at_peak_gib.at({"--micro-batch-size", "4"}) == Approx(30.0));
  const std::vector<attune::Change> again = {{"--micro-batch-size", "2", "4"}};
  // Without the base's peak, or from a base that uses about as much memory: still banned.
  CHECK(attune::agents::TouchesBanned(tried, again));
  CHECK(attune::agents::TouchesBanned(tried, again, 28.0));
  // From a base whose peak is at least 10% lower (a saver freed memory since): open again.
  CHECK_FALSE(attune::agents::TouchesBanned(tried, again, 26.0));

  // The same change also failed for the recipe in another way: banned whatever the memory.
  attune::CandidateRecord bad = r;
  bad.candidate_id = "c002";
  bad.failure = Failed(attune::FailureKind::kConfigError);
  view.history.push_back(bad);
  tried = attune::agents::CollectTried(view);
  CHECK(tried.banned.count({"--micro-batch-size", "4"}) == 1);
  CHECK(attune::agents::TouchesBanned(tried, again, 10.0));
}

TEST_CASE("an infrastructure failure bans no change but its recipe counts as tried",
          "[agents][history]") {
  attune::CampaignView view = attune::testing::MakeView(30.0);
  attune::CandidateRecord r = FailedRecord("micro_batch_size", {{"--micro-batch-size", "1", "2"}},
                                           attune::FailureKind::kNodeFailure);
  r.failure->infrastructure = true;
  view.history.push_back(r);
  auto tried = attune::agents::CollectTried(view);
  CHECK(tried.banned.empty());
  CHECK(attune::agents::AlreadyTried(tried, view.leader, r.changes));
}

TEST_CASE("a refused pair of levers bans neither change alone", "[agents][history]") {
  attune::CampaignView view = attune::testing::MakeView(30.0);
  attune::CandidateRecord r;
  r.candidate_id = "c001";
  r.base_id = "baseline";
  r.lever_id = "distributed_optimizer";
  r.changes = {{"--use-distributed-optimizer", std::nullopt, ""},
               {"--micro-batch-size", "1", "4"}};
  r.outcome = attune::Outcome::kRefused;
  r.agent_meta = {{"levers", {"distributed_optimizer", "micro_batch_size"}}};
  view.history.push_back(r);
  auto tried = attune::agents::CollectTried(view);
  CHECK(tried.banned.empty());
  CHECK(attune::agents::AlreadyTried(tried, view.leader, r.changes));
}

TEST_CASE("a profile's finding raises the estimate of the levers that address it",
          "[agents][scoring][profile]") {
  // What the profile step found reaches the agent as the leader's diagnosis (campaign_view.cc,
  // evidence "profile: ..."); a lever that addresses it is expected to gain more.
  attune::CampaignView view = attune::testing::MakeView(40.0);
  Move overlap{"overlap_grad_reduce", {{"--overlap-grad-reduce", std::nullopt, ""}}, "", {}, {}};
  Move attention{"attention_backend", {{"--attention-backend", std::nullopt, "flash"}}, "", {}, {}};
  const auto overlap_before = EstimateMove(MakeScoringContext(view), overlap, 0);
  const auto attention_before = EstimateMove(MakeScoringContext(view), attention, 1);
  view.diagnosis.push_back({"communication", 0.45, "profile: exposed communication 45% of the window"});
  const auto e = EstimateMove(MakeScoringContext(view), overlap, 0);
  CHECK(e.matched == "communication");
  CHECK(e.relevance > overlap_before.relevance);
  CHECK(e.gain > overlap_before.gain);
  // A lever that does not address communication is not raised by it.
  CHECK(EstimateMove(MakeScoringContext(view), attention, 1).gain == Approx(attention_before.gain));
}

TEST_CASE("a change from an absent key reads its direction from what the stack says absent means", "[heuristic]") {
  attune::Lever etp{"expert_tensor_parallel", "", {"--expert-tensor-parallel-size"}, {"communication"}, 0.03, -0.1, true};
  std::map<std::string, std::string> absent_is_tp2{{"--expert-tensor-parallel-size", "2"}};
  auto down = ShapeOf({{"--expert-tensor-parallel-size", std::nullopt, "1"}}, &etp, &absent_is_tp2);
  auto up = ShapeOf({{"--expert-tensor-parallel-size", std::nullopt, "8"}}, &etp, &absent_is_tp2);
  CHECK(down.direction == -1);
  CHECK(up.direction == 1);
  CHECK(up.steps == Approx(2));
  // Not knowing the default, both read as "set where it was absent": the same direction, which
  // made one slower measurement of ETP 1 count against ETP 8 (the mixtral scenario's blind spot).
  CHECK(ShapeOf({{"--expert-tensor-parallel-size", std::nullopt, "1"}}, &etp).direction ==
        ShapeOf({{"--expert-tensor-parallel-size", std::nullopt, "8"}}, &etp).direction);
}

TEST_CASE(
    "an out-of-memory failure from an absent numeric key sets the floor unless absent means more",
    "[agents][scoring]") {
  attune::CampaignView view = attune::testing::MakeView(40.0);
  // The config's own size, overridden.
  attune::CandidateRecord r = FailedRecord(
      "micro_batch_size", {{"--micro-batch-size", std::nullopt, "4"}}, attune::FailureKind::kOom);
  view.history.push_back(r);
  // Absent meaning 8, 8 -> 4 was a move down: no floor from it.
  for (Move& m : view.legal_moves) m.defaults.erase("--micro-batch-size");
  view.legal_moves.front().defaults["--micro-batch-size"] = "8";
  CHECK(MakeScoringContext(view).oom_at.count("--micro-batch-size") == 0);
  // Not knowing what absent means (no move of the view says it once the leader sets the key), a
  // move that set the key reads as a move up, as ShapeOf reads it: 4 and above ran out.
  view.legal_moves.front().defaults.erase("--micro-batch-size");
  REQUIRE(MakeScoringContext(view).oom_at.count("--micro-batch-size") == 1);
  // Not so for a size whose larger values save memory: ETP 1 that ran out of memory where absent
  // meant TP 2 must not rule out ETP 2 later.
  view.levers.push_back({"expert_tensor_parallel",
                         "",
                         {"--expert-tensor-parallel-size"},
                         {"communication"},
                         0.03,
                         -0.1,
                         true});
  attune::CandidateRecord etp = r;
  etp.candidate_id = "c002";
  etp.lever_id = "expert_tensor_parallel";
  etp.changes = {{"--expert-tensor-parallel-size", std::nullopt, "1"}};
  view.history.push_back(etp);
  CHECK(MakeScoringContext(view).oom_at.count("--expert-tensor-parallel-size") == 0);
  // The stack says absent is 2 (an AutoModel config's local batch size): 4 and above ran out.
  view.legal_moves.front().defaults["--micro-batch-size"] = "2";
  auto ctx = MakeScoringContext(view);
  REQUIRE(ctx.oom_at.count("--micro-batch-size") == 1);
  CHECK(ctx.oom_at.at("--micro-batch-size") == Approx(4));
  Move eight{"micro_batch_size", {{"--micro-batch-size", "2", "8"}}, "", {}, {}};
  auto e = EstimateMove(ctx, eight, 0);
  CHECK_FALSE(e.feasible);
  CHECK(e.note.find("at or above a value that ran out of memory") != std::string::npos);
}

TEST_CASE("launch overhead is read from the time of a micro-batch, not from their number",
          "[agents][scoring]") {
  // 64 micro-batches of size 1 (GBS 512 over 8 data-parallel ranks).
  attune::CampaignView view = attune::testing::MakeView(30.0);
  for (auto& arg : view.leader.args) {
    if (arg.flag == "--global-batch-size") arg.values = {"512"};
  }
  auto launch = [](const attune::CampaignView& v) {
    for (const attune::Diagnosis& d : attune::agents::ReadDiagnoses(v)) {
      if (d.kind == "launch_overhead") return d.severity;
    }
    return 0.0;
  };
  view.leader_measurement->step_time_s = 64 * 0.1;  // 100 ms of GPU work each: not launch-bound
  CHECK(launch(view) == 0);
  view.leader_measurement->step_time_s = 64 * 0.01;  // 10 ms each
  CHECK(launch(view) == Approx(1.0));
  view.leader_measurement->step_time_s = 64 * 0.04;  // 40 ms each
  CHECK(launch(view) == Approx(0.25));
  // Without a step time, many micro-batches of size 1 are the guess.
  view.leader_measurement->step_time_s = 0;
  CHECK(launch(view) == Approx(0.3));
}
