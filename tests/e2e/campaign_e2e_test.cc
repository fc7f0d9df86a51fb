// End to end: whole campaigns through RunCampaign with the real plugins (megatron stack, sim
// launcher in virtual time, heuristic agent) and the real RocksDB log.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "campaign/campaign_state.h"
#include "e2e_util.h"
#include "measure/measure.h"
#include "steps/campaign_runner.h"

namespace attune::e2e {
namespace {

namespace fs = std::filesystem;


TEST_CASE("a profile step on a launcher that writes no traces says why and the campaign goes on",
          "[e2e][profile]") {
  const fs::path dir = FreshDir("profile");
  const std::string workflow = std::string(ATTUNE_SOURCE_DIR) + "/tests/e2e/workflows/sim_profile.yaml";
  Run r = RunIt(dir, 0, workflow);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  CHECK(s.finished);
  const StepRecord* step = s.FindStep("profile");
  REQUIRE(step != nullptr);
  CHECK(step->outcome == "no_traces");
  REQUIRE(s.profiles.size() == 1);
  CHECK(s.profiles[0].candidate == s.leader_id);
  CHECK_THAT(s.profiles[0].error, Catch::Contains("wrote no trace"));
  // Charged like any job, never ranked, and the quoted speedup is the verify step's.
  const JobRecord* job = s.FindJob(s.profiles[0].job);
  REQUIRE(job != nullptr);
  CHECK(job->purpose == JobPurpose::kProfile);
  CHECK(job->charged_gpu_hours > 0);
  CHECK_FALSE(job->trace_dir.empty());
  CHECK(s.MeasurementsOf(s.leader_id, JobPurpose::kProfile).size() == 1);
  const std::string report = Slurp(dir / "REPORT.md");
  CHECK_THAT(report, Catch::Contains("## Profile") && Catch::Contains("no analysis"));
  CHECK_FALSE(fs::exists(dir / "profile.svg"));
}

TEST_CASE("a sim campaign finds a leader faster than the baseline and reports it", "[e2e]") {
  const fs::path dir = FreshDir("full");
  Run r = RunIt(dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"RESULTS.md", "REPORT.md", "throughput.svg", "lessons.md"}) {
    CHECK(fs::exists(dir / f));
  }
  CampaignState s = FoldDir(dir);
  CHECK(s.finished);
  CHECK(s.leader_id != "baseline");
  REQUIRE(s.speedup.has_value());
  CHECK(s.speedup->median > 1.03);
  CHECK(s.InFlightJobs().empty());

  // Budget arithmetic: the ledger's charge is exactly the jobs' device-hours, nothing reserved.
  double sum = 0;
  for (const auto& j : s.jobs) sum += j.charged_gpu_hours;
  CHECK(s.ledger.charged == Approx(sum));
  CHECK(s.ledger.reserved == Approx(0).margin(1e-9));
  CHECK(s.ledger.charged <= s.ledger.total);

  const std::string results = Slurp(dir / "RESULTS.md");
  // The leader's row says so (a within-noise candidate may still measure a little faster).
  const size_t row = results.find("| " + s.leader_id + " |");
  REQUIRE(row != std::string::npos);
  CHECK_THAT(results.substr(row, results.find('\n', row) - row), Catch::EndsWith("new_leader, leader |"));
  CHECK_THAT(Slurp(dir / "REPORT.md"), Catch::Contains("Ship **" + s.leader_id + "**"));

  // The status view agrees with the fold.
  auto status = CampaignStatusJson(dir.string());
  REQUIRE(status.ok());
  CHECK((*status)["leader"] == s.leader_id);
  CHECK((*status)["state"] == "finished");
  CHECK((*status)["budget"]["charged_gpu_hours"].get<double>() == Approx(sum));

  // Every acknowledged event is in the log.
  std::ifstream acks(dir.parent_path() / "acks");
  uint64_t seq = 0, last = 0;
  while (acks >> seq) last = seq;
  CHECK(last == s.last_seq);

  // Running a finished campaign again does nothing.
  CHECK(RunIt(dir).exit_code == 0);
  CHECK(FoldDir(dir).last_seq == s.last_seq);
  fs::remove_all(dir.parent_path());
}

TEST_CASE("tuning goes on until the budget or the candidate limit, each candidate one lever from a "
          "measured base", "[e2e][tune]") {
  const fs::path dir = FreshDir("lever");
  Run r = RunIt(dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  // The heuristic never gives up while moves remain: the step ends on the campaign's limits.
  const auto tune = std::find_if(s.steps.begin(), s.steps.end(), [](const StepRecord& st) { return st.id == "tune"; });
  REQUIRE(tune != s.steps.end());
  CHECK((tune->outcome == "max_candidates" || tune->outcome == "budget_exhausted"));
  CHECK_FALSE(tune->reason.empty());
  CHECK_THAT(Slurp(dir / "REPORT.md"), Catch::Contains("Tuning step `tune` ended: **" + tune->outcome + "**"));
  // Every candidate changes one base, and that base was measured before it was proposed.
  std::set<std::string> measured{"baseline"};
  for (const auto& c : s.candidates) {
    INFO(c.id << " from " << c.base_id);
    CHECK(measured.count(c.base_id) == 1);
    const Recipe* base = s.RecipeOf(c.base_id);
    REQUIRE(base);
    REQUIRE(c.recipe);
    Recipe expected = *base;
    REQUIRE(ApplyChanges(&expected, c.changes).ok());
    CHECK(RecipeId(expected) == RecipeId(*c.recipe));
    CHECK(Diff(*base, *c.recipe).size() == c.changes.size());
    if (c.outcome == Outcome::kSlower || c.outcome == Outcome::kWithinNoise || c.outcome == Outcome::kNewLeader) {
      measured.insert(c.id);
    }
  }
  fs::remove_all(dir.parent_path());
}

TEST_CASE("the stop rule ends tuning after N candidates without a new leader; the report says so",
          "[e2e][tune]") {
  const fs::path dir = FreshDir("stoprule");
  const std::string wf = WorkflowVariant(dir, "stoprule", "{id: tune, uses: tune}",
                                         "{id: tune, uses: tune, with: {stop: {no_gain_candidates: 2}}}");
  Run r = RunIt(dir, 0, wf);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  const auto tune = std::find_if(s.steps.begin(), s.steps.end(), [](const StepRecord& st) { return st.id == "tune"; });
  REQUIRE(tune != s.steps.end());
  REQUIRE(tune->outcome == "stop_rule");
  // The last two candidates that ran made no new leader; the one before them did, or was the first.
  int ran = 0;
  for (auto c = s.candidates.rbegin(); c != s.candidates.rend() && ran < 2; ++c) {
    if (c->outcome == Outcome::kRefused || c->outcome == Outcome::kSkipped) continue;
    CHECK(c->outcome != Outcome::kNewLeader);
    ++ran;
  }
  CHECK(ran == 2);
  CHECK(s.candidates.size() < 8);
  CHECK_THAT(Slurp(dir / "REPORT.md"),
             Catch::Contains("**stop_rule** — stop rule stop.no_gain_candidates = 2"));
  fs::remove_all(dir.parent_path());
}

TEST_CASE("a campaign stopped mid-way and resumed ends exactly as an uninterrupted one", "[e2e][replay]") {
  const fs::path whole = FreshDir("whole");
  REQUIRE(RunIt(whole).exit_code == 0);
  const int total_events = static_cast<int>(FoldDir(whole).last_seq);

  for (int k : {9, total_events / 2}) {
    DYNAMIC_SECTION("stopped after " << k << " events") {
      const fs::path split = FreshDir("split" + std::to_string(k));
      Run first = RunIt(split, k);
      INFO(first.err);
      REQUIRE(first.exit_code == 3);
      CampaignState paused = FoldDir(split);
      CHECK(paused.paused);
      CHECK_FALSE(paused.finished);
      Run second = RunIt(split);
      INFO(second.err);
      REQUIRE(second.exit_code == 0);
      for (const char* f : {"RESULTS.md", "REPORT.md", "throughput.svg", "lessons.md"}) {
        INFO(f);
        CHECK(Slurp(split / f) == Slurp(whole / f));
      }
      CampaignState a = FoldDir(whole), b = FoldDir(split);
      CHECK(a.leader_id == b.leader_id);
      CHECK(a.jobs.size() == b.jobs.size());
      CHECK(a.ledger.charged == Approx(b.ledger.charged));
      fs::remove_all(split.parent_path());
    }
  }
  fs::remove_all(whole.parent_path());
}

TEST_CASE("a campaign whose budget runs out stops submitting and still reports", "[e2e][budget]") {
  const fs::path dir = FreshDir("budget");
  // 8 GPUs × 1800 s reserves 4 GPU-hours per job (fixed limits: time_limit_factor 0); a run
  // charges about 0.6-1.5: 10 GPU-hours fit the three baseline runs and a couple of candidates,
  // then no reservation fits.
  Run r = RunIt(dir, 0, WorkflowVariant(dir, "budget", "gpu_hours: 40", "gpu_hours: 10, time_limit_factor: 0"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  CHECK(s.FindStep("tune")->outcome == "budget_exhausted");
  CHECK(s.ledger.charged <= s.ledger.total);
  double reserved_max = 0;
  for (const auto& j : s.jobs) reserved_max = std::max(reserved_max, j.reserved_gpu_hours);
  CHECK(s.ledger.Left() < reserved_max);  // nothing more would have fitted
  CHECK(s.candidates.size() >= 1);
  CHECK(fs::exists(dir / "REPORT.md"));
  fs::remove_all(dir.parent_path());
}

TEST_CASE("a candidate whose run failed for the infrastructure runs again; its lever is judged on a "
          "run that worked", "[e2e][infra]") {
  const fs::path dir = FreshDir("infra");
  // Every third job or so dies of an NCCL timeout or a hang (the sim's injected failures, drawn per
  // job name, so a retry draws anew); the tune step retries such a candidate up to twice.
  Run r = RunIt(dir, 0, WorkflowVariant(dir, "infra", "noise_cv: 0.01, seed: 3}",
                                        "noise_cv: 0.01, seed: 3, failures: {nccl_timeout: 0.2, hang: 0.15}}"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  int retried = 0;
  for (const auto& c : s.candidates) {
    std::vector<const JobRecord*> jobs;  // its tuning runs (verify pairs are checked below)
    for (const auto& name : c.jobs) {
      if (s.FindJob(name)->purpose == JobPurpose::kCandidate) jobs.push_back(s.FindJob(name));
    }
    if (jobs.empty()) continue;
    INFO(c.id << " " << OutcomeName(c.outcome));
    int infra = 0, silent_hangs = 0;
    for (const JobRecord* j : jobs) {
      infra += j->failure && j->failure->infrastructure ? 1 : 0;
      silent_hangs += j->failure && j->failure->signature == "hang_no_progress" ? 1 : 0;
    }
    // A silent hang is retried once; a second one is the recipe's.
    CHECK(silent_hangs <= 2);
    // Never ranked failed on infrastructure alone while retries were left...
    if (c.outcome == Outcome::kFailed) {
      const JobRecord* last = jobs.back();
      const bool recipe_failure = last->failure && !last->failure->infrastructure;
      const bool hung_twice = silent_hangs == 2 && last->failure->signature == "hang_no_progress";
      CHECK((recipe_failure || infra == 3 || hung_twice));
    }
    // ...and a retried candidate is judged on the run that measured.
    if (infra > 0 && jobs.back()->measurement) {
      ++retried;
      CHECK(c.outcome != Outcome::kFailed);
      CHECK(jobs.size() == static_cast<size_t>(infra + 1));
      CHECK(jobs.back()->attempt == infra + 1);
    }
  }
  // A verify pair's run lost to the infrastructure is run again too (up to twice).
  int pair_retries = 0;
  for (const std::string& who : {s.leader_id, std::string("baseline")}) {
    for (int p = 1; p <= 3; ++p) {
      std::vector<const JobRecord*> runs;
      for (const JobRecord* j : s.JobsOf(who, JobPurpose::kVerify)) {
        if (j->pair == p) runs.push_back(j);
      }
      if (runs.empty()) continue;  // the leader stayed the baseline, or the budget ran out
      INFO(who << " pair " << p << ": " << runs.size() << " run(s)");
      int silent_hangs = 0;
      for (const JobRecord* j : runs) {
        silent_hangs += j->failure && j->failure->signature == "hang_no_progress" ? 1 : 0;
      }
      CHECK(silent_hangs <= 2);  // a second silent hang settles the pair, as the recipe's
      for (size_t i = 0; i + 1 < runs.size(); ++i) {
        CHECK((runs[i]->failure && runs[i]->failure->infrastructure));
      }
      if (runs.size() > 1) ++pair_retries;
      const JobRecord* last = runs.back();
      const bool hung_twice = silent_hangs == 2 && last->failure && last->failure->signature == "hang_no_progress";
      CHECK((last->measurement || !last->failure || !last->failure->infrastructure || runs.size() == 3 ||
             hung_twice));
    }
  }
  INFO("candidates: " << s.candidates.size() << ", jobs: " << s.jobs.size() << ", pair retries: " << pair_retries);
  CHECK(retried >= 1);  // with these rates and seeds at least one candidate needed a second run
  CHECK(pair_retries >= 1);
  CHECK(s.ledger.charged <= s.ledger.total);
  fs::remove_all(dir.parent_path());
}

TEST_CASE("a production-length recipe is benchmarked in its short form and shipped whole", "[e2e][benchmark]") {
  // 500,000 iterations, checkpoints every 2,000, evaluation every 1,000: run as it is, each job
  // would train until the 1,800 s time limit killed it.
  const fs::path dir = FreshDir("production");
  const std::string workflow = fs::path(kWorkflow).parent_path() / "sim_production.yaml";
  Run r = RunIt(dir, 0, workflow);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  CHECK(s.finished);
  REQUIRE(!s.jobs.empty());
  for (const auto& j : s.jobs) {
    INFO(j.name);
    // None killed by the time limit: each ran to its end, or (a candidate near the memory limit)
    // ran out of memory.
    CHECK(j.state != JobState::kTimedOut);
    if (j.state != JobState::kSucceeded) {
      REQUIRE(j.failure.has_value());
      CHECK(j.failure->kind == FailureKind::kOom);
    }
    CHECK(GetValue(j.recipe, "--train-iters") == "500000");
    CHECK(GetValue(j.run_recipe, "--exit-interval") == "50");
    CHECK(GetValue(j.run_recipe, "--train-iters") == "500000");  // the LR schedule is production's
    CHECK_FALSE(GetValue(j.run_recipe, "--save").has_value());
    CHECK_FALSE(GetValue(j.run_recipe, "--save-interval").has_value());
    CHECK(GetValue(j.run_recipe, "--eval-iters") == "0");
    CHECK(GetValue(j.run_recipe, "--log-interval") == "1");
    REQUIRE(j.status.contains("end_time"));
    CHECK(j.status.value("end_time", 0.0) - j.status.value("start_time", 0.0) < 1800);
  }
  CHECK(s.leader_id != "baseline");
  REQUIRE(s.speedup.has_value());
  CHECK(s.speedup->median > 1.03);

  // Time limits: the workflow's 1,800 s until the baseline measured, then 3× its longest run so
  // far (at least 120 s), recorded with each job; the reservation follows the limit.
  double longest = 0;
  int derived = 0;
  for (const auto& j : s.jobs) {
    INFO(j.name);
    const double expected = longest > 0 ? std::min(1800.0, std::max(120.0, 3 * longest)) : 1800.0;
    CHECK(j.time_limit_s == Approx(expected));
    CHECK(j.reserved_gpu_hours == Approx(j.devices * j.time_limit_s / 3600.0));
    derived += j.time_limit_s < 1800 ? 1 : 0;
    if (j.candidate == "baseline" && j.measurement) {
      longest = std::max(longest, j.status.value("end_time", 0.0) - j.status.value("start_time", 0.0));
    }
  }
  CHECK(derived >= static_cast<int>(s.jobs.size()) - 1);  // all but the first baseline run, with only the tuned levers changed.
  const Recipe* shipped = s.RecipeOf(s.leader_id);
  REQUIRE(shipped != nullptr);
  for (const auto& change : Diff(s.baseline, *shipped)) {
    INFO(change.key);
    CHECK(change.key != "--train-iters");
    CHECK(change.key != "--exit-interval");
    CHECK(change.key != "--save");
    CHECK(change.key != "--save-interval");
    CHECK(change.key != "--eval-iters");
    CHECK(change.key != "--log-interval");
  }
  CHECK(GetValue(*shipped, "--save-interval") == "2000");
  CHECK(GetValue(*shipped, "--eval-interval") == "1000");
  CHECK_FALSE(GetValue(*shipped, "--exit-interval").has_value());
  const std::string report = Slurp(dir / "REPORT.md");
  CHECK_THAT(report, Catch::Contains("[--train-iters, 500000]"));
  CHECK_THAT(report, Catch::Contains("## How the jobs were benchmarked"));
  CHECK_THAT(report, Catch::Contains("`--exit-interval: (absent) -> 50`"));
  CHECK_THAT(report, Catch::Contains("`--save-interval: 2000 -> (absent)`"));
  CHECK_THAT(report, Catch::Contains("3.0× the baseline's longest run"));
  fs::remove_all(dir.parent_path());
}

TEST_CASE("a job its time limit ends after its log pinned the step time down is measured from that log",
          "[e2e][time_limit]") {
  // The baseline runs 30 iterations of ~7.9 s after ~110 s of start-up (~340 s in all). With a
  // 320 s limit each job is killed a few iterations short of its end, after ~25 steady ones; the
  // simulated cluster never shows a running job, so the adaptive stop cannot fire first.
  const fs::path dir = FreshDir("time-limit");
  Run r = RunIt(dir, 0, WorkflowVariant(dir, "time-limit", "job_time_limit_s: 1800", "job_time_limit_s: 320"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CampaignState s = FoldDir(dir);
  CHECK(s.finished);
  const auto baseline = s.JobsOf("baseline", JobPurpose::kBaseline);
  REQUIRE(baseline.size() == 3);
  for (const JobRecord* j : baseline) {
    INFO(j->name);
    CHECK(j->state == JobState::kTimedOut);
    CHECK(j->measured_at_time_limit);
    CHECK_FALSE(j->failure.has_value());
    REQUIRE(j->measurement.has_value());
    CHECK(j->measurement->iterations_used >= 20);
    CHECK(j->charged_gpu_hours == Approx(j->devices * 320.0 / 3600).epsilon(0.01));
  }
  CHECK(s.FindStep("baseline")->outcome == "done");
  // Tuning went on from the measured baseline; a candidate measured at its limit counts too.
  CHECK(s.candidates.size() >= 1);
  int measured_at_limit = 0;
  for (const auto& j : s.jobs) {
    if (j.measured_at_time_limit) {
      ++measured_at_limit;
      CHECK(j.measurement.has_value());
    }
    // A job killed by its limit is either measured or a time-limit failure, never both or neither.
    if (j.finished && j.state == JobState::kTimedOut && !j.measured_at_time_limit) {
      REQUIRE(j.failure.has_value());
      CHECK(j.failure->kind == FailureKind::kTimeLimit);
    }
  }
  CHECK(measured_at_limit >= 3);
  const std::string report = Slurp(dir / "REPORT.md");
  CHECK_THAT(report, Catch::Contains(std::to_string(measured_at_limit) + " jobs reached their time limit"));
  CHECK_THAT(report, Catch::Contains("raise `budget.job_time_limit_s`"));

  // A limit too short for a steady measurement stays a time-limit failure: the baseline fails.
  const fs::path short_dir = FreshDir("time-limit-short");
  Run r2 = RunIt(short_dir, 0,
                 WorkflowVariant(short_dir, "time-limit-short", "job_time_limit_s: 1800", "job_time_limit_s: 200"));
  INFO(r2.err);
  CampaignState s2 = FoldDir(short_dir);
  REQUIRE_FALSE(s2.JobsOf("baseline", JobPurpose::kBaseline).empty());
  for (const JobRecord* j : s2.JobsOf("baseline", JobPurpose::kBaseline)) {
    CHECK_FALSE(j->measured_at_time_limit);
    REQUIRE(j->failure.has_value());
    CHECK(j->failure->kind == FailureKind::kTimeLimit);
  }
  CHECK(s2.FindStep("baseline")->outcome == "baseline_failed");
  // The failure says what the whole run needs (~340 s: 30 iterations of ~7.9 s after the start-up)
  // and what limit to set; the report repeats it.
  const JobRecord* cut = s2.JobsOf("baseline", JobPurpose::kBaseline).back();
  CHECK_THAT(cut->failure->hint, Catch::Contains("of 30 in 200 s"));
  CHECK_THAT(cut->failure->hint, Catch::Contains("set `budget.job_time_limit_s` to at least"));
  const std::string short_report = Slurp(short_dir / "REPORT.md");
  CHECK_THAT(short_report, Catch::Contains("set `budget.job_time_limit_s` to at least"));
  CHECK_THAT(short_report, Catch::Contains("Then start a new campaign with a longer `budget.job_time_limit_s`"));

  // A job that hung after a steady start is a hang, not a measurement: its log stopped long before
  // the limit, and the recipe deadlocks. (Launcher seed 5 hangs the second baseline run after 28
  // of its 30 iterations; the check below keeps the case honest if the draws change.)
  const fs::path hang_dir = FreshDir("time-limit-hang");
  Run r3 = RunIt(hang_dir, 0,
                 WorkflowVariant(hang_dir, "time-limit-hang", "noise_cv: 0.01, seed: 3",
                                 "noise_cv: 0.01, seed: 5, failures: {hang: 1.0}"));
  INFO(r3.err);
  CampaignState s3 = FoldDir(hang_dir);
  size_t most_iterations = 0;
  for (const JobRecord* j : s3.JobsOf("baseline", JobPurpose::kBaseline)) {
    INFO(j->name);
    CHECK_FALSE(j->measured_at_time_limit);
    CHECK_FALSE(j->measurement.has_value());
    REQUIRE(j->failure.has_value());
    CHECK(j->failure->kind == FailureKind::kHang);
    const std::string log = Slurp(j->log_path);
    size_t n = 0;
    for (size_t at = log.find(" iteration "); at != std::string::npos; at = log.find(" iteration ", at + 1)) ++n;
    most_iterations = std::max(most_iterations, n);
  }
  CHECK(most_iterations >= 25);  // enough steady iterations to have been measured, were it not a hang
  fs::remove_all(dir.parent_path());
  fs::remove_all(short_dir.parent_path());
  fs::remove_all(hang_dir.parent_path());
}

TEST_CASE("campaigns in folders of the same name get distinct ids and the same results", "[e2e][identity]") {
  // Two campaigns named `camp` (in two parent folders): on a shared cluster their job names must
  // not collide, and nothing drawn at random may depend on the folder's name or the id.
  const fs::path a = FreshDir("identity_a").parent_path() / "camp";
  const fs::path b = FreshDir("identity_b").parent_path() / "camp";
  const fs::path c = FreshDir("identity_c").parent_path() / "zz";
  for (const auto& dir : {a, b, c}) REQUIRE(RunIt(dir, 0, kWorkflow, "").exit_code == 0);
  CampaignState sa = FoldDir(a), sb = FoldDir(b), sc = FoldDir(c);
  CHECK(sa.campaign_id.rfind("camp-", 0) == 0);
  CHECK(sa.campaign_id.size() == std::string("camp-").size() + 8);
  CHECK(sa.campaign_id != sb.campaign_id);
  for (const auto& ja : sa.jobs) {
    for (const auto& jb : sb.jobs) CHECK(ja.name != jb.name);
  }
  auto results = [](const fs::path& dir, const std::string& id) {
    std::string text = Slurp(dir / "RESULTS.md");
    for (size_t at; (at = text.find(id)) != std::string::npos;) text.replace(at, id.size(), "ID");
    return text;
  };
  CHECK(results(a, sa.campaign_id) == results(b, sb.campaign_id));
  CHECK(results(a, sa.campaign_id) == results(c, sc.campaign_id));
  CHECK(sa.leader_id == sc.leader_id);

  // Resuming with another id is refused, and changes nothing.
  const uint64_t before = sa.last_seq;
  CHECK(RunIt(a, 0, kWorkflow, "other").exit_code == 2);
  CHECK(FoldDir(a).last_seq == before);
  for (const auto& dir : {a, b, c}) fs::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace attune::e2e
