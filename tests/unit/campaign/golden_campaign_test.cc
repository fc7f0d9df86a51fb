// Real campaigns written by this version (ABI 5, event log v1), kept as golden fixtures and
// replayed into today's fold: a change that breaks the reading of old campaigns fails here.
// tests/fixtures/golden/README.md says how they were made.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/campaign_state.h"
#include "campaign/events.h"
#include "log/event_log.h"

namespace attune {
namespace {

using nlohmann::json;

// `attune events DIR --json`: one envelope {seq, type, v, ts, data, ...} a line.
std::vector<EventRecord> ReadCampaign(const std::string& name) {
  std::ifstream in(std::string(ATTUNE_SOURCE_DIR) + "/tests/fixtures/golden/" + name);
  REQUIRE(in.good());
  std::vector<EventRecord> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json e = json::parse(line);
    EventRecord r;
    r.seq = e.at("seq").get<uint64_t>();
    r.type = e.at("type").get<std::string>();
    r.v = e.at("v").get<int>();
    r.data = e.at("data");
    out.push_back(std::move(r));
  }
  return out;
}

CampaignState Fold(const std::vector<EventRecord>& events) {
  auto s = CampaignState::Fold(events);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

TEST_CASE("golden: a production-length sim campaign (benchmark forms, derived limits, verify) folds "
          "as it did", "[golden]") {
  const auto events = ReadCampaign("campaign-sim-production.ndjson");
  REQUIRE(events.size() == 86);
  CampaignState s = Fold(events);
  CHECK(s.campaign_id == "golden-sim");
  CHECK(s.finished);
  CHECK(s.leader_id == "c002");
  CHECK(s.candidates.size() == 8);
  REQUIRE(s.jobs.size() == 16);
  double charged = 0;
  for (const auto& j : s.jobs) {
    INFO(j.name);
    CHECK(j.finished);
    CHECK_FALSE(j.benchmark_changes.empty());  // --exit-interval, no checkpoints, no evaluation
    CHECK_FALSE(j.stopped_early);               // the sim finishes a job at its first poll
    charged += j.charged_gpu_hours;
  }
  CHECK(s.ledger.charged == Approx(18.051994396380763).epsilon(1e-12));
  CHECK(s.ledger.charged == Approx(charged).epsilon(1e-12));
  CHECK(s.ledger.reserved == Approx(0).margin(1e-9));
  CHECK(s.ledger.total == 40);
  CHECK(s.settings.time_limit_factor == 3);
  CHECK(s.settings.early_stop);
  // The jobs after the baseline's measured run got the derived limit, not the configured 1,800 s.
  CHECK(s.jobs.front().time_limit_s == 1800);
  CHECK(s.jobs.back().time_limit_s < 1800);
  REQUIRE(s.speedup);
  CHECK(s.speedup->leader == "c002");
  CHECK(s.speedup->median == Approx(1.0452600986186853).epsilon(1e-12));
}

TEST_CASE("golden: a real minigpt campaign whose baseline was stopped early folds as it did",
          "[golden][early_stop]") {
  const auto events = ReadCampaign("campaign-early-stop.ndjson");
  REQUIRE(events.size() == 11);
  CampaignState s = Fold(events);
  CHECK(s.campaign_id == "golden-es");
  CHECK(s.finished);
  CHECK(s.leader_id == "baseline");
  REQUIRE(s.jobs.size() == 1);
  const JobRecord& j = s.jobs[0];
  CHECK(j.stop_requested);
  CHECK(j.stopped_early);
  CHECK(j.stop_log_bytes == 9228);
  CHECK(j.stop.value("last_iteration", 0) == 11);
  CHECK(j.stop.value("planned_iterations", 0) == 50);
  CHECK(j.Counts());
  REQUIRE(j.measurement);
  CHECK(j.measurement->iterations_logged == 11);
  CHECK(s.ledger.charged == Approx(0.0017102688550949096).epsilon(1e-12));
  CHECK(s.settings.early_stop_min_iterations == 8);
  CHECK(s.settings.EarlyStopRelativeError() == Approx(0.05));
}

}  // namespace
}  // namespace attune
