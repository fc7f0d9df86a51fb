#include <catch2/catch.hpp>
#include <set>

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
  CHECK(q->base_id.empty());
  CHECK_FALSE(attune::ProposalToJson(p).contains("base"));
  p.base_id = "c004";
  auto r = attune::ProposalFromJson(attune::ProposalToJson(p));
  REQUIRE(r.ok());
  CHECK(r->base_id == "c004");
  auto bad = attune::ProposalFromJson(nlohmann::json{{"base", 4}, {"changes", attune::ChangesToJson(p.changes)}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("proposal.base"));
}

TEST_CASE("cluster facts survive their JSON form; a dry run's assumed length only when given",
          "[codecs]") {
  attune::ClusterInfo c;
  c.device_type = "H100";
  c.device_memory_gib = 79.6;
  c.devices_per_node = 8;
  c.virtual_time = true;
  CHECK_FALSE(attune::ClusterInfoToJson(c).contains("sim_sequence_length"));
  c.sim_sequence_length = 512;
  attune::ClusterInfo back = attune::ClusterInfoFromJson(attune::ClusterInfoToJson(c));
  CHECK(back.sim_sequence_length == 512);
  CHECK(back.device_type == "H100");
  CHECK(back.devices_per_node == 8);
  CHECK(back.virtual_time);
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

TEST_CASE("candidate outcomes have one name each, read back", "[api][outcome]") {
  const attune::Outcome all[] = {attune::Outcome::kPending,     attune::Outcome::kRefused,
                                 attune::Outcome::kFailed,      attune::Outcome::kSlower,
                                 attune::Outcome::kWithinNoise, attune::Outcome::kNewLeader,
                                 attune::Outcome::kPairedLossMismatch, attune::Outcome::kSkipped};
  std::set<std::string> names;
  for (attune::Outcome o : all) {
    std::string name = attune::OutcomeName(o);
    CHECK(names.insert(name).second);
    CHECK(attune::OutcomeFromName(name) == o);
  }
  CHECK(names.count("new_leader") == 1);
  CHECK(names.count("paired_loss_mismatch") == 1);
  CHECK_FALSE(attune::OutcomeFromName("New_Leader").has_value());
  CHECK_FALSE(attune::OutcomeFromName("").has_value());
}
