// Megatron's timer blocks: every --timing-log-option format, the 2021 inline form from real logs,
// attachment to iterations, and the diagnosis they support.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "log_parser.h"
#include "test_support.h"
#include "timers.h"

namespace attune::megatron {
namespace {

using testing::DenseRecipe;
using testing::H100;
using testing::ReadFile;
using testing::SharedLogs;
using testing::Stack;

// An iteration line as current Megatron prints it.
std::string Iteration(int it, double ms) {
  char buf[400];
  std::snprintf(buf, sizeof(buf),
                " [2026-08-22 12:00:%02d.000000] iteration %8d/     100 | consumed samples: %12d | "
                "elapsed time per iteration (ms): %.1f | learning rate: 1.000000E-04 | global batch "
                "size:    64 | lm loss: 1.050000E+01 | loss scale: 1.0 | grad norm: 1.000 | number of "
                "skipped iterations:   0 | number of nan iterations:   0 |\n",
                it % 60, it, it * 64, ms);
  return buf;
}

// One timer line as Timers._get_global_min_max_time_string writes it: name + ' ' padded with
// dots to 48 columns.
std::string MinMax(const std::string& name, double lo, double hi) {
  std::string padded = name + " ";
  if (padded.size() < 48) padded += std::string(48 - padded.size(), '.');
  char buf[200];
  std::snprintf(buf, sizeof(buf), "    %s: (%.2f, %.2f)\n", padded.c_str(), lo, hi);
  return buf;
}

std::string Max(const std::string& name, double v) {
  std::string padded = name + " ";
  if (padded.size() < 48) padded += std::string(48 - padded.size(), '.');
  char buf[200];
  std::snprintf(buf, sizeof(buf), "    %s: %.2f\n", padded.c_str(), v);
  return buf;
}

// A step of 1000 ms: all-grads-sync 150, forward-recv 100 + backward-send-forward-recv 50.
std::string MinMaxLog(int records) {
  std::string log;
  for (int i = 1; i <= records; ++i) {
    log += Iteration(10 * i, 1000.0);
    log += "(min, max) time across ranks (ms):\n";
    log += MinMax("forward-backward", 700.0, 840.0);
    log += MinMax("forward-recv", 80.0, 100.0);
    log += MinMax("backward-send-forward-recv", 10.0, 50.0);
    log += MinMax("all-grads-sync", 120.0, 150.0);
    log += MinMax("optimizer", 30.0, 31.0);
  }
  return log;
}

TEST_CASE("minmax timer blocks are read and attached to the iteration before them", "[megatron][timers]") {
  std::string log = MinMaxLog(2);
  auto blocks = ParseTimerBlocks(log);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].format == TimerFormat::kMinMax);
  CHECK(blocks[0].timers.size() == 5);
  CHECK(blocks[0].timers.at("forward-backward").min_ms == Approx(700.0));
  CHECK(blocks[0].timers.at("forward-backward").max_ms == Approx(840.0));
  LogParse parse = Stack().ParseLog(log);
  REQUIRE(parse.iterations.size() == 2);
  CHECK(parse.iterations[1].extra.at("timer:all-grads-sync") == Approx(150.0));
  CHECK(parse.iterations[1].extra.at("timer_min:all-grads-sync") == Approx(120.0));
  auto b = BreakdownOf(parse.iterations[1]);
  REQUIRE(b);
  CHECK(b->gradient_comm_ms == Approx(150.0));
  CHECK(b->pipeline_wait_ms == Approx(150.0));
  CHECK(*b->forward_backward_spread == Approx(840.0 / 700.0));
}

TEST_CASE("max and all-ranks timer blocks", "[megatron][timers]") {
  std::string log = Iteration(10, 500.0) + "max time across ranks (ms):\n" +
                    Max("forward-backward", 400.0) + Max("all-grads-sync", 60.0) +
                    Iteration(20, 500.0) + "times across ranks (ms):\n  forward-backward:\n" +
                    "     rank  0: 390.00\n     rank  1: 410.00\n  all-grads-sync:\n" +
                    "     rank  0: 70.00\n     rank  1: 50.00\n" + Iteration(30, 500.0);
  auto blocks = ParseTimerBlocks(log);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].format == TimerFormat::kMax);
  CHECK(blocks[0].timers.at("all-grads-sync").max_ms == Approx(60.0));
  CHECK(blocks[1].format == TimerFormat::kAllRanks);
  const TimerReading& fb = blocks[1].timers.at("forward-backward");
  CHECK(fb.ranks.size() == 2);
  CHECK(fb.min_ms == Approx(390.0));
  CHECK(fb.max_ms == Approx(410.0));
  LogParse parse = Stack().ParseLog(log);
  REQUIRE(parse.iterations.size() == 3);
  CHECK(parse.iterations[0].extra.at("timer:all-grads-sync") == Approx(60.0));
  CHECK(parse.iterations[1].extra.at("timer:all-grads-sync") == Approx(70.0));
  CHECK(parse.iterations[1].extra.at("timer_min:all-grads-sync") == Approx(50.0));
  CHECK(parse.iterations[2].extra.count("timer:all-grads-sync") == 0);
}

TEST_CASE("2021 inline timer lines from a real log", "[megatron][timers]") {
  LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/megatron_iter_008.log"));
  // megatron_iter_008.log: the line after iteration 20 reads "forward-recv: 127.53 |
  // backward-send: 0.67 | backward-send-forward-recv: 4.76 | backward-params-all-reduce: 42.96 |
  // backward-embedding-all-reduce: 415.87"; the step took 1354.9 ms.
  const IterationSample* it20 = nullptr;
  for (const auto& s : parse.iterations) {
    if (s.iteration == 20) it20 = &s;
  }
  REQUIRE(it20);
  auto b = BreakdownOf(*it20);
  REQUIRE(b);
  CHECK(b->pipeline_wait_ms == Approx(127.53 + 0.67 + 4.76));
  CHECK(b->gradient_comm_ms == Approx(42.96 + 415.87));
  CHECK(b->step_ms == Approx(1354.9));
}

TEST_CASE("a hard-wrapped inline timer record from a real log", "[megatron][timers]") {
  // megatron_iter_016.log wraps "time (ms) | forward-compute: 92.25 | forward-recv: 65.68 | ..."
  // over six lines, with "backward-send-forward-recv:" and its value 4.29 split apart.
  LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/megatron_iter_016.log"));
  REQUIRE(parse.iterations.size() == 1);
  const auto& extra = parse.iterations[0].extra;
  CHECK(extra.at("timer:forward-recv") == Approx(65.68));
  CHECK(extra.at("timer:backward-send-forward-recv") == Approx(4.29));
  CHECK(extra.at("timer:backward-embedding-all-reduce") == Approx(204.76));
  CHECK(extra.at("timer:batch-generator") == Approx(2.70));
  CHECK(extra.at("timer:optimizer") == Approx(42.31));
}

TEST_CASE("timers diagnose exposed gradient communication and pipeline waits", "[megatron][timers]") {
  LogParse parse = Stack().ParseLog(MinMaxLog(4));
  TimerDiagnosis d = DiagnoseTimers(parse);
  CHECK(d.have_timers);
  CHECK(d.have_pipeline_timers);
  REQUIRE(d.diagnoses.size() == 2);
  CHECK(d.diagnoses[0].kind == "communication");
  CHECK(d.diagnoses[0].severity == Approx(0.15));
  CHECK_THAT(d.diagnoses[0].evidence, Catch::Contains("all-grads-sync 150.0 of 1000.0 ms"));
  CHECK_THAT(d.diagnoses[0].evidence, Catch::Contains("median share over 3 logged intervals"));
  CHECK(d.diagnoses[1].kind == "pipeline_bubble");
  CHECK(d.diagnoses[1].severity == Approx(0.15));
  CHECK_THAT(d.diagnoses[1].evidence, Catch::Contains("forward-backward differs 1.20x"));
}

TEST_CASE("measured pipeline waits replace the recipe's bubble formula", "[megatron][timers]") {
  Measurement m;
  m.step_time_s = 1.0;
  auto by_kind = [](const std::vector<Diagnosis>& all, const std::string& kind) {
    std::vector<Diagnosis> out;
    for (const auto& x : all) {
      if (x.kind == kind) out.push_back(x);
    }
    return out;
  };
  // PP 2 with 4 micro-batches per replica (GBS 16 over DP 4): the formula says (2-1)/4.
  Recipe recipe = testing::With(DenseRecipe(), "--global-batch-size", "16");
  auto without = by_kind(Stack().Diagnose(recipe, m, LogParse{}, H100()), "pipeline_bubble");
  REQUIRE(without.size() == 1);
  CHECK_THAT(without[0].evidence, Catch::Contains("(PP-1)/(M*VPP)"));
  auto with_timers = Stack().Diagnose(recipe, m, Stack().ParseLog(MinMaxLog(4)), H100());
  auto bubbles = by_kind(with_timers, "pipeline_bubble");
  REQUIRE(bubbles.size() == 1);
  CHECK_THAT(bubbles[0].evidence, Catch::Contains("pipeline send/recv waits"));
  auto comm = by_kind(with_timers, "communication");
  REQUIRE(comm.size() == 1);  // the recipe-based guesses are not added on top
  CHECK_THAT(comm[0].evidence, Catch::Contains("all-grads-sync"));
}

TEST_CASE("attune megatron timers: usage, bad paths and JSON", "[megatron][timers]") {
  std::ostringstream out, err;
  CHECK(RunTimersCommand({}, out, err) == 2);
  CHECK_THAT(err.str(), Catch::Contains("LOG is required"));
  err.str("");
  CHECK(RunTimersCommand({"/nonexistent/log.txt"}, out, err) == 2);
  CHECK_THAT(err.str(), Catch::Contains("cannot read"));
  auto path = std::filesystem::temp_directory_path() / "attune_timers_test.log";
  {
    std::ofstream f(path);
    f << MinMaxLog(3);
  }
  std::ostringstream json_out;
  REQUIRE(RunTimersCommand({path.string(), "--json"}, json_out, err) == 0);
  auto j = nlohmann::json::parse(json_out.str());
  CHECK(j["format"] == "minmax");
  CHECK(j["iterations"].size() == 3);
  CHECK(j["iterations"][0]["gradient_comm_ms"] == Approx(150.0));
  CHECK(j["diagnoses"].size() == 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace attune::megatron
