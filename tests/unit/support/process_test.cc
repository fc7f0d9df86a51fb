// The one process runner: exit codes, both streams, stdin, environment, working directory, the
// output cap, and a deadline that kills the whole process group.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "attune/support/process.h"

namespace attune::support {
namespace {

TEST_CASE("RunProcess captures both streams and the exit status", "[support][process]") {
  auto r = RunProcess({"bash", "-c", "echo out; echo err >&2; exit 7"});
  REQUIRE(r.ok());
  CHECK(r->exit_code == 7);
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  CHECK_FALSE(r->timed_out);
  CHECK(r->signal == 0);
}

TEST_CASE("a program that exits without reading its stdin does not kill the caller with SIGPIPE",
          "[support][process]") {
  // Default disposition, as in a test or a tool that does not ignore SIGPIPE (`attune run` does).
  auto previous = std::signal(SIGPIPE, SIG_DFL);
  ProcessOptions options;
  options.input = std::string(4 << 20, 'x');  // far more than a pipe holds
  for (int i = 0; i < 5; ++i) {
    auto r = RunProcess({"/bin/sh", "-c", "exit 3"}, options);
    REQUIRE(r.ok());
    CHECK(r->exit_code == 3);
  }
  std::signal(SIGPIPE, previous);
}

TEST_CASE("RunProcess feeds stdin, or /dev/null without input", "[support][process]") {
  ProcessOptions o;
  o.input = std::string(200000, 'x');  // more than a pipe buffer
  auto r = RunProcess({"wc", "-c"}, o);
  REQUIRE(r.ok());
  CHECK(r->out.find("200000") != std::string::npos);
  auto empty = RunProcess({"wc", "-c"});
  REQUIRE(empty.ok());
  CHECK(empty->out.find('0') != std::string::npos);
}

TEST_CASE("RunProcess sets, replaces or clears the environment and the working directory", "[support][process]") {
  ProcessOptions o;
  o.env = {{"ATTUNE_PROCESS_TEST", "a b"}};
  auto r = RunProcess({"bash", "-c", "printf '%s' \"$ATTUNE_PROCESS_TEST\"; printf ':%s' \"${HOME:-none}\""}, o);
  REQUIRE(r.ok());
  CHECK(r->out.rfind("a b:", 0) == 0);
  CHECK(r->out != "a b:none");  // HOME inherited
  o.clear_environment = true;
  o.env.push_back({"PATH", "/usr/bin:/bin"});
  r = RunProcess({"bash", "-c", "printf '%s:%s' \"$ATTUNE_PROCESS_TEST\" \"${HOME:-none}\""}, o);
  REQUIRE(r.ok());
  CHECK(r->out == "a b:none");
  ProcessOptions in_tmp;
  in_tmp.cwd = std::filesystem::temp_directory_path().string();
  r = RunProcess({"pwd"}, in_tmp);
  REQUIRE(r.ok());
  CHECK(r->out == std::filesystem::canonical(in_tmp.cwd).string() + "\n");
}

TEST_CASE("RunProcess keeps at most max_output bytes per stream and counts the rest", "[support][process]") {
  ProcessOptions o;
  o.max_output = 1000;
  auto r = RunProcess({"bash", "-c", "head -c 50000 /dev/zero | tr '\\0' x"}, o);
  REQUIRE(r.ok());
  CHECK(r->out.size() == 1000);
  CHECK(r->dropped == 49000);
  CHECK(r->exit_code == 0);
}

TEST_CASE("RunProcess kills the process group at the deadline", "[support][process]") {
  ProcessOptions o;
  o.timeout_s = 0.5;
  // A grandchild that holds the pipes open: the group kill must reach it too.
  auto start = std::chrono::steady_clock::now();
  auto r = RunProcess({"bash", "-c", "sleep 30 & sleep 30; echo never"}, o);
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  CHECK(r->exit_code == -1);
  CHECK(r->signal == SIGKILL);
  CHECK(r->out.empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("RunProcess says when a program cannot be started", "[support][process]") {
  auto r = RunProcess({"attune-no-such-program"});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kNotFound);
  CHECK_THAT(r.status().message(), Catch::Contains("attune-no-such-program"));
  CHECK_FALSE(RunProcess({}).ok());
}

}  // namespace
}  // namespace attune::support

namespace attune::support {
namespace {

TEST_CASE("RunProcess with kill_leftovers ends when the program exits", "[support][process]") {
  ProcessOptions o;
  o.timeout_s = 30;
  o.kill_leftovers = true;
  // A background child keeps stdout open; without kill_leftovers the run would last 20 s.
  auto r = RunProcess({"/bin/sh", "-c", "sleep 20 & echo started; exit 4"}, o);
  REQUIRE(r.ok());
  CHECK(r->out == "started\n");
  CHECK(r->exit_code == 4);
  CHECK_FALSE(r->timed_out);
  CHECK(r->seconds < 10);
  // A program that outlives the deadline is still killed, with its children.
  o.timeout_s = 1;
  auto hung = RunProcess({"/bin/sh", "-c", "sleep 30 & sleep 30; echo never"}, o);
  REQUIRE(hung.ok());
  CHECK(hung->timed_out);
  CHECK(hung->out.empty());
  CHECK(hung->seconds < 10);
}

TEST_CASE("FindExecutable looks on PATH, then in the given folders", "[support][process]") {
  const std::string sh = FindExecutable("sh");
  CHECK(sh.rfind('/', 0) == 0);
  CHECK(sh.size() > 3);
  CHECK(sh.substr(sh.size() - 3) == "/sh");
  CHECK(FindExecutable("attune-no-such-program").empty());
  CHECK(FindExecutable("").empty());
  const auto dir = std::filesystem::temp_directory_path() / ("attune-find-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto tool = dir / "attune-test-tool";
  { std::ofstream(tool) << "#!/bin/sh\n"; }
  CHECK(FindExecutable("attune-test-tool", {dir.string()}).empty());  // not executable yet
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  CHECK(FindExecutable("attune-test-tool", {"/nonexistent", dir.string()}) == tool.string());
  CHECK(FindExecutable(tool.string()) == tool.string());  // a path is taken as it is
  CHECK(FindExecutable((dir / "missing").string()).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attune::support
