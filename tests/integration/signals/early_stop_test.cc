// The adaptive stop (measure.early_stop, issue 22) against the real attune binary, the local
// launcher and a real minigpt job: the engine reads the running job's log, records JobStopRequested
// once the step time is steady, stops the job, and judges it on the log as it stood at the decision
// — also when it is killed (kill -9) between the decision and asking the launcher to stop.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "signals_test_util.h"

namespace attune::signals_test {
namespace {

namespace fs = std::filesystem;

constexpr double kCampaignDeadlineS = 150;
constexpr int kPlannedIterations = 50;  // minigpt-steady.yaml's --train-iters

std::string BaselineJob(const std::string& dir) {
  return fs::path(dir).filename().string() + "-baseline-1";
}

// The highest "iteration N/" in a job's log.
int LastIteration(const std::string& log) {
  static const std::regex kIteration(R"(iteration\s+(\d+)/)");
  int last = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), kIteration); it != std::sregex_iterator(); ++it) {
    last = std::max(last, std::stoi((*it)[1].str()));
  }
  return last;
}

// The stop and the finish of the baseline job: one each, stopped early, measured on exactly the
// iterations the stop was decided on, ended well before its planned length.
void CheckStoppedEarly(const std::vector<json>& events, const std::string& dir) {
  const std::string job = BaselineJob(dir);
  auto stops = JobEvents(events, "JobStopRequested", job);
  auto finishes = JobEvents(events, "JobFinished", job);
  REQUIRE(stops.size() == 1);
  REQUIRE(finishes.size() == 1);
  const json& stop = stops[0]["data"];
  const json& fin = finishes[0]["data"];
  INFO("stop: " << stop.dump() << "\nfinish: " << fin.dump());
  CHECK(stop["reason"] == "steady");
  CHECK(stop["planned_iterations"] == kPlannedIterations);
  CHECK(stop["last_iteration"].get<int>() < kPlannedIterations);
  CHECK(stop["iterations_used"].get<int>() >= 8);
  CHECK(stop["relative_error"].get<double>() <= stop["target"].get<double>());
  CHECK(stop["target"] == 0.08);
  CHECK(fin["stopped_early"] == true);
  CHECK(fin["cancelled_by_engine"] == false);
  CHECK(fin["failure"].is_null());
  REQUIRE(fin["measurement"].is_object());
  // Judged on the log the decision saw, not on what the job printed before it was stopped.
  CHECK(fin["measurement"]["iterations_logged"] == stop["iterations_logged"]);
  CHECK(fin["measurement"]["iterations_used"] == stop["iterations_used"]);
  CHECK(fin["measurement"]["step_time_s"].get<double>() == Approx(stop["median_step_time_s"].get<double>()));
  CHECK(fin["charged_gpu_hours"].get<double>() > 0);
  // The job really stopped before its end: its whole log has fewer iterations than planned.
  const std::string log = ReadText(fin["log_path"].get<std::string>());
  INFO("job log:\n" << log.substr(log.size() > 2000 ? log.size() - 2000 : 0));
  CHECK(LastIteration(log) >= stop["last_iteration"].get<int>());
  CHECK(LastIteration(log) < kPlannedIterations);
}

TEST_CASE("a real job is stopped once its step time is steady and measured on what it logged",
          "[early_stop]") {
  Scratch s;
  const std::string dir = s.Campaign("steady");
  Outcome run = Attune(s, RunArgs("early-stop.yaml", dir), kCampaignDeadlineS);
  INFO("attune run: " << run.err);
  REQUIRE(run.code == 0);
  std::vector<json> events = Events(s, dir);
  CheckStoppedEarly(events, dir);
  CheckFinishedCampaign(s, dir);
  const std::string report = ReadText(dir + "/REPORT.md");
  CHECK_THAT(report, Catch::Contains("stopped early"));
}

TEST_CASE("killed between the stop's record and asking the launcher, the resumed campaign stops "
          "the same job and judges the same log", "[early_stop]") {
  Scratch s;
  const std::string dir = s.Campaign("crash");
  ::setenv("ATTUNE_CRASH_AT", "job.stop_requested", 1);
  Outcome crashed = Attune(s, RunArgs("early-stop.yaml", dir), kCampaignDeadlineS);
  ::unsetenv("ATTUNE_CRASH_AT");
  INFO("first run: " << crashed.err);
  REQUIRE(crashed.code == 128 + 9);  // SIGKILL at the crash point
  std::vector<json> events = Events(s, dir);
  const std::string job = BaselineJob(dir);
  REQUIRE(JobEvents(events, "JobStopRequested", job).size() == 1);
  CHECK(JobEvents(events, "JobFinished", job).empty());
  // The job outlived the engine and goes on printing iterations until the resumed engine stops it.
  Outcome resumed = Attune(s, {"run", "--dir", dir, "--json"}, kCampaignDeadlineS);
  INFO("resume: " << resumed.err);
  REQUIRE(resumed.code == 0);
  events = Events(s, dir);
  CheckStoppedEarly(events, dir);
  CHECK(Submissions(dir).size() == 1);  // stopped, never submitted again
  CheckFinishedCampaign(s, dir);
}

}  // namespace
}  // namespace attune::signals_test
