// Copyright attune authors.
//
// The job wrapper run standalone (as `attune local job-exec` would be): usage errors, records, and the
// guarantee that one record runs its job at most once.

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "job_wrapper.h"
#include "local_test_util.h"

namespace attune::local::testing {
namespace {

int RunWrapper(const std::string& args) {
  int status = std::system((std::string(LOCAL_JOBWRAP_RUNNER) + " job-exec " + args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE("the wrapper parses its arguments and refuses bad ones", "[jobwrap]") {
  auto parsed = jobwrap::ParseWrapperArgs(
      {"--record", "/r", "--time-limit=30", "--grace", "2", "--", "prog", "--flag", "--"});
  REQUIRE(parsed.ok());
  CHECK(parsed->record_dir == "/r");
  CHECK(parsed->time_limit_s == 30);
  CHECK(parsed->grace_s == 2);
  CHECK(parsed->argv == std::vector<std::string>{"prog", "--flag", "--"});
  CHECK_THAT(jobwrap::ParseWrapperArgs({"--", "prog"}).status().message(),
             Catch::Contains("--record DIR is required"));
  CHECK_THAT(jobwrap::ParseWrapperArgs({"--record", "/r", "--time-limit", "x", "--", "p"})
                 .status().message(),
             Catch::Contains("expected a number of seconds"));
  CHECK_THAT(jobwrap::ParseWrapperArgs({"--record", "/r"}).status().message(),
             Catch::Contains("missing the job's command"));
  CHECK(RunWrapper("--bogus 1 -- true 2>/dev/null") == jobwrap::kExitUsage);
}

TEST_CASE("the wrapper records start and end and returns the job's status", "[jobwrap]") {
  ScratchDir dir;
  std::string record = dir.File("rec");
  CHECK(RunWrapper("--record " + record + " --log " + dir.File("log") +
                   " -- /bin/sh -c 'echo out; exit 4'") == 4);
  auto start = nlohmann::json::parse(ReadText(record + "/start.json"));
  auto end = nlohmann::json::parse(ReadText(record + "/end.json"));
  CHECK(start["argv"][0] == "/bin/sh");
  CHECK(end["state"] == "failed");
  CHECK(end["exit_code"] == 4);
  CHECK(end["end_time"].get<double>() >= start["start_time"].get<double>());
  CHECK_THAT(ReadText(dir.File("log")), Catch::Contains("out"));
}

TEST_CASE("a record that already ran is never run again", "[jobwrap]") {
  ScratchDir dir;
  std::string record = dir.File("rec");
  std::string counter = dir.File("runs");
  std::string cmd = "--record " + record + " -- /bin/sh -c 'echo run >> " + counter + "'";
  CHECK(RunWrapper(cmd) == 0);
  CHECK(RunWrapper(cmd + " 2>/dev/null") == jobwrap::kExitRecordBusy);
  CHECK(CountLines(counter) == 1);
}

TEST_CASE("a program that cannot be executed is recorded as a failure with the reason",
          "[jobwrap]") {
  ScratchDir dir;
  std::string record = dir.File("rec");
  CHECK(RunWrapper("--record " + record + " --log " + dir.File("log") +
                   " -- /nonexistent/prog") == 127);
  auto end = nlohmann::json::parse(ReadText(record + "/end.json"));
  CHECK(end["state"] == "failed");
  CHECK_THAT(end["reason"].get<std::string>(), Catch::Contains("cannot execute '/nonexistent/prog'"));
}

}  // namespace
}  // namespace attune::local::testing
