// The shared line normaliser (attune/support/log_lines.h), one shape of real multi-process output
// per case: what is peeled, what is kept, and which rank or process each record came from.
#include <catch2/catch.hpp>

#include "attune/support/log_lines.h"

namespace attune::support {
namespace {

std::vector<std::string> Texts(const std::vector<LogLine>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text);
  return out;
}

TEST_CASE("srun --label prefixes are peeled into ranks, blank labelled lines are blank", "[support][log]") {
  auto lines = SplitLogLines(
      "0: iteration 10/100 | elapsed time per iteration (ms): 1.0 |\n"
      "3: \n"
      "12: NCCL WARN NET/IB : Got completion with error 12\n"
      " 7: Traceback (most recent call last):\n");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rank == 0);
  CHECK(lines[0].text.rfind("iteration 10/100", 0) == 0);
  CHECK(lines[1].rank == 3);
  CHECK(lines[1].text.empty());
  CHECK(lines[2].rank == 12);
  CHECK(lines[2].text == "NCCL WARN NET/IB : Got completion with error 12");
  CHECK(lines[2].Process() == "rank 12");
  CHECK(lines[3].rank == 7);
  CHECK(lines[3].text == "Traceback (most recent call last):");
  CHECK(lines[3].number == 4);
}

TEST_CASE("Ray actor prefixes, Markdown quotes and repeat counts", "[support][log]") {
  auto lines = SplitLogLines(
      "> (MegatronTrainRayActor pid=4242, ip=10.0.0.1) [2026-01-02 03:04:05] model.py:649 - step 3: {'train/loss': 1.5}\n"
      "(RolloutManager pid=77) perf 3: {'perf/rollout_time': 12.5} [repeated 7x across cluster]\n"
      "(raylet, ip=10.0.0.2) A worker died or was killed while executing a task\n"
      "(pid=99) plain\n");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].actor == "MegatronTrainRayActor");
  CHECK(lines[0].Process() == "MegatronTrainRayActor pid=4242, ip=10.0.0.1");
  REQUIRE(lines[0].timestamp_s);
  CHECK(*lines[0].timestamp_s == Approx(1767323045.0));  // 2026-01-02 03:04:05 UTC
  CHECK(lines[0].text == "model.py:649 - step 3: {'train/loss': 1.5}");
  CHECK(lines[1].repeat == 7);
  CHECK(lines[1].text == "perf 3: {'perf/rollout_time': 12.5}");
  CHECK(lines[1].actor == "RolloutManager");
  CHECK(lines[2].actor == "raylet");
  CHECK(lines[2].text == "A worker died or was killed while executing a task");
  CHECK(lines[3].actor.empty());
  CHECK(lines[3].source == "(pid=99)");
  CHECK(lines[3].text == "plain");
}

TEST_CASE("wrapper loggers: Python logging, [Rank N]:, NeMo's logger, INFO:root:, bar-separated fields", "[support][log]") {
  auto lines = SplitLogLines(
      "2025-03-01 10:00:02,456 - megatron - INFO - [Rank 5]: iteration 2/10 |\n"
      "[2025-03-01 10:00:03,000] [INFO] [Rank 0]: hello\n"
      "[NeMo I 2025-01-02 03:04:05 nemo_logging:349] Training epoch 0, iteration 1/9\n"
      "INFO:root:step 4 | epoch 0 | loss 1.5\n"
      "2025-09-04 10:00:00 | INFO | nemo_automodel.recipes.llm.train_ft | step 5 | epoch 0 | loss 1.2\n"
      "[rank3]:[E1203 10:00:00.123 ProcessGroupNCCL.cpp:1] boom\n"
      "[default7]: x\n");
  auto t = Texts(lines);
  CHECK(t[0] == "iteration 2/10 |");
  CHECK(lines[0].rank == 5);
  REQUIRE(lines[0].timestamp_s);
  CHECK(t[1] == "hello");
  CHECK(lines[1].rank == 0);
  CHECK(t[2] == "Training epoch 0, iteration 1/9");
  CHECK(lines[2].timestamp_s.has_value());
  CHECK(t[3] == "step 4 | epoch 0 | loss 1.5");
  CHECK(t[4] == "step 5 | epoch 0 | loss 1.2");
  CHECK(lines[4].timestamp_s.has_value());
  CHECK(t[5] == "[E1203 10:00:00.123 ProcessGroupNCCL.cpp:1] boom");
  CHECK(lines[5].rank == 3);
  CHECK(t[6] == "x");
  CHECK(lines[6].rank == 7);
}

TEST_CASE("records glued onto one line by several processes are split, each with its rank", "[support][log]") {
  auto lines = SplitLogLines(
      "terminate called after throwing an instance of 'c10::DistBackendError'"
      "terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "[rank1]:[E ProcessGroupNCCL.cpp:1] a[rank2]:[E ProcessGroupNCCL.cpp:1] Watchdog caught collective operation timeout\n"
      "  what():  [PG 0 Rank 3] Process group watchdog thread terminated\n");
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].text == "terminate called after throwing an instance of 'c10::DistBackendError'");
  CHECK(lines[1].text == "terminate called after throwing an instance of 'c10::DistBackendError'");
  CHECK(lines[0].number == 1);
  CHECK(lines[1].number == 1);
  CHECK(lines[2].rank == 1);
  CHECK(lines[2].text == "[E ProcessGroupNCCL.cpp:1] a");
  CHECK(lines[3].rank == 2);
  CHECK(lines[3].raw == "[rank2]:[E ProcessGroupNCCL.cpp:1] Watchdog caught collective operation timeout");
  CHECK(lines[3].number == 2);
  CHECK(lines[4].text == "what():  [PG 0 Rank 3] Process group watchdog thread terminated");
  CHECK(lines[4].number == 3);
}

TEST_CASE("a logger's line glued after a progress bar is a record of its own", "[support][log]") {
  auto lines = SplitLogLines(
      "Training:  59%|#####9    | 38/64 [00:15<00:08,  3.07step/s, loss=8.2841]2026-07-07 22:20:52 | INFO | __main__ | epoch=0 step=38\n"
      "[2026-07-07 22:20:53] [x]2026-07-07 is not glued\n");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].text == "Training:  59%|#####9    | 38/64 [00:15<00:08,  3.07step/s, loss=8.2841]");
  CHECK_FALSE(lines[0].timestamp_s.has_value());
  CHECK(lines[1].text == "epoch=0 step=38");
  CHECK(lines[1].number == 1);
  REQUIRE(lines[1].timestamp_s);
  CHECK(lines[2].text == "[x]2026-07-07 is not glued");
}

TEST_CASE("Ray records joined on one line by a paste are split at each actor tag", "[support][log]") {
  auto lines = SplitLogLines(
      "(RolloutManager pid=17) retrying (attempt 33/60) (RolloutManager pid=17) [2025-12-19 13:00:58] http_utils.py:153 - Error: 503 (pid=9, ip=10.0.0.1) x\n"
      "ray.exceptions.RayTaskError(OutOfMemoryError): ray::Actor.train() (pid=2025282, ip=10.252.197.29, actor_id=309d7b) kept whole\n");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].text == "retrying (attempt 33/60)");
  CHECK(lines[1].actor == "RolloutManager");
  CHECK(lines[1].text == "http_utils.py:153 - Error: 503");
  REQUIRE(lines[1].timestamp_s);
  CHECK(lines[2].source == "(pid=9, ip=10.0.0.1)");
  CHECK(lines[2].text == "x");
  CHECK(lines[3].text.find("kept whole") != std::string::npos);
  CHECK(lines[3].number == 2);
}

TEST_CASE("carriage-return progress bars are one record per redraw on one physical line", "[support][log]") {
  auto lines = SplitLogLines("start\r\nEpoch 0:  10%|#  | 1/10\rEpoch 0:  20%|## | 2/10\r\n\x1b[32mdone\x1b[0m\n");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].number == 1);
  CHECK(lines[1].number == 2);
  CHECK(lines[2].number == 2);
  CHECK(lines[2].text == "Epoch 0:  20%|## | 2/10");
  CHECK(lines[3].number == 3);
  CHECK(lines[3].text == "done");
}

TEST_CASE("text that only looks like a prefix is kept", "[support][log]") {
  auto lines = SplitLogLines(
      "(see the docs) for more\n"
      "[Errno 2] No such file or directory\n"
      "12:30:00 started\n"
      "2025-13-45 10:00:00 is not a date\n");
  auto t = Texts(lines);
  CHECK(t[0] == "(see the docs) for more");
  CHECK(t[1] == "[Errno 2] No such file or directory");
  CHECK(t[2] == "12:30:00 started");
  CHECK(t[3] == "2025-13-45 10:00:00 is not a date");
  CHECK_FALSE(lines[3].timestamp_s.has_value());
  for (const auto& l : lines) CHECK_FALSE(l.rank.has_value());
}

}  // namespace
}  // namespace attune::support
