// The simulated log text against regular expressions written from Megatron's format strings
// (reference §3.2, §3.3, §4.5).
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "hardware.h"
#include "sim_launcher.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

// " [%Y-%m-%d %H:%M:%S.%f] iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per
// iteration (ms): {:.1f} | throughput per GPU (TFLOP/s/GPU): {:.1f} | learning rate: {:.6E} |
// global batch size: {:5d} | lm loss: {:.6E} | loss scale: {:.1f} | grad norm: {:.3f} | number
// of skipped iterations: {:3d} | number of nan iterations: {:3d} |"
const std::regex kIterationLine(
    R"(^ \[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\] iteration +(\d+)/ +(\d+) \|)"
    R"( consumed samples: +(\d+) \| elapsed time per iteration \(ms\): (\d+\.\d) \|)"
    R"( throughput per GPU \(TFLOP/s/GPU\): (\d+\.\d) \| learning rate: \d\.\d{6}E[+-]\d{2} \|)"
    R"( global batch size: +(\d+) \| lm loss: (\d\.\d{6}E[+-]\d{2}) \| loss scale: 1\.0 \|)"
    R"( grad norm: \d+\.\d{3} \| number of skipped iterations: +0 \| number of nan iterations: +0 \|$)");

const std::regex kMemoryLine(
    R"(^\[Rank \d+\] \(after \d+ iterations\) memory \(MB\) \| allocated: \d+\.\d{2} \|)"
    R"( max allocated: \d+\.\d{2} \| reserved: \d+\.\d{2} \| max reserved: \d+\.\d{2}$)");

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string RunLog(const Recipe& recipe, const std::string& name = "c-1-1") {
  testing::TempDir dir;
  auto cluster = ParseClusterConfig({{"gpu", "H100"}, {"nodes", 2}, {"noise_cv", 0.02}}, 7);
  REQUIRE(cluster.ok());
  SimLauncher launcher(*cluster, dir.str() + "/sim");
  REQUIRE(launcher.Submit(testing::Spec(name, recipe, dir.str())).ok());
  auto status = launcher.Poll(name);
  REQUIRE(status.ok());
  CHECK(status->state == JobState::kSucceeded);
  auto log = launcher.ReadLog(name);
  REQUIRE(log.ok());
  return *log;
}

TEST_CASE("every iteration line matches Megatron's training_log format", "[sim][log]") {
  std::string log = RunLog(testing::SmallGpt());
  std::vector<int> iterations;
  for (const auto& line : Lines(log)) {
    if (line.find(" iteration ") == std::string::npos || line.find("consumed samples") == std::string::npos) continue;
    std::smatch m;
    INFO(line);
    REQUIRE(std::regex_match(line, m, kIterationLine));
    iterations.push_back(std::stoi(m[1]));
    CHECK(m[2] == "50");
    CHECK(std::stoll(m[3]) == 64LL * std::stoi(m[1]));
    CHECK(m[6] == "64");
    CHECK(std::stod(m[4]) > 0);
  }
  // Printed after iteration 1 and every --log-interval (10) iterations.
  CHECK(iterations == std::vector<int>{1, 10, 20, 30, 40, 50});
}

TEST_CASE("the log has the start-up markers, memory reports and the end marker", "[sim][log]") {
  std::string log = RunLog(testing::SmallGpt());
  auto lines = Lines(log);
  CHECK(lines.front().rfind("using world size: 8, data-parallel size: 4, context-parallel size: 1, "
                            "hierarchical context-parallel sizes: None, tensor-model-parallel size: 2, "
                            "pipeline-model-parallel size: 1", 0) == 0);
  CHECK(std::count(lines.begin(), lines.end(), "training ...") == 1);
  CHECK(std::count(lines.begin(), lines.end(), "------------------------ arguments ------------------------") == 1);
  int memory = 0;
  for (const auto& line : lines) {
    if (line.rfind("[Rank ", 0) == 0) {
      INFO(line);
      CHECK(std::regex_match(line, kMemoryLine));
      ++memory;
    }
  }
  // One line per TP rank (DP rank 0) after iteration 1 and again at the first log iteration.
  CHECK(memory == 4);
  CHECK(log.find("  tensor_model_parallel_size ...................... 2\n") != std::string::npos);
  CHECK(log.find(" > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)") != std::string::npos);
  CHECK(lines.back().rfind("[after training is done] datetime: 2026-01-01 ", 0) == 0);
}

TEST_CASE("the reported throughput is Megatron's model FLOPs over the logged step time", "[sim][log]") {
  std::string log = RunLog(testing::SmallGpt());
  std::smatch m;
  double ms = 0, tflops = 0;
  for (const auto& line : Lines(log)) {
    if (std::regex_match(line, m, kIterationLine) && m[1] == "50") {
      ms = std::stod(m[4]);
      tflops = std::stod(m[5]);
    }
  }
  REQUIRE(ms > 0);
  // FLOPs(B=64) = T·(6h·F·e·L + 6·(4h²)·L + 6hV) + S2·6·h·L with T = 64·2048, S2 = T·2048,
  // h = 2048, F = 8192, e = 2, L = 24, V = 50432.
  double T = 64.0 * 2048, h = 2048, L = 24, V = 50432;
  double flops = T * (6 * h * 8192 * 2 * L + 6 * 4 * h * h * L + 6 * h * V) + T * 2048 * 6 * h * L;
  CHECK(tflops == Approx(flops / (ms / 1000) / 1e12 / 8).epsilon(0.01));
}

TEST_CASE("a lever does not change the loss curve; the learning rate does", "[sim][log]") {
  auto losses = [](const std::string& log) {
    std::vector<std::string> out;
    std::smatch m;
    for (const auto& line : Lines(log)) {
      if (std::regex_match(line, m, kIterationLine)) out.push_back(m[7]);
    }
    return out;
  };
  auto base = losses(RunLog(testing::SmallGpt(), "a-1-1"));
  auto lever = losses(RunLog(testing::SmallGpt({{"--micro-batch-size", "4"},
                                                {"--tensor-model-parallel-size", "4"}}), "a-2-1"));
  auto lr = losses(RunLog(testing::SmallGpt({{"--lr", "1e-4"}}), "a-3-1"));
  auto seed = losses(RunLog(testing::SmallGpt({{"--seed", "7"}}), "a-4-1"));
  REQUIRE(base.size() == 6);
  CHECK(lever == base);
  CHECK(lr != base);
  CHECK(std::stod(seed[3]) != Approx(std::stod(base[3])).epsilon(0.02));
  CHECK(std::stod(base[5]) < std::stod(base[0]));  // the loss goes down
}

TEST_CASE("an MTP recipe logs each depth's loss after the main one, and the parser keeps lm loss", "[sim][log][mtp]") {
  std::string log = RunLog(testing::SmallGpt({{"--mtp-num-layers", "2"}}), "m-1-1");
  const std::regex mtp(R"( lm loss: (\d\.\d{6}E[+-]\d{2}) \| mtp_1 loss: (\d\.\d{6}E[+-]\d{2}) \|)"
                       R"( mtp_2 loss: (\d\.\d{6}E[+-]\d{2}) \| loss scale)");
  int lines = 0;
  for (const auto& line : Lines(log)) {
    std::smatch m;
    if (!std::regex_search(line, m, mtp)) continue;
    ++lines;
    CHECK(std::stod(m[2]) > std::stod(m[1]));
    CHECK(std::stod(m[3]) > std::stod(m[2]));
  }
  CHECK(lines == 6);
  LogParse parsed = testing::MegatronStackForSim()->ParseLog(log);
  CHECK(parsed.warnings.empty());
  REQUIRE(parsed.iterations.size() == 6);
  REQUIRE(parsed.iterations.front().loss);
  std::smatch first;
  REQUIRE(std::regex_search(log, first, mtp));
  CHECK(*parsed.iterations.front().loss == Approx(std::stod(first[1])).epsilon(1e-6));
  CHECK(parsed.iterations.front().extra.count("mtp_1 loss") == 1);
}

}  // namespace
}  // namespace attune::sim
