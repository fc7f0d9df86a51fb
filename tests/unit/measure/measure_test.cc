// Noise band, comparison, outcomes and paired speedup.
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
    CHECK(RankOutcome(in) == "refused");
  }
  SECTION("out of memory") {
    Failure oom;
    oom.kind = FailureKind::kOom;
    in.failure = oom;
    CHECK(RankOutcome(in) == "failed");
  }
  SECTION("failed without a measurement") { CHECK(RankOutcome(in) == "failed"); }
  SECTION("skipped for the budget") {
    in.skipped = true;
    CHECK(RankOutcome(in) == "skipped");
  }
  SECTION("slower") {
    in.candidate_tps = 900;
    CHECK(RankOutcome(in) == "slower");
  }
  SECTION("within noise") {
    in.candidate_tps = 1020;
    CHECK(RankOutcome(in) == "within_noise");
  }
  SECTION("new leader") {
    in.candidate_tps = 1100;
    CHECK(RankOutcome(in) == "new_leader");
  }
  SECTION("a wide band keeps a modest gain within noise") {
    in.candidate_tps = 1100;
    in.band = 0.15;
    CHECK(RankOutcome(in) == "within_noise");
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

}  // namespace
}  // namespace attune
