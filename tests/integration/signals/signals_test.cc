// SIGINT and SIGTERM pause an `attune run` campaign cleanly (issue 7): the real attune binary runs a
// real minigpt job through the local launcher; the tests signal it at the moments that matter and
// check what it recorded, which processes survived it, and that the same command resumes and
// finishes the campaign without starting any job twice or losing a charge.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

#include "signals_test_util.h"

namespace attune::signals_test {
namespace {

namespace fs = std::filesystem;

constexpr int kExitPaused = 3;
constexpr double kPauseDeadlineS = 30;    // from the signal to attune's exit
constexpr double kCampaignDeadlineS = 120;

std::string JobName(const std::string& dir, int attempt) {
  return fs::path(dir).filename().string() + "-baseline-" + std::to_string(attempt);
}

// Waits for the JobSubmitted of `job` on the engine's NDJSON progress, then for the job wrapper's
// start record (the job's pid and process group).
json WaitJobStarted(const Engine& e, const std::string& dir, const std::string& job) {
  auto submitted = WaitPrinted(e, [&](const json& ev) { return IsEvent(ev, "JobSubmitted", job); }, 90);
  INFO("engine stdout: " << e.out_path << "; stderr: " << ReadText(e.err_path));
  REQUIRE(submitted.has_value());
  json start;
  REQUIRE(WaitUntil([&] { return (start = StartRecord(dir, job)).contains("job_pid"); }, 15));
  return start;
}

// Waits for attune to exit after a stop signal; fails the test (killing it) past the deadline.
int WaitPaused(const Engine& e, double* seconds = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<int> code = WaitExit(e.pid, kPauseDeadlineS);
  if (!code) KillAndReap(e);
  INFO("attune did not exit within " << kPauseDeadlineS << " s of the stop signal");
  REQUIRE(code.has_value());
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return *code;
}

// The pause is the log's last event, recorded once, and says how the jobs were treated.
void CheckPausedLog(const std::vector<json>& events, const std::string& on_stop, int in_flight) {
  REQUIRE(!events.empty());
  const json& last = events.back();
  REQUIRE(last.value("type", "") == "CampaignPaused");
  CHECK(last["data"]["on_stop"] == on_stop);
  CHECK(last["data"]["jobs_in_flight"] == in_flight);
  CHECK_THAT(last["data"].value("reason", ""), Catch::Contains("stop"));
  CHECK(OfType(events, "CampaignPaused").size() == 1);
  CHECK(OfType(events, "CampaignFinished").empty());
}

// Resumes with the same command as a user would (the workflow is the recorded one).
void ResumeToTheEnd(const Scratch& s, const std::string& dir) {
  Outcome r = Attune(s, {"run", "--dir", dir, "--json"}, kCampaignDeadlineS);
  INFO("resume: " << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("CampaignResumed"));
}

TEST_CASE("SIGTERM while a job runs pauses with exit 3, leaves the job running, and the resumed "
          "campaign adopts it by name", "[signals]") {
  Scratch s;
  const std::string dir = s.Campaign("leave"), job = JobName(dir, 1);
  Engine e = Start(s, "run", RunArgs("signals-repeats1.yaml", dir));
  json start = WaitJobStarted(e, dir, job);
  const pid_t job_pid = start["job_pid"], wrapper_pid = start["wrapper_pid"];

  REQUIRE(::kill(e.pid, SIGTERM) == 0);
  double seconds = 0;
  CHECK(WaitPaused(e, &seconds) == kExitPaused);
  INFO("paused in " << seconds << " s");

  // The job outlived the engine: its process and its wrapper are alive, it has not ended.
  CHECK(ProcessAlive(job_pid));
  CHECK(ProcessAlive(wrapper_pid));
  CHECK_FALSE(HasEndRecord(dir, job));
  std::vector<json> events = Events(s, dir);
  CheckPausedLog(events, "leave_running", 1);
  CHECK(JobEvents(events, "JobFinished", job).empty());
  json status = Status(s, dir);
  CHECK(status["state"] == "paused");
  REQUIRE(status["jobs_in_flight"].size() == 1);
  CHECK(status["jobs_in_flight"][0]["job"] == job);
  CheckVerifies(s, dir);

  ResumeToTheEnd(s, dir);
  events = Events(s, dir);
  CHECK(OfType(events, "CampaignResumed").size() == 1);
  CHECK(OfType(events, "JobRequested").size() == 1);   // the left job was the only one needed
  CHECK(JobEvents(events, "JobSubmitted", job).size() == 1);  // adopted, not submitted again
  auto finished = JobEvents(events, "JobFinished", job);
  REQUIRE(finished.size() == 1);
  CHECK(finished[0]["data"]["cancelled_by_engine"] == false);
  CHECK(finished[0]["data"]["status"]["state"] == "succeeded");
  CHECK(finished[0]["data"]["measurement"].is_object());
  CHECK(Submissions(dir) == std::vector<std::string>{job});
  CHECK_FALSE(ProcessAlive(job_pid));
  CheckFinishedCampaign(s, dir);
}

TEST_CASE("Ctrl-C (SIGINT to the process group, twice) with --on-stop cancel cancels the job, "
          "records it, and leaves no process behind", "[signals]") {
  Scratch s;
  const std::string dir = s.Campaign("cancel"), job = JobName(dir, 1);
  Engine e = Start(s, "run", RunArgs("signals-repeats1.yaml", dir, {"--on-stop", "cancel"}));
  json start = WaitJobStarted(e, dir, job);
  const pid_t job_pid = start["job_pid"], wrapper_pid = start["wrapper_pid"];

  // A terminal's Ctrl-C goes to the foreground process group; an impatient user presses it twice.
  REQUIRE(::kill(-e.pid, SIGINT) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ::kill(-e.pid, SIGINT);
  CHECK(WaitPaused(e) == kExitPaused);

  CHECK_FALSE(ProcessAlive(job_pid));
  // The wrapper writes end.json when the job's leader is gone, then exits: allow it a moment.
  CHECK(WaitUntil([&] { return !ProcessAlive(wrapper_pid); }, 10));
  const std::string token = fs::path(dir).filename().string();
  std::vector<pid_t> orphans = ProcessesMentioning(token);
  INFO("processes still naming the campaign: " << orphans.size());
  CHECK(orphans.empty());
  std::vector<json> events = Events(s, dir);
  CheckPausedLog(events, "cancel", 0);
  auto cancelled = JobEvents(events, "JobFinished", job);
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0]["data"]["cancelled_by_engine"] == true);
  CHECK(cancelled[0]["data"]["status"]["state"] == "cancelled");
  CHECK(cancelled[0]["data"]["failure"]["kind"] == "cancelled");
  CHECK(cancelled[0]["data"]["measurement"].is_null());
  const double cancelled_charge = cancelled[0]["data"]["charged_gpu_hours"];
  CHECK(cancelled_charge > 0);  // it ran: its time is charged
  CHECK(Status(s, dir)["budget"]["charged_gpu_hours"].get<double>() == Approx(cancelled_charge));
  CheckVerifies(s, dir);

  // The cancelled run does not count as the baseline's run: the resumed step runs attempt 2.
  ResumeToTheEnd(s, dir);
  events = Events(s, dir);
  const std::string retry = JobName(dir, 2);
  CHECK(OfType(events, "JobRequested").size() == 2);
  auto finished = JobEvents(events, "JobFinished", retry);
  REQUIRE(finished.size() == 1);
  CHECK(finished[0]["data"]["cancelled_by_engine"] == false);
  CHECK(finished[0]["data"]["measurement"].is_object());
  CHECK(Submissions(dir) == std::vector<std::string>{job, retry});
  CheckFinishedCampaign(s, dir);
}

TEST_CASE("SIGTERM at start, before any job, pauses with exit 3 and the campaign resumes",
          "[signals]") {
  Scratch s;
  const std::string dir = s.Campaign("start");
  Engine e = Start(s, "run", RunArgs("signals-repeats1.yaml", dir));
  // The earliest moment a stop can be recorded: the handlers are installed (before the campaign
  // is opened and long before its first job is requested).
  const bool ready = WaitUntil([&] { return AttuneCatchesStopSignals(e.pid) || !ProcessAlive(e.pid); }, 30);
  REQUIRE(::kill(e.pid, SIGTERM) == 0);
  REQUIRE(ready);
  CHECK(WaitPaused(e) == kExitPaused);

  std::vector<json> events = Events(s, dir);
  CheckPausedLog(events, "leave_running", 0);
  CHECK(events.front()["type"] == "CampaignStarted");
  CHECK(OfType(events, "JobRequested").empty());
  CHECK(Submissions(dir).empty());
  CheckVerifies(s, dir);

  ResumeToTheEnd(s, dir);
  CheckFinishedCampaign(s, dir);
  CHECK(Submissions(dir) == std::vector<std::string>{JobName(dir, 1)});
}

TEST_CASE("a stop requested between two jobs pauses before the next job, and a storm of further "
          "signals while pausing corrupts nothing", "[signals]") {
  Scratch s;
  const std::string dir = s.Campaign("between"), first = JobName(dir, 1), second = JobName(dir, 2);
  Engine e = Start(s, "run", RunArgs("signals-repeats2.yaml", dir));
  WaitJobStarted(e, dir, first);
  // Freeze the engine while the first job runs to its end, then ask it to stop: when it wakes up
  // the first job is over and the second not yet requested.
  REQUIRE(::kill(e.pid, SIGSTOP) == 0);
  const bool ended = WaitUntil([&] { return HasEndRecord(dir, first); }, 90);
  REQUIRE(::kill(e.pid, SIGTERM) == 0);
  REQUIRE(::kill(e.pid, SIGCONT) == 0);
  REQUIRE(ended);
  // More SIGTERMs and SIGINTs, one every ~10 ms, until it exits.
  std::optional<int> code;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(kPauseDeadlineS);
  for (int i = 0; !(code = WaitExit(e.pid, 0)) && std::chrono::steady_clock::now() < give_up; ++i) {
    ::kill(e.pid, i % 2 ? SIGINT : SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!code) KillAndReap(e);
  REQUIRE(code.has_value());
  CHECK(*code == kExitPaused);

  std::vector<json> events = Events(s, dir);
  // Whether the engine recorded the first job's end before it paused depends on where it was
  // frozen; either way nothing new was started and the pause counts what is in flight.
  const int in_flight = JobEvents(events, "JobFinished", first).empty() ? 1 : 0;
  CheckPausedLog(events, "leave_running", in_flight);
  CHECK(JobEvents(events, "JobRequested", second).empty());
  CHECK(Submissions(dir) == std::vector<std::string>{first});
  CheckVerifies(s, dir);

  ResumeToTheEnd(s, dir);
  events = Events(s, dir);
  auto finished = JobEvents(events, "JobFinished", first);
  REQUIRE(finished.size() == 1);
  CHECK(finished[0]["data"]["status"]["state"] == "succeeded");
  CHECK(finished[0]["data"]["cancelled_by_engine"] == false);
  CHECK(JobEvents(events, "JobFinished", second).size() == 1);
  CHECK(Submissions(dir) == std::vector<std::string>{first, second});
  CheckFinishedCampaign(s, dir);
}

TEST_CASE("a job left running and adopted by the resumed campaign is cancelled by a stop with "
          "--on-stop cancel", "[signals]") {
  Scratch s;
  const std::string dir = s.Campaign("adopted"), job = JobName(dir, 1);
  Engine first = Start(s, "run", RunArgs("signals-repeats1.yaml", dir));
  json start = WaitJobStarted(first, dir, job);
  const pid_t job_pid = start["job_pid"], wrapper_pid = start["wrapper_pid"];
  REQUIRE(::kill(first.pid, SIGTERM) == 0);
  REQUIRE(WaitPaused(first) == kExitPaused);
  REQUIRE(ProcessAlive(job_pid));
  // Frozen, the job can neither end on its own before the stop below nor obey a SIGTERM: the
  // cancellation must escalate to SIGKILL after the launcher's grace_s.
  REQUIRE(::kill(-static_cast<pid_t>(start["pgid"]), SIGSTOP) == 0);

  // The resumed engine did not start this job's wrapper (it is not its child): it cancels it
  // through the launcher's records.
  Engine second = Start(s, "resume", {"run", "--dir", dir, "--json", "--on-stop", "cancel"});
  REQUIRE(WaitPrinted(second, [](const json& ev) { return IsEvent(ev, "CampaignResumed"); }, 60));
  REQUIRE(::kill(second.pid, SIGTERM) == 0);
  CHECK(WaitPaused(second) == kExitPaused);
  CHECK_FALSE(ProcessAlive(job_pid));
  CHECK(WaitUntil([&] { return !ProcessAlive(wrapper_pid); }, 10));
  CHECK(ProcessesMentioning(fs::path(dir).filename().string()).empty());

  std::vector<json> events = Events(s, dir);
  REQUIRE(!events.empty());
  REQUIRE(events.back().value("type", "") == "CampaignPaused");
  CHECK(events.back()["data"]["on_stop"] == "cancel");
  CHECK(events.back()["data"]["jobs_in_flight"] == 0);
  CHECK(OfType(events, "CampaignPaused").size() == 2);
  auto finished = JobEvents(events, "JobFinished", job);
  REQUIRE(finished.size() == 1);
  CHECK(finished[0]["data"]["cancelled_by_engine"] == true);
  CHECK(finished[0]["data"]["status"]["state"] == "cancelled");
  CheckVerifies(s, dir);

  ResumeToTheEnd(s, dir);
  CheckFinishedCampaign(s, dir);
  CHECK(Submissions(dir) == std::vector<std::string>{job, JobName(dir, 2)});
}

TEST_CASE("a cancellation the launcher cannot confirm still ends in a recorded pause, with the job "
          "in flight", "[signals]") {
  Scratch s;
  const std::string dir = s.Campaign("unconfirmed"), job = JobName(dir, 1);
  Engine e = Start(s, "run", RunArgs("signals-repeats1.yaml", dir, {"--on-stop", "cancel"}));
  json start = WaitJobStarted(e, dir, job);
  const pid_t wrapper_pid = start["wrapper_pid"];
  // A frozen job wrapper cannot act on the launcher's SIGTERM: the launcher gives up after
  // grace_s + 5 s (7 s with this workflow).
  REQUIRE(::kill(wrapper_pid, SIGSTOP) == 0);
  REQUIRE(::kill(e.pid, SIGTERM) == 0);
  const int code = WaitPaused(e);
  REQUIRE(::kill(wrapper_pid, SIGCONT) == 0);  // it now cancels the job (the SIGTERM was pending)
  CHECK(code == kExitPaused);
  CHECK_THAT(ReadText(e.err_path), Catch::Contains("the cancellation of job " + job + " is not confirmed"));
  std::vector<json> events = Events(s, dir);
  CheckPausedLog(events, "cancel", 1);
  CHECK(JobEvents(events, "JobFinished", job).empty());
  CheckVerifies(s, dir);

  CHECK(WaitUntil([&] { return HasEndRecord(dir, job); }, 30));
  ResumeToTheEnd(s, dir);
  events = Events(s, dir);
  auto finished = JobEvents(events, "JobFinished", job);
  REQUIRE(finished.size() == 1);
  // Whichever came first once the wrapper thawed: the job's own end or the cancellation.
  const std::string state = finished[0]["data"]["status"]["state"];
  CHECK((state == "succeeded" || state == "cancelled"));
  CHECK(Submissions(dir).front() == job);
  CheckFinishedCampaign(s, dir);
}

TEST_CASE("Ctrl-C on `attune run | tee` with --on-stop cancel records the pause although the "
          "pipe's reader died first", "[signals]") {
  Scratch s;
  const std::string dir = s.Campaign("tee"), job = JobName(dir, 1);
  Engine e = Start(s, "run", RunArgs("signals-repeats1.yaml", dir, {"--on-stop", "cancel"}), Piped::kTee);
  WaitJobStarted(e, dir, job);
  REQUIRE(::kill(-e.pid, SIGINT) == 0);
  // Progress lines written after tee is gone must not kill the engine (SIGPIPE) before it has
  // cancelled the job and recorded the pause.
  CHECK(WaitPaused(e) == kExitPaused);
  CHECK(WaitExit(e.tee_pid, 10).has_value());

  std::vector<json> events = Events(s, dir);
  CheckPausedLog(events, "cancel", 0);
  auto cancelled = JobEvents(events, "JobFinished", job);
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0]["data"]["cancelled_by_engine"] == true);
  CheckVerifies(s, dir);
  ResumeToTheEnd(s, dir);
  CheckFinishedCampaign(s, dir);
}

}  // namespace
}  // namespace attune::signals_test
