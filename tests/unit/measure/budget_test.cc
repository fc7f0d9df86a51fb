// Budget arithmetic over the folded ledger: reserve, charge, release; what fits and what not.
#include <catch2/catch.hpp>

#include "../campaign/campaign_fixtures.h"

namespace attune {
namespace {

using testing::LogBuilder;
using testing::TestMeasurement;
using testing::TestRecipe;

TEST_CASE("reserve, charge and release keep charged + reserved + left equal to the total", "[budget]") {
  LogBuilder b(1.0);  // 2 devices × 600 s reserves 1/3 GPU-hour per job
  b.Request("a", "baseline", "baseline").Request("b", "baseline", "baseline");
  CampaignState s = b.Fold();
  CHECK(s.ledger.reserved == Approx(2.0 / 3));
  CHECK(s.ledger.charged + s.ledger.reserved + s.ledger.Left() == Approx(s.ledger.total));
  b.Finish("a", 180, TestMeasurement(1000));  // 2 × 180 s = 0.1 GPU-hours
  s = b.Fold();
  CHECK(s.ledger.charged == Approx(0.1));
  CHECK(s.ledger.reserved == Approx(1.0 / 3));
  CHECK(s.ledger.Left() == Approx(1.0 - 0.1 - 1.0 / 3));
  CHECK(s.ledger.charged + s.ledger.reserved + s.ledger.Left() == Approx(s.ledger.total));
}

TEST_CASE("a job is reservable only while its worst case fits what remains", "[budget]") {
  LogBuilder b(0.8);
  CampaignState s = b.Fold();
  const double one_job = s.ReservationFor(TestRecipe().topology.WorldSize());
  CHECK(one_job == Approx(1.0 / 3));
  CHECK(s.ledger.Fits(one_job));
  b.Request("a", "baseline", "baseline").Request("b", "baseline", "baseline");
  s = b.Fold();
  CHECK_FALSE(s.ledger.Fits(one_job));  // 0.8 − 2/3 < 1/3: nothing more may be submitted
  b.Finish("a", 60, TestMeasurement(1000));  // a short job gives most of its reservation back
  s = b.Fold();
  CHECK(s.ledger.Fits(one_job));
}

TEST_CASE("charged equals the sum of the jobs' device-hours", "[budget]") {
  LogBuilder b(10);
  b.BaselineRun(1, 1000).BaselineRun(2, 1010);
  b.Request("x", "baseline", "baseline");
  Failure oom;
  oom.kind = FailureKind::kOom;
  b.Finish("x", 45, std::nullopt, oom);
  CampaignState s = b.Fold();
  double sum = 0;
  for (const auto& j : s.jobs) sum += j.charged_gpu_hours;
  CHECK(s.ledger.charged == Approx(sum));
  CHECK(sum == Approx(2 * (360 + 360 + 45) / 3600.0));
  CHECK(s.FailedJobs() == 1);
}

}  // namespace
}  // namespace attune
