// The fold: every event type, jobs in flight, the budget ledger, the leader, and refusals of
// logs that cannot be folded.
#include <catch2/catch.hpp>

#include "campaign_fixtures.h"

namespace attune {
namespace {

using testing::LogBuilder;
using testing::TestMeasurement;
using testing::TestRecipe;
using nlohmann::json;

TEST_CASE("a profiled run is folded apart from the tuning runs, and its diagnosis is the leader's",
          "[campaign][profile]") {
  LogBuilder b;
  b.BaselineRun(1, 1000);
  b.Request("t-profile-baseline-1", "baseline", "profile").Finish("t-profile-baseline-1", 10, TestMeasurement(1));
  json bars = json::array({json{{"label", "rank 0"}, {"basis", "gpu_kernels"}, {"window_ns", 100},
                                {"compute_ns", 60}, {"exposed_communication_ns", 30}, {"other_idle_ns", 10}}});
  b.Add(events::kProfileAnalyzed,
        json{{"job", "t-profile-baseline-1"}, {"traces", 2}, {"bars", bars},
             {"diagnoses", json::array({json{{"kind", "communication"}, {"severity", 0.3}, {"evidence", "30%"}}})}});
  auto s = CampaignState::Fold(b.events());
  REQUIRE(s.ok());
  REQUIRE(s->profiles.size() == 1);
  CHECK(s->profiles[0].candidate == "baseline");
  CHECK(s->profiles[0].traces == 2);
  CHECK(s->profiles[0].bars.size() == 1);
  CHECK(s->profiles[0].bars[0].value("exposed_communication_ns", 0) == 30);
  // The profiled run's throughput is not a measurement of the baseline.
  CHECK(s->MeasurementsOf("baseline").size() == 1);
  CHECK(s->JobsOf("baseline", JobPurpose::kProfile).size() == 1);
  auto diagnosis = s->ProfileDiagnosisOf("baseline");
  REQUIRE(diagnosis.size() == 1);
  CHECK(diagnosis[0].kind == "communication");
  CHECK(diagnosis[0].evidence == "profile: 30%");
  CHECK(s->ProfileDiagnosisOf("c001").empty());
}

TEST_CASE("CampaignStarted sets the settings, plugins, baseline and budget", "[fold]") {
  CampaignState s = LogBuilder(2.5).Fold();
  CHECK(s.started);
  CHECK(s.campaign_id == "t");
  CHECK(s.seed == 7);
  CHECK(s.settings.job_time_limit_s == 600);
  CHECK(s.ledger.total == 2.5);
  CHECK(s.ledger.Left() == 2.5);
  REQUIRE(s.plugins.size() == 1);
  CHECK(s.plugins[0].name == "megatron");
  CHECK(s.baseline == TestRecipe());
  CHECK(s.cluster.device_type == "H100");
  CHECK(s.steps.size() == 3);
  CHECK(s.leader_id == "baseline");
}

TEST_CASE("steps are pending, then running, then finished with an outcome", "[fold]") {
  LogBuilder b;
  b.Add(events::kStepStarted, json{{"step", "baseline"}});
  CampaignState s = b.Fold();
  CHECK(s.FindStep("baseline")->started);
  CHECK_FALSE(s.FindStep("baseline")->finished);
  b.Add(events::kStepFinished, json{{"step", "baseline"}, {"outcome", "done"}});
  s = b.Fold();
  CHECK(s.FindStep("baseline")->finished);
  CHECK(s.FindStep("baseline")->outcome == "done");
  CHECK_FALSE(s.FindStep("tune")->started);
}

TEST_CASE("a requested job is in flight and reserves its worst case until it finishes", "[fold][budget]") {
  LogBuilder b;
  b.Request("t-baseline-1", "baseline", "baseline");
  CampaignState s = b.Fold();
  REQUIRE(s.InFlightJobs().size() == 1);
  CHECK(s.ledger.reserved == Approx(2 * 600.0 / 3600));
  CHECK(s.ledger.charged == 0);
  CHECK(s.ledger.Left() == Approx(1.0 - 1.0 / 3));

  b.Add(events::kJobSubmitted, json{{"job", "t-baseline-1"}, {"launcher_job_id", "42"}});
  s = b.Fold();
  CHECK(s.FindJob("t-baseline-1")->submitted);
  CHECK(s.FindJob("t-baseline-1")->launcher_job_id == "42");
  CHECK(s.InFlightJobs().size() == 1);

  b.Finish("t-baseline-1", 360, TestMeasurement(1000));
  s = b.Fold();
  CHECK(s.InFlightJobs().empty());
  CHECK(s.ledger.reserved == Approx(0).margin(1e-12));
  CHECK(s.ledger.charged == Approx(2 * 360.0 / 3600));  // devices × (end − start)
  CHECK(s.FindJob("t-baseline-1")->charged_total_after == Approx(0.2));
  CHECK(s.MeasurementOf("baseline")->tokens_per_s_per_gpu == 1000);
  CHECK(s.DiagnosisOf("baseline").at(0).kind == "memory_headroom");
}

TEST_CASE("the ledger fits a reservation only when it is within what remains", "[fold][budget]") {
  LedgerState l{1.0, 0.5, 0.2};
  CHECK(l.Left() == Approx(0.3));
  CHECK(l.Fits(0.3));
  CHECK_FALSE(l.Fits(0.31));
}

TEST_CASE("the representative measurement is the run with the median throughput", "[fold]") {
  CampaignState s = LogBuilder().BaselineRun(1, 1000).BaselineRun(2, 900).BaselineRun(3, 1100).Fold();
  CHECK(s.MeasurementsOf("baseline").size() == 3);
  CHECK(s.MeasurementOf("baseline")->tokens_per_s_per_gpu == 1000);
  CHECK(s.JobsOf("baseline", JobPurpose::kBaseline).size() == 3);
  CHECK(s.NextAttempt("baseline", JobPurpose::kBaseline, 0) == 4);
}

TEST_CASE("a job cancelled by the engine does not count as a result", "[fold]") {
  LogBuilder b;
  b.Request("t-baseline-1", "baseline", "baseline");
  Failure cancelled;
  cancelled.kind = FailureKind::kCancelled;
  b.Finish("t-baseline-1", 30, std::nullopt, cancelled, /*cancelled=*/true);
  CampaignState s = b.Fold();
  CHECK(s.JobsOf("baseline", JobPurpose::kBaseline).empty());
  CHECK(s.FailedJobs() == 0);
  CHECK(s.ledger.charged == Approx(2 * 30.0 / 3600));  // the time it ran is still charged
  CHECK(s.NextAttempt("baseline", JobPurpose::kBaseline, 0) == 2);
}

TEST_CASE("a job whose cancellation was requested is the engine's even if its end says otherwise", "[fold]") {
  // The launcher confirmed the cancellation only after the engine had stopped: the resumed engine
  // may record a plain cancelled (or even succeeded) end; the request in the log decides.
  LogBuilder b;
  b.Request("t-baseline-1", "baseline", "baseline");
  b.Add(events::kJobCancelRequested, json{{"job", "t-baseline-1"}});
  CampaignState s = b.Fold();
  CHECK(s.FindJob("t-baseline-1")->cancel_requested);
  CHECK(s.InFlightJobs().size() == 1);
  b.Finish("t-baseline-1", 30, TestMeasurement(1000), std::nullopt, /*cancelled=*/false);
  s = b.Fold();
  CHECK(s.FindJob("t-baseline-1")->cancelled_by_engine);
  CHECK(s.JobsOf("baseline", JobPurpose::kBaseline).empty());
  CHECK(s.ledger.charged == Approx(2 * 30.0 / 3600));
  CHECK(s.NextAttempt("baseline", JobPurpose::kBaseline, 0) == 2);
}

// A JobFinished as the job driver writes it for a job the launcher ended in `state` after
// `seconds` on 2 devices, with the measurement of its log (none when `tps` is absent).
json EndedJob(const std::string& job, JobState state, double seconds, std::optional<double> tps) {
  JobStatus st;
  st.name = job;
  st.state = state;
  st.start_time = 100;
  st.end_time = 100 + seconds;
  st.devices = 2;
  return json{{"job", job}, {"status", JobStatusToJson(st)}, {"charged_gpu_hours", st.DeviceHours()},
              {"measurement", tps ? MeasurementToJson(TestMeasurement(*tps)) : json()}, {"failure", json()},
              {"diagnosis", json::array()}, {"log_path", "/x/" + job + ".log"},
              {"cancelled_by_engine", false}};
}

// A job stopped early: the launcher's cancelled end, the measurement of the log the stop was
// decided on.
void FinishStopped(LogBuilder& b, const std::string& job, double seconds, double tps) {
  json d = EndedJob(job, JobState::kCancelled, seconds, tps);
  d["stopped_early"] = true;
  b.Add(events::kJobFinished, d);
}

TEST_CASE("a job stopped early is a measured run of its candidate, charged what it ran", "[fold][early_stop]") {
  LogBuilder b;
  b.Request("t-baseline-1", "baseline", "baseline");
  b.StopEarly("t-baseline-1", 25, 50, 1234);
  CampaignState s = b.Fold();
  const JobRecord* j = s.FindJob("t-baseline-1");
  REQUIRE(j);
  CHECK(j->stop_requested);
  CHECK(j->stop_log_bytes == 1234);
  CHECK(j->InFlight());  // until the launcher confirms the end
  CHECK(s.InFlightJobs().size() == 1);
  FinishStopped(b, "t-baseline-1", 40, 1000);
  s = b.Fold();
  j = s.FindJob("t-baseline-1");
  CHECK(j->stopped_early);
  CHECK_FALSE(j->cancelled_by_engine);
  CHECK(j->Counts());
  CHECK(s.MeasurementsOf("baseline").size() == 1);
  CHECK(s.ledger.charged == Approx(2 * 40.0 / 3600));
  CHECK(s.ledger.reserved == Approx(0).margin(1e-12));
  CHECK(s.NextAttempt("baseline", JobPurpose::kBaseline, 0) == 2);
}

TEST_CASE("a stop the log cannot have made is corruption", "[fold][early_stop]") {
  auto refused = [](const LogBuilder& b, const std::string& what) {
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kCorruption);
    CHECK_THAT(s.status().message(), Catch::Contains(what));
  };
  SECTION("of an unrequested job") {
    LogBuilder b;
    b.StopEarly("nobody", 20, 50);
    refused(b, "stop of an unrequested job");
  }
  SECTION("of a finished job") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline").Finish("j", 10, TestMeasurement(1));
    b.StopEarly("j", 20, 50);
    refused(b, "stop of finished job j");
  }
  SECTION("twice") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline").StopEarly("j", 20, 50).StopEarly("j", 21, 50);
    refused(b, "stopped twice");
  }
  SECTION("after the engine asked to cancel it") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline").Add(events::kJobCancelRequested, json{{"job", "j"}});
    b.StopEarly("j", 20, 50);
    refused(b, "whose cancellation was requested");
  }
  SECTION("with no log to judge") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline").StopEarly("j", 20, 50, 0);
    refused(b, "log_bytes must be > 0");
  }
  SECTION("a finish that says stopped early without the stop") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline");
    FinishStopped(b, "j", 10, 1000);
    refused(b, "stopped early without a JobStopRequested");
  }
}

// A job its time limit ended after its log had pinned the step time down: the launcher's
// timed-out end, a measurement, no failure.
json FinishedAtTimeLimit(const std::string& job, double seconds, std::optional<double> tps) {
  json d = EndedJob(job, JobState::kTimedOut, seconds, tps);
  d["measured_at_time_limit"] = true;
  return d;
}

TEST_CASE("a job measured at its time limit is a measured run of its candidate, charged what it ran",
          "[fold][time_limit]") {
  LogBuilder b;
  b.Request("t-baseline-1", "baseline", "baseline");
  b.Add(events::kJobFinished, FinishedAtTimeLimit("t-baseline-1", 60, 1000.0));
  CampaignState s = b.Fold();
  const JobRecord* j = s.FindJob("t-baseline-1");
  REQUIRE(j);
  CHECK(j->measured_at_time_limit);
  CHECK_FALSE(j->stopped_early);
  CHECK(j->state == JobState::kTimedOut);
  CHECK_FALSE(j->failure.has_value());
  CHECK(j->Counts());
  REQUIRE(s.MeasurementsOf("baseline").size() == 1);
  CHECK(s.MeasurementsOf("baseline")[0].tokens_per_s_per_gpu == Approx(1000));
  CHECK(s.ledger.charged == Approx(2 * 60.0 / 3600));
  CHECK(s.ledger.reserved == Approx(0).margin(1e-12));
}

TEST_CASE("a time-limit measurement the job driver cannot have written is corruption", "[fold][time_limit]") {
  auto refused = [](LogBuilder& b, const json& finished) {
    b.Add(events::kJobFinished, finished);
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kCorruption);
    CHECK_THAT(s.status().message(), Catch::Contains("measured at its time limit without a measurement"));
  };
  SECTION("without a measurement") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline");
    refused(b, FinishedAtTimeLimit("j", 60, std::nullopt));
  }
  SECTION("also stopped early") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline").StopEarly("j", 20, 50);
    json finished = FinishedAtTimeLimit("j", 60, 1000.0);
    finished["stopped_early"] = true;
    refused(b, finished);
  }
}

TEST_CASE("a baseline stopped early stands for its whole run in the derived time limit", "[fold][early_stop]") {
  CampaignSettings set;
  set.budget_gpu_hours = 10;
  set.job_time_limit_s = 3600;
  set.time_limit_factor = 3;
  SECTION("projected to its planned length") {
    LogBuilder b(set);
    b.Request("t-baseline-1", "baseline", "baseline").StopEarly("t-baseline-1", 20, 50);
    FinishStopped(b, "t-baseline-1", 100, 1000);  // 100 s for 20 of 50 iterations: 250 s whole
    CHECK(b.Fold().TimeLimitForNextJob() == Approx(3 * 250.0));
  }
  SECTION("a planned length below what it logged is not a shortening") {
    LogBuilder b(set);
    b.Request("t-baseline-1", "baseline", "baseline").StopEarly("t-baseline-1", 20, 10);
    FinishStopped(b, "t-baseline-1", 100, 1000);
    CHECK(b.Fold().TimeLimitForNextJob() == Approx(300.0));
  }
  SECTION("an unknown length leaves the configured limit") {
    LogBuilder b(set);
    b.Request("t-baseline-1", "baseline", "baseline").StopEarly("t-baseline-1", 20, nullptr);
    FinishStopped(b, "t-baseline-1", 100, 1000);
    CHECK(b.Fold().TimeLimitForNextJob() == Approx(3600.0));
    // A run that ended on its own still derives the limit.
    b.Request("t-baseline-2", "baseline", "baseline").Finish("t-baseline-2", 200, TestMeasurement(1000));
    CHECK(b.Fold().TimeLimitForNextJob() == Approx(600.0));
  }
  SECTION("a profiled run of the baseline (slowed by its profiler) does not stretch it") {
    LogBuilder b(set);
    b.Request("t-baseline-1", "baseline", "baseline").Finish("t-baseline-1", 200, TestMeasurement(1000));
    b.Request("t-profile-baseline-1", "baseline", "profile").Finish("t-profile-baseline-1", 900, TestMeasurement(300));
    CHECK(b.Fold().TimeLimitForNextJob() == Approx(600.0));
  }
}

TEST_CASE("a candidate goes from proposal through gate, job and rank to leader", "[fold]") {
  LogBuilder b;
  b.BaselineRun(1, 1000);
  b.Propose("c001", 1, "2");
  CampaignState s = b.Fold();
  REQUIRE(s.candidates.size() == 1);
  CHECK(s.candidates[0].outcome == Outcome::kPending);
  CHECK_FALSE(s.candidates[0].gated);
  CHECK(*s.RecipeOf("c001") == TestRecipe("2"));

  b.Gate("c001", true);
  b.Request("t-c001-1", "c001", "candidate", TestRecipe("2"));
  b.Finish("t-c001-1", 300, TestMeasurement(1200));
  b.Rank("c001", "new_leader", 1200, 1.2);
  b.Add(events::kLeaderChanged, json{{"from", "baseline"}, {"to", "c001"}, {"reason", "faster"}});
  s = b.Fold();
  const auto* c = s.FindCandidate("c001");
  CHECK(c->gate_pass);
  CHECK(c->rule_id == "ok");
  CHECK(c->jobs == std::vector<std::string>{"t-c001-1"});
  CHECK(c->ranked);
  CHECK(c->outcome == Outcome::kNewLeader);
  CHECK(*c->speedup_vs_leader == Approx(1.2));
  CHECK(s.leader_id == "c001");
  CHECK(s.PreviousLeader() == "baseline");
  CHECK(s.ledger.charged == Approx(0.2 + 2 * 300.0 / 3600));
}

TEST_CASE("a refused candidate records its rule and costs nothing", "[fold][gate]") {
  LogBuilder b;
  b.Propose("c001", 1, "2").Gate("c001", false, "obj.lr").Rank("c001", "refused");
  CampaignState s = b.Fold();
  CHECK(s.FindCandidate("c001")->outcome == Outcome::kRefused);
  CHECK(s.FindCandidate("c001")->rule_id == "obj.lr");
  CHECK(s.ledger.charged == 0);
  CHECK(s.jobs.empty());
}

TEST_CASE("a leader that fails the paired-loss check is reverted to the one before", "[fold][gate]") {
  LogBuilder b;
  b.Propose("c001", 1, "2").Add(events::kLeaderChanged, json{{"from", "baseline"}, {"to", "c001"}});
  b.Propose("c002", 2, "4", "c001").Add(events::kLeaderChanged, json{{"from", "c001"}, {"to", "c002"}});
  CHECK(b.Fold().PreviousLeader() == "c001");
  b.Add(events::kPairedLossChecked, json{{"candidate", "c002"}, {"pass", false}, {"tolerance", 0.02},
                                         {"compared", 3}, {"max_rel_diff", 0.1}, {"reason", "loss 1"}});
  b.Add(events::kLeaderChanged, json{{"from", "c002"}, {"to", "c001"}, {"reason", "paired_loss_mismatch"}});
  CampaignState s = b.Fold();
  CHECK(s.leader_id == "c001");
  CHECK(s.FindCandidate("c002")->outcome == Outcome::kPairedLossMismatch);
  CHECK(s.PreviousLeader() == "baseline");
  REQUIRE(s.paired_loss_checks.size() == 1);
  CHECK_FALSE(s.paired_loss_checks[0].pass);
}

TEST_CASE("agent failures count in a row until a proposal is recorded", "[fold]") {
  LogBuilder b;
  b.Add(events::kAgentFailed, json{{"index", 1}, {"error", "timeout"}});
  b.Add(events::kAgentFailed, json{{"index", 1}, {"error", "timeout"}});
  CHECK(b.Fold().consecutive_agent_failures == 2);
  b.Propose("c001", 1, "2");
  CampaignState s = b.Fold();
  CHECK(s.consecutive_agent_failures == 0);
  CHECK(s.agent_failures == 2);
  b.Add(events::kProposalRecorded, json{{"done", true}});
  CHECK(b.Fold().agent_done);
}

TEST_CASE("pause, resume, speedup, report and finish are folded", "[fold]") {
  LogBuilder b;
  b.Add(events::kCampaignPaused, json{{"reason", "stop requested"}});
  CHECK(b.Fold().paused);
  b.Add(events::kCampaignResumed, json{{"plugins", json::array()}});
  CHECK_FALSE(b.Fold().paused);
  b.Add(events::kSpeedupMeasured, json{{"leader", "baseline"}, {"ratios", {1.0, 1.1, 1.2}},
                                       {"median", 1.1}, {"min", 1.0}, {"max", 1.2}});
  b.Add(events::kReportWritten, json{{"files", {{"REPORT.md", "ff"}}}});
  b.Add(events::kCampaignFinished, json::object());
  CampaignState s = b.Fold();
  CHECK(s.speedup->median == 1.1);
  CHECK(s.report_files.at("REPORT.md") == "ff");
  CHECK(s.finished);
  CHECK(s.last_seq == b.events().size());
}

TEST_CASE("logs that cannot be folded are refused with the seq and the reason", "[fold]") {
  SECTION("an event before CampaignStarted") {
    EventRecord e;
    e.seq = 1;
    e.type = events::kStepStarted;
    auto s = CampaignState::Fold({e});
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Catch::Contains("comes before CampaignStarted"));
  }
  SECTION("an unknown event type") {
    LogBuilder b;
    b.Add("FutureThing", json::object());
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kCorruption);
    CHECK_THAT(s.status().message(), Catch::Contains("event 2 (FutureThing)"));
    CHECK_THAT(s.status().message(), Catch::Contains("newer attune"));
  }
  SECTION("a job finished twice") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline").Finish("j", 10, TestMeasurement(1)).Finish("j", 10, TestMeasurement(1));
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Catch::Contains("finished twice"));
  }
  SECTION("a cancellation of an unrequested or finished job") {
    LogBuilder b;
    b.Add(events::kJobCancelRequested, json{{"job", "nobody"}});
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Catch::Contains("cancellation of an unrequested job"));
    LogBuilder done;
    done.Request("j", "baseline", "baseline").Finish("j", 10, TestMeasurement(1));
    done.Add(events::kJobCancelRequested, json{{"job", "j"}});
    auto f = CampaignState::Fold(done.events());
    REQUIRE_FALSE(f.ok());
    CHECK_THAT(f.status().message(), Catch::Contains("cancellation of finished job j"));
  }
  SECTION("a verdict for an unknown candidate") {
    LogBuilder b;
    b.Gate("c009", true);
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Catch::Contains("unknown candidate"));
  }
  SECTION("a ranking with an outcome this attune does not know") {
    LogBuilder b;
    b.Propose("c001", 1, "2").Gate("c001", false, "obj.lr").Rank("c001", "sideways");
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kCorruption);
    CHECK_THAT(s.status().message(), Catch::Contains("(CandidateRanked)") &&
                                         Catch::Contains("unknown outcome 'sideways'"));
  }
  SECTION("an analysis of a job that is not a profiled job, or of one twice") {
    LogBuilder b;
    b.Request("j", "baseline", "baseline");
    b.Add(events::kProfileAnalyzed, json{{"job", "j"}, {"traces", 1}});
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Catch::Contains("not a profiled job"));
    LogBuilder twice;
    twice.Request("p", "baseline", "profile");
    twice.Add(events::kProfileAnalyzed, json{{"job", "p"}, {"error", "no trace"}});
    twice.Add(events::kProfileAnalyzed, json{{"job", "p"}, {"error", "no trace"}});
    auto t = CampaignState::Fold(twice.events());
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::Contains("analysed twice"));
  }
  SECTION("bars of the wrong type") {
    LogBuilder b;
    b.Request("p", "baseline", "profile");
    b.Add(events::kProfileAnalyzed, json{{"job", "p"}, {"bars", json::array({json{{"window_ns", "x"}}})}});
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kCorruption);
  }
  SECTION("a job with a purpose this attune does not know") {
    LogBuilder b;
    b.Request("j", "baseline", "warmup");
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kCorruption);
    CHECK_THAT(s.status().message(), Catch::Contains("(JobRequested)") &&
                                         Catch::Contains("unknown purpose 'warmup'"));
  }
  SECTION("a missing required field") {
    LogBuilder b;
    b.Add(events::kJobRequested, json{{"job", "j"}});
    auto s = CampaignState::Fold(b.events());
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(), Catch::Contains("event 2 (JobRequested)"));
  }
}

TEST_CASE("candidate ids are zero-padded and reservations scale with devices", "[fold]") {
  CHECK(CampaignState::CandidateId(3) == "c003");
  CHECK(CampaignState::CandidateId(120) == "c120");
  CampaignState s = LogBuilder(1.0, 3600).Fold();
  CHECK(s.ReservationFor(TestRecipe().topology.WorldSize()) == Approx(2.0));
}

}  // namespace
}  // namespace attune

namespace attune {

TEST_CASE("a recipe's first silent hang is the infrastructure's, its second the recipe's", "[fold][infra]") {
  auto failed = [](const char* signature, bool infrastructure) {
    JobRecord j;
    j.finished = true;
    Failure f;
    f.kind = std::string(signature) == "hang_no_progress" ? FailureKind::kHang : FailureKind::kNcclTimeout;
    f.signature = signature;
    f.infrastructure = infrastructure;
    j.failure = f;
    return j;
  };
  const JobRecord hang = failed("hang_no_progress", true);
  const JobRecord timeout = failed("nccl_watchdog_timeout", true);
  const JobRecord oom = failed("cuda_oom_pytorch", false);
  InfrastructureBlame blame;
  CHECK(blame(hang));
  CHECK(blame(timeout));  // other infrastructure failures never become the recipe's
  CHECK(blame(timeout));
  CHECK_FALSE(blame(hang));
  CHECK_FALSE(blame(hang));
  CHECK_FALSE(blame(oom));
  JobRecord measured;
  measured.finished = true;
  CHECK_FALSE(InfrastructureBlame()(measured));
  // Each recipe's runs start a count of their own.
  CHECK(InfrastructureBlame()(hang));
}

}  // namespace attune
