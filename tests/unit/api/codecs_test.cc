#include <catch2/catch.hpp>

#include "attune/agent.h"
#include "attune/launcher.h"

TEST_CASE("job status and proposal survive their JSON forms", "[codecs]") {
  attune::JobStatus s;
  s.name = "c-001-1";
  s.state = attune::JobState::kSucceeded;
  s.start_time = 100;
  s.end_time = 3700;
  s.devices = 8;
  auto back = attune::JobStatusFromJson(attune::JobStatusToJson(s));
  REQUIRE(back.ok());
  CHECK(back->state == attune::JobState::kSucceeded);
  CHECK(back->DeviceHours() == Approx(8.0));

  attune::Proposal p;
  p.changes = {{"--micro-batch-size", "1", "2"}};
  p.rationale = "use memory headroom";
  auto q = attune::ProposalFromJson(attune::ProposalToJson(p));
  REQUIRE(q.ok());
  CHECK(q->changes == p.changes);
}

TEST_CASE("a proposal with no change and not done is refused", "[codecs]") {
  auto q = attune::ProposalFromJson(nlohmann::json{{"rationale", "hm"}});
  REQUIRE_FALSE(q.ok());
  CHECK_THAT(q.status().message(), Catch::Contains("at least one change"));
}

TEST_CASE("median and coefficient of variation", "[metrics]") {
  CHECK(attune::Median({3, 1, 2}) == 2);
  CHECK(attune::Median({4, 1, 2, 3}) == 2.5);
  CHECK(attune::CoefficientOfVariation({1, 1, 1}) == 0);
  CHECK(attune::CoefficientOfVariation({1, 3}) == Approx(0.7071).epsilon(0.001));
}
