// End to end: the measurement settings measure.confirm and measure.rivals, through whole sim
// campaigns with the real plugins and the real RocksDB log.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "campaign/campaign_state.h"
#include "e2e_util.h"
#include "measure/measure.h"

namespace attune::e2e {
namespace {

namespace fs = std::filesystem;

TEST_CASE("with measure.confirm a would-be leader runs again and leads only on the median of its runs",
          "[e2e][tune][confirm]") {
  const fs::path dir = FreshDir("confirm");
  // 4% run-to-run noise against a 3% band: single runs would make leaders by luck.
  const std::string wf =
      WorkflowVariant(dir, "confirm",
                      {{"noise_cv: 0.01, seed: 3}", "noise_cv: 0.04, seed: 3}"},
                       {"measure: {noise_band: 0.03, repeats: 1}", "measure: {noise_band: 0.03, repeats: 1, confirm: 2}"}});
  Run r = RunIt(dir, 0, wf);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  CHECK(s.settings.confirm == 2);
  int leaders = 0, confirmed_then_not = 0;
  for (const auto& c : s.candidates) {
    if (!c.ranked || !c.tokens_per_s_per_gpu) continue;
    std::vector<double> tps;
    for (const JobRecord* j : s.JobsOf(c.id, JobPurpose::kCandidate)) {
      if (j->measurement && !j->failure) tps.push_back(j->measurement->tokens_per_s_per_gpu);
    }
    INFO(c.id << " " << OutcomeName(c.outcome) << " on " << tps.size() << " run(s)");
    REQUIRE(!tps.empty());
    CHECK(tps.size() <= 3);
    // Ranked on the median of all its runs.
    CHECK(*c.tokens_per_s_per_gpu == Approx(Median(tps)).epsilon(1e-12));
    // A leader was confirmed by both extra runs (the budget of this campaign never cut one short).
    if (c.outcome == Outcome::kNewLeader) {
      ++leaders;
      CHECK(tps.size() == 3);
    } else if (tps.size() > 1) {
      ++confirmed_then_not;  // its first run(s) said "leader"; the next said otherwise
    }
  }
  CHECK(leaders >= 1);
  UNSCOPED_INFO("candidates confirmed and then not leading: " << confirmed_then_not);
  fs::remove_all(dir.parent_path());
}

// A campaign whose workflow sets `setting` (e.g. "confirm: 11") in `measure` is refused with an
// error naming `measure.<key>` before anything is recorded.
void CheckRefusedBeforeRecording(const std::string& tag, const std::string& setting,
                                 const std::string& key) {
  const fs::path dir = FreshDir(tag);
  const std::string wf = WorkflowVariant(dir, tag, "measure: {noise_band: 0.03, repeats: 1}",
                                         "measure: {noise_band: 0.03, repeats: 1, " + setting + "}");
  Run r = RunIt(dir, 0, wf);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("measure." + key) && Catch::Contains("between 0 and 10"));
  CHECK_FALSE(fs::exists(dir / "CURRENT"));  // nothing recorded
  fs::remove_all(dir.parent_path());
}

TEST_CASE("measure.confirm out of range is refused before anything is recorded", "[e2e][confirm]") {
  CheckRefusedBeforeRecording("confirmbad", "confirm: 11", "confirm");
}

// The e2e workflow with 4% run-to-run noise against the 3% band, measure.rivals: 2 and room in
// the budget for the re-measurements after the eighth candidate. The random agent proposes: its
// many near-neutral moves end within the band of the leader (what the checks below need to bite),
// and, unlike the heuristic's, its choices do not move when the heuristic's priors are improved.
std::string RivalsWorkflow(const fs::path& dir, const std::string& name) {
  return WorkflowVariant(dir, name,
                         {{"noise_cv: 0.01, seed: 3}", "noise_cv: 0.04, seed: 3}"},
                          {"measure: {noise_band: 0.03, repeats: 1}", "measure: {noise_band: 0.03, repeats: 1, rivals: 2}"},
                          {"gpu_hours: 40", "gpu_hours: 200"},
                          {"agent: heuristic", "agent: random"}});
}

std::vector<double> CandidateRuns(const CampaignState& s, const std::string& id) {
  std::vector<double> tps;
  for (const JobRecord* j : s.JobsOf(id, JobPurpose::kCandidate)) {
    if (j->measurement && !j->failure) tps.push_back(j->measurement->tokens_per_s_per_gpu);
  }
  return tps;
}

TEST_CASE("with measure.rivals the leader and its closest rivals run again once nothing new is left",
          "[e2e][tune][rivals]") {
  const fs::path dir = FreshDir("rivals");
  Run r = RunIt(dir, 0, RivalsWorkflow(dir, "rivals"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  CHECK(s.settings.rivals == 2);
  CHECK(s.FindStep("tune")->outcome == "max_candidates");
  REQUIRE(s.candidates.size() == 8);
  // Every extra run came after the eighth candidate's own run: tuning had nothing new to try.
  const std::vector<const JobRecord*> last = s.JobsOf(s.candidates.back().id, JobPurpose::kCandidate);
  REQUIRE(!last.empty());
  auto position = [&](const std::string& job) {
    for (size_t i = 0; i < s.jobs.size(); ++i) {
      if (s.jobs[i].name == job) return i;
    }
    FAIL("job " << job << " not found");
    return s.jobs.size();
  };
  const size_t last_first = position(last.front()->name);
  int remeasured = 0;
  for (const auto& c : s.candidates) {
    if (!c.ranked || !c.tokens_per_s_per_gpu) continue;
    const std::vector<double> tps = CandidateRuns(s, c.id);
    INFO(c.id << " " << OutcomeName(c.outcome) << " on " << tps.size() << " run(s)");
    REQUIRE(!tps.empty());
    CHECK(tps.size() <= 3);  // repeats 1 + rivals 2
    const std::vector<const JobRecord*> jobs = s.JobsOf(c.id, JobPurpose::kCandidate);
    for (size_t k = 1; k < jobs.size(); ++k) CHECK(position(jobs[k]->name) > last_first);
    if (tps.size() > 1) ++remeasured;
    // A rival is ranked on the median of all its runs, after the last of them.
    if (c.id != s.leader_id && c.outcome != Outcome::kNewLeader) {
      CHECK(c.ranked_on_jobs == static_cast<int>(jobs.size()));
      CHECK(*c.tokens_per_s_per_gpu == Approx(Median(tps)).epsilon(1e-12));
    }
  }
  CHECK(remeasured >= 2);
  // The leader is a candidate here, and it ran as often as a rival may.
  REQUIRE(s.leader_id != "baseline");
  CHECK(CandidateRuns(s, s.leader_id).size() == 3);
  // Whatever is within the band of the leader now was measured as often as allowed.
  const auto leader = s.MeasurementOf(s.leader_id);
  REQUIRE(leader.has_value());
  const double band = NoiseBand(s.settings.noise_band, s.MeasurementsOf(s.leader_id));
  int within = 0;
  for (const auto& c : s.candidates) {
    if (c.id == s.leader_id || c.outcome == Outcome::kNewLeader) continue;
    const std::vector<double> tps = CandidateRuns(s, c.id);
    if (tps.empty() || Compare(Median(tps), leader->tokens_per_s_per_gpu, band) != Comparison::kWithinNoise) {
      continue;
    }
    ++within;
    INFO(c.id << " at " << Median(tps) / leader->tokens_per_s_per_gpu << " of the leader");
    CHECK(tps.size() == 3);
  }
  CHECK(within >= 1);
  fs::remove_all(dir.parent_path());
}

TEST_CASE("a campaign stopped while re-measuring rivals and resumed ends as an uninterrupted one",
          "[e2e][replay][rivals]") {
  const fs::path whole = FreshDir("rivalswhole");
  REQUIRE(RunIt(whole, 0, RivalsWorkflow(whole, "rw")).exit_code == 0);
  CampaignState a = FoldDir(whole);
  // Stop a few events after the tuning's first re-measurement was requested.
  uint64_t first_extra = 0;
  std::set<std::string> seen;
  for (const EventRecord& e : ReadEvents(whole)) {
    if (e.type != "JobRequested") continue;
    const std::string candidate = e.data.value("candidate", "");
    if (candidate == "baseline" || e.data.value("purpose", "") != "candidate") continue;
    if (!seen.insert(candidate).second) {
      first_extra = e.seq;
      break;
    }
  }
  REQUIRE(first_extra > 0);
  for (uint64_t k : {first_extra, first_extra + 5}) {
    DYNAMIC_SECTION("stopped after " << k << " events") {
      const fs::path split = FreshDir("rivalssplit" + std::to_string(k));
      const std::string wf = RivalsWorkflow(split, "rs");
      Run first = RunIt(split, static_cast<int>(k), wf);
      INFO(first.err);
      REQUIRE(first.exit_code == 3);
      Run second = RunIt(split, 0, wf);
      INFO(second.err);
      REQUIRE(second.exit_code == 0);
      CampaignState b = FoldDir(split);
      CHECK(a.leader_id == b.leader_id);
      CHECK(a.jobs.size() == b.jobs.size());
      CHECK(a.ledger.charged == Approx(b.ledger.charged));
      CHECK(Slurp(split / "RESULTS.md") == Slurp(whole / "RESULTS.md"));
      fs::remove_all(split.parent_path());
    }
  }
  fs::remove_all(whole.parent_path());
}

TEST_CASE("measure.rivals out of range is refused before anything is recorded", "[e2e][rivals]") {
  CheckRefusedBeforeRecording("rivalsbad", "rivals: -1", "rivals");
}

}  // namespace
}  // namespace attune::e2e
