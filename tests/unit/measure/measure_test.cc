// Noise band, comparison, outcomes and paired speedup.
#include <cmath>

#include <catch2/catch.hpp>

#include "../campaign/campaign_fixtures.h"
#include "measure/measure.h"

namespace attune {
namespace {

using testing::TestMeasurement;

TEST_CASE("the noise band is the configured band when repeated runs agree", "[measure]") {
  std::vector<Measurement> runs{TestMeasurement(1000), TestMeasurement(1005), TestMeasurement(998)};
  CHECK(NoiseBand(0.03, runs) == Approx(0.03));
}

TEST_CASE("the noise band widens to the spread of the leader's repeated runs", "[measure]") {
  std::vector<Measurement> runs{TestMeasurement(1000), TestMeasurement(1100), TestMeasurement(950)};
  CHECK(RelativeSpread(runs) == Approx(150.0 / 1000));
  CHECK(NoiseBand(0.03, runs) == Approx(0.15));
}

TEST_CASE("a single noisy run widens the band to two standard errors", "[measure]") {
  Measurement m = TestMeasurement(1000);
  m.cv = 0.4;
  m.iterations_used = 16;  // 2 × 0.4 ÷ 4 = 0.2
  CHECK(NoiseBand(0.03, {m}) == Approx(0.2));
  CHECK(RelativeSpread({m}) == 0);
}

TEST_CASE("repeated runs that agree keep the band narrow despite a noisy iteration", "[measure]") {
  Measurement a = TestMeasurement(1000), b = TestMeasurement(1005);
  a.cv = 0.25;  // one slow iteration; the medians still agree
  CHECK(NoiseBand(0.05, {a, b}) == Approx(0.05));
}

TEST_CASE("a comparison is faster or slower only beyond the band", "[measure]") {
  CHECK(Compare(1040, 1000, 0.03) == Comparison::kFaster);
  CHECK(Compare(1030, 1000, 0.03) == Comparison::kWithinNoise);
  CHECK(Compare(971, 1000, 0.03) == Comparison::kWithinNoise);
  CHECK(Compare(960, 1000, 0.03) == Comparison::kSlower);
  CHECK(std::string(ComparisonName(Comparison::kWithinNoise)) == "within_noise");
}

TEST_CASE("every candidate outcome is decided by RankOutcome", "[measure]") {
  OutcomeInput in;
  in.leader_tps = 1000;
  in.band = 0.03;
  SECTION("refused by the gate") {
    in.gate_pass = false;
    in.candidate_tps = 2000;
    CHECK(RankOutcome(in) == Outcome::kRefused);
  }
  SECTION("out of memory") {
    Failure oom;
    oom.kind = FailureKind::kOom;
    in.failure = oom;
    CHECK(RankOutcome(in) == Outcome::kFailed);
  }
  SECTION("failed without a measurement") { CHECK(RankOutcome(in) == Outcome::kFailed); }
  SECTION("skipped for the budget") {
    in.skipped = true;
    CHECK(RankOutcome(in) == Outcome::kSkipped);
  }
  SECTION("slower") {
    in.candidate_tps = 900;
    CHECK(RankOutcome(in) == Outcome::kSlower);
  }
  SECTION("within noise") {
    in.candidate_tps = 1020;
    CHECK(RankOutcome(in) == Outcome::kWithinNoise);
  }
  SECTION("new leader") {
    in.candidate_tps = 1100;
    CHECK(RankOutcome(in) == Outcome::kNewLeader);
  }
  SECTION("a wide band keeps a modest gain within noise") {
    in.candidate_tps = 1100;
    in.band = 0.15;
    CHECK(RankOutcome(in) == Outcome::kWithinNoise);
  }
}

TEST_CASE("paired speedup takes the median, min and max of per-pair ratios", "[measure]") {
  SpeedupStats s = PairedSpeedup({1200, 1300, 1100}, {1000, 1000, 1000});
  CHECK(s.ratios.size() == 3);
  CHECK(s.median == Approx(1.2));
  CHECK(s.min == Approx(1.1));
  CHECK(s.max == Approx(1.3));
  CHECK(PairedSpeedup({}, {}).ratios.empty());
  CHECK(PairedSpeedup({1000}, {0}).ratios.empty());  // a zero baseline gives no ratio
}

// Step times 1−a, 1+a, 1+a, 1−a, … around `base`: cv ≈ a, so the relative standard error of the
// median is about 1.2533 × a ÷ √n; halves of a multiple of 4 have the same median (no drift).
std::vector<double> Wobbling(int n, double a, double base = 1.0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(base * (i % 4 == 0 || i % 4 == 3 ? 1 - a : 1 + a));
  return v;
}

TEST_CASE("a steady run is stable once its median step time is known to the target", "[measure][early_stop]") {
  // cv ≈ 0.02: √n ≥ 1.2533 × 0.02 ÷ 0.005 ≈ 5.01, so 24 iterations are not enough, 32 are.
  SteadyCheck not_yet = CheckSteady(Wobbling(24, 0.02), 10, 0.005);
  CHECK_FALSE(not_yet.stable);
  CHECK(not_yet.relative_error > 0.005);
  CHECK_THAT(not_yet.why, Catch::Contains("known to"));
  SteadyCheck done = CheckSteady(Wobbling(32, 0.02), 10, 0.005);
  CHECK(done.stable);
  CHECK(done.iterations == 32);
  CHECK(done.median_s == Approx(1.0));
  CHECK(done.relative_error == Approx(1.2533 * 0.02 * std::sqrt(32.0 / 31) / std::sqrt(32.0)).epsilon(1e-3));
  CHECK(done.drift == Approx(0).margin(1e-12));
}

TEST_CASE("too few steady iterations are never stable, however flat", "[measure][early_stop]") {
  SteadyCheck c = CheckSteady(std::vector<double>(9, 0.5), 10, 0.01);
  CHECK_FALSE(c.stable);
  CHECK_THAT(c.why, Catch::Contains("9 steady iteration(s) of the 10 needed"));
  CHECK(CheckSteady(std::vector<double>(10, 0.5), 10, 0.01).stable);
  CHECK_FALSE(CheckSteady({}, 0, 0.01).stable);
  CHECK_FALSE(CheckSteady({0.5}, 1, 0.01).stable);  // one sample has no spread
}

TEST_CASE("a step time that still drifts is not stable", "[measure][early_stop]") {
  // Flat halves (no spread within them) at 1.0 s then 1.1 s: tiny cv error, 10% drift.
  std::vector<double> v(20, 1.0);
  for (int i = 0; i < 20; ++i) v.push_back(1.1);
  SteadyCheck c = CheckSteady(v, 10, 0.02);
  CHECK(c.relative_error < 0.02);
  CHECK(c.drift == Approx(0.1 / 1.05).epsilon(0.01));  // median of 1.0/1.1 halves: 1.05
  CHECK_FALSE(c.stable);
  CHECK_THAT(c.why, Catch::Contains("drifts"));
  // The same drift (9.5%) is within 3 × a looser target (12%).
  CHECK(CheckSteady(v, 10, 0.04).stable);
}

TEST_CASE("no positive step time is never stable", "[measure][early_stop]") {
  SteadyCheck c = CheckSteady(std::vector<double>(20, 0.0), 10, 0.01);
  CHECK_FALSE(c.stable);
  CHECK_THAT(c.why, Catch::Contains("no positive step time"));
}

}  // namespace
}  // namespace attune
