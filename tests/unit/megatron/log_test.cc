// The log parser on every real Megatron fixture of the shared INDEX.csv (exact iterations, step
// times and losses), on synthetic edge cases, the measurement, triage and diagnosis.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "log_parser.h"
#include "test_support.h"

namespace attune::megatron {
namespace {

using testing::DenseRecipe;
using testing::H100;
using testing::ReadCsv;
using testing::ReadFile;
using testing::SharedLogs;
using testing::Stack;

std::vector<std::map<std::string, std::string>> Rows(const std::string& kind_prefix) {
  std::vector<std::map<std::string, std::string>> out;
  for (auto& row : ReadCsv(SharedLogs() + "/INDEX.csv")) {
    if (row["kind"].rfind(kind_prefix, 0) == 0) out.push_back(row);
  }
  return out;
}

TEST_CASE("every Megatron iteration fixture parses to the exact expected numbers", "[megatron][log][fixtures]") {
  auto rows = Rows("iteration");
  REQUIRE(rows.size() >= 15);
  for (auto& row : rows) {
    INFO(row["file"]);
    auto expected = nlohmann::json::parse(row["expected"]);
    LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/" + row["file"]));
    REQUIRE(parse.iterations.size() == expected["iters"].size());
    CHECK(parse.training_started);
    for (size_t i = 0; i < parse.iterations.size(); ++i) {
      const auto& s = parse.iterations[i];
      INFO("record " << i << " at line " << s.line);
      CHECK(s.iteration == expected["iters"][i].get<int64_t>());
      CHECK(s.step_time_ms == Approx(expected["ms"][i].get<double>()).epsilon(1e-12));
      if (expected["loss"][i].is_null()) {
        CHECK_FALSE(s.loss.has_value());
      } else {
        REQUIRE(s.loss.has_value());
        CHECK(*s.loss == Approx(expected["loss"][i].get<double>()).epsilon(1e-12));
      }
    }
  }
}

struct MemoryRecord {
  int rank = 0;
  long after = 0;
  double allocated = 0, max_allocated = 0, reserved = 0, max_reserved = 0;
};

MemoryRecord ScanMemory(const std::string& text) {
  MemoryRecord m;
  size_t at = text.find("[Rank");
  REQUIRE(at != std::string::npos);
  int n = std::sscanf(text.c_str() + at,
                      "[Rank %d] (after %ld iterations) memory (MB) | allocated: %lf | max allocated: %lf | "
                      "reserved: %lf | max reserved: %lf",
                      &m.rank, &m.after, &m.allocated, &m.max_allocated, &m.reserved, &m.max_reserved);
  REQUIRE(n == 6);
  return m;
}

TEST_CASE("every memory fixture parses all ranks, including records glued on one line", "[megatron][log][fixtures]") {
  const std::map<std::string, size_t> ranks = {{"memory_001.log", 16}, {"memory_003.log", 2}};
  auto rows = Rows("memory");
  REQUIRE(rows.size() == ranks.size());
  for (auto& row : rows) {
    INFO(row["file"]);
    LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/" + row["file"]));
    CHECK(parse.memory.size() == ranks.at(row["file"]));
    MemoryRecord want = ScanMemory(row["expected"]);
    bool found = false;
    for (const auto& m : parse.memory) {
      if (m.rank != want.rank) continue;
      found = true;
      CHECK(m.after_iteration == want.after);
      CHECK(m.allocated_mb == Approx(want.allocated));
      CHECK(m.max_allocated_mb == Approx(want.max_allocated));
      CHECK(m.reserved_mb == Approx(want.reserved));
      CHECK(m.max_reserved_mb == Approx(want.max_reserved));
    }
    CHECK(found);
    CHECK(Stack().Triage(ReadFile(SharedLogs() + "/" + row["file"]), JobEnd{0, "succeeded", 60}).kind == FailureKind::kNone);
  }
}

TEST_CASE("every failure fixture is classified with its evidence line", "[megatron][triage][fixtures]") {
  const std::map<std::string, FailureKind> kinds = {
      {"failure_oom_003.log", FailureKind::kOom},          {"failure_oom_008.log", FailureKind::kHostOom},
      {"failure_nccl_error_002.log", FailureKind::kNcclError}, {"failure_nccl_error_003.log", FailureKind::kNcclError},
      {"failure_hang_001.log", FailureKind::kHang},         {"failure_hang_002.log", FailureKind::kHang},
      {"failure_hang_004.log", FailureKind::kHang},         {"failure_config_003.log", FailureKind::kConfigError}};
  auto rows = Rows("failure");
  REQUIRE(rows.size() == kinds.size());
  for (auto& row : rows) {
    INFO(row["file"]);
    std::string log = ReadFile(SharedLogs() + "/" + row["file"]);
    Failure f = Stack().Triage(log, JobEnd{-1, "failed", 0});
    CHECK(f.kind == kinds.at(row["file"]));
    CHECK(f.evidence == row["expected"]);
    CHECK(f.line > 0);
    CHECK_FALSE(f.hint.empty());
  }
}

TEST_CASE("the measurement drops iteration 1 and the first interval", "[megatron][measure]") {
  Recipe recipe = DenseRecipe();
  recipe.topology = Topology{4, 4, ""};
  recipe = testing::With(testing::With(recipe, "--seq-length", "1024"), "--global-batch-size", "4");
  LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/megatron_iter_008.log"));
  auto m = Stack().Measure(parse, recipe);
  REQUIRE(m.ok());
  CHECK(m->iterations_logged == 9);
  CHECK(m->iterations_used == 8);  // iteration 10 is the first interval (log interval 10)
  CHECK(m->step_time_s == Approx((1378.0 + 1378.9) / 2 / 1000));
  CHECK(m->tokens_per_s_per_gpu == Approx(4.0 * 1024 / m->step_time_s / 16));
  REQUIRE(m->peak_memory_gib);
  CHECK(*m->peak_memory_gib == Approx(30806.0 / 1024));
  REQUIRE(m->first_losses.size() == 8);
  CHECK(m->first_losses[0] == Approx(12.03115));
  CHECK(m->cv > 0);
}

TEST_CASE("a run logged from iteration 1 every step drops two records", "[megatron][measure]") {
  Recipe recipe = testing::With(DenseRecipe(), "--log-interval", "1");
  LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/megatron_iter_021.log"));
  auto m = Stack().Measure(parse, recipe);
  REQUIRE(m.ok());
  CHECK(m->iterations_used == 3);
  CHECK(m->step_time_s == Approx(132.6462));
  REQUIRE(m->tflops_per_gpu);
  CHECK(*m->tflops_per_gpu == Approx(410.8));
  CHECK(m->tokens_per_s_per_gpu == Approx(1024.0 * 4096 / 132.6462 / 16));
  CHECK(m->first_losses.size() == 5);
}

TEST_CASE("a log with only warm-up records cannot be measured", "[megatron][measure]") {
  LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/megatron_iter_015.log"));
  auto m = Stack().Measure(parse, DenseRecipe());
  REQUIRE_FALSE(m.ok());
  CHECK_THAT(m.status().message(), Catch::Contains("warm-up"));
}

const char* kSynthetic =
    "\x1b[32m(TrainActor pid=4242, ip=10.0.0.1)\x1b[0m using world size: 8\r\n"
    "(TrainActor pid=4242, ip=10.0.0.1) training ...\r\n"
    "(TrainActor pid=4242, ip=10.0.0.1)  [2026-08-22 12:00:00.123456] iteration        1/     100 | consumed samples:          64 | elapsed time per iteration (ms): 9000.0 | learning rate: 1.000000E-05 | global batch size:    64 | lm loss: 1.100000E+01 | load_balancing_loss: 1.020000E+00 | mtp_1 loss: 1.120000E+01 | loss scale: 1.0 | grad norm: 3.000 | number of skipped iterations:   0 | number of nan iterations:   0 |\r\n"
    "(min, max) time across ranks (ms):\n"
    "    forward-backward ...............................: (800.00, 810.00)\n"
    "    all-grads-sync .................................: (150.00, 160.00)\n"
    "(TrainActor pid=4242, ip=10.0.0.1)  [2026-08-22 12:00:01.000000] iteration        2/     100 | consumed samples:         128 | elapsed time per iteration (ms): 1000.0 | learning rate: 2.000000E-05 | global batch size:    64 | lm loss: nan | loss scale: 1.0 | number of skipped iterations:   1 | number of nan iterations:   1 |\n"
    "(TrainActor pid=4242, ip=10.0.0.1)  [2026-08-22 12:00:02.000000] iteration        2/     100 | consumed samples:         128 | elapsed time per iteration (ms): 1000.0 | learning rate: 2.000000E-05 | global batch size:    64 | lm loss: 9.9 | number of skipped iterations:   1 | number of nan iterations:   1 |\n"
    "(TrainActor pid=4242, ip=10.0.0.1)  [2026-08-22 12:00:03.000000] iteration        3/     100 | consumed samples:         192 | elapsed time per iteration (ms): 1010.0 | throughput per GPU (TFLOP/s/GPU): 400.5 | learning rate: 3.000000E-05 | global batch size:    64 | lm loss: 1.050000E+01 | loss scale: 1.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
    "(TrainActor pid=4242, ip=10.0.0.1)  [2026-08-22 12:00:04.000000] iteration        4/     100 | consumed samples:         256 | elapsed time per iteration (ms): 990.0 | learning rate: 4.0E-05 | global batch size:    64 | lm loss: 1.04";

TEST_CASE("synthetic log: ANSI, CRLF, Ray prefixes, MoE/MTP losses, NaN, duplicates, timers, partial last line", "[megatron][log]") {
  LogParse p = Stack().ParseLog(kSynthetic);
  CHECK(p.training_started);
  REQUIRE(p.iterations.size() == 4);
  CHECK(p.iterations[0].extra.at("load_balancing_loss") == Approx(1.02));
  CHECK(p.iterations[0].extra.at("mtp_1 loss") == Approx(11.2));
  CHECK(p.iterations[0].extra.at("timer:all-grads-sync") == Approx(160.0));
  CHECK(p.iterations[0].train_iters == 100);
  CHECK(p.iterations[0].global_batch_size == 64);
  CHECK_FALSE(p.iterations[1].loss.has_value());  // "lm loss: nan"
  CHECK(p.iterations[1].nan_iterations == 1);
  CHECK(p.iterations[1].skipped_iterations == 1);
  CHECK(p.iterations[2].tflops_per_gpu == Approx(400.5));
  CHECK(p.iterations[3].step_time_ms == Approx(990.0));
  CHECK_FALSE(p.iterations[3].loss.has_value());  // truncated "1.04" is not trusted
  CHECK(p.warnings.size() == 1);                   // the duplicate iteration 2
  CHECK(p.iterations[3].line == 10);
}

TEST_CASE("wrapper loggers' prefixes in front of Megatron's lines are peeled", "[megatron][log]") {
  const std::string tail =
      " iteration       10/     100 | consumed samples:          320 | elapsed time per iteration (ms): 1234.5 | "
      "learning rate: 3.000000E-04 | global batch size:    32 | lm loss: 7.123456E+00 | loss scale: 1.0 | "
      "grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |";
  for (const std::string prefix :
       {"[2025-03-01 10:00:01,123] [INFO] [Rank 0]:  [2025-03-01 10:00:01]",
        "2025-03-01 10:00:01,123 - megatron - INFO - [Rank 0]: ", "2025-03-01 10:00:01.123 INFO - ",
        "3: [2025-03-01 10:00:01] ", "> (MegatronTrainRayActor pid=1234, ip=10.0.0.1) [2025-03-01 10:00:01]"}) {
    INFO(prefix);
    LogParse p = Stack().ParseLog(prefix + tail);
    REQUIRE(p.iterations.size() == 1);
    CHECK(p.iterations[0].iteration == 10);
    CHECK(p.iterations[0].step_time_ms == Approx(1234.5));
    CHECK(p.iterations[0].loss == Approx(7.123456));
  }
}

TEST_CASE("triage recognises PyTorch and NCCL OOMs, timeouts, illegal memory and start-up errors", "[megatron][triage]") {
  JobEnd failed{1, "failed", 100};
  auto kind = [&](const std::string& log) { return Stack().Triage(log, failed); };
  CHECK(kind("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB").signature == "cuda_oom_pytorch");
  // Driver-level allocations outside PyTorch's caching allocator are OOMs too.
  CHECK(kind("RuntimeError: CUDA driver error: out of memory").signature == "cuda_oom_driver");
  CHECK(kind("torch_memory_saver.cpp:88 cuMemCreate failed with error CUDA_ERROR_OUT_OF_MEMORY").kind == FailureKind::kOom);
  CHECK(kind("[TMS] cuMemCreate returned 2 (out of memory)").signature == "cuda_oom_driver");
  auto nccl_oom = kind("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error\nLast error:\nCuda failure 2 'out of memory'");
  CHECK(nccl_oom.kind == FailureKind::kOom);
  CHECK(nccl_oom.line == 3);
  auto timeout = kind("[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.");
  CHECK(timeout.kind == FailureKind::kNcclTimeout);
  CHECK(timeout.infrastructure);
  CHECK(kind("RuntimeError: CUDA error: an illegal memory access was encountered").kind == FailureKind::kIllegalMemory);
  auto config = kind("using world size: 16\nAssertionError: num_attention_heads (33) must be a multiple of tensor_model_parallel_size (2)");
  CHECK(config.kind == FailureKind::kConfigError);
  CHECK_FALSE(config.infrastructure);
  auto late = kind("training ...\n iteration        1/      10 | elapsed time per iteration (ms): 10.0 | number of nan iterations:   0 |\nValueError: something later");
  CHECK(late.kind != FailureKind::kConfigError);
}

TEST_CASE("a log that stops without an error is a hang when the job ran far past the last step", "[megatron][triage]") {
  std::string log = " iteration       10/     100 | elapsed time per iteration (ms): 2000.0 | lm loss: 5.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
  auto hang = Stack().Triage(log, JobEnd{-1, "timed_out", 4000});
  CHECK(hang.kind == FailureKind::kHang);
  CHECK(hang.line == 1);
  auto slow = Stack().Triage(log, JobEnd{-1, "timed_out", 1230});
  CHECK(slow.kind == FailureKind::kTimeLimit);
  auto done = Stack().Triage(log, JobEnd{0, "succeeded", 30});
  CHECK(done.kind == FailureKind::kNone);
}

TEST_CASE("diagnosis reports memory, bubble, communication and launch overhead with evidence", "[megatron][diagnose]") {
  Recipe r = testing::With(DenseRecipe(), "--pipeline-model-parallel-size", "4");
  r = testing::With(r, "--global-batch-size", "16");  // DP 2, M 8
  Measurement m;
  m.step_time_s = 0.2;
  m.peak_memory_gib = 30;
  LogParse parse;
  auto d = Stack().Diagnose(r, m, parse, H100());
  std::map<std::string, Diagnosis> by_kind;
  for (const auto& x : d) by_kind.emplace(x.kind, x);
  REQUIRE(by_kind.count("memory_headroom"));
  CHECK_THAT(by_kind["memory_headroom"].evidence, Catch::Contains("30.0 of 80.0 GiB"));
  REQUIRE(by_kind.count("pipeline_bubble"));
  CHECK(by_kind["pipeline_bubble"].evidence.find("= 0.375") != std::string::npos);
  REQUIRE(by_kind.count("launch_overhead"));
  m.peak_memory_gib = 78;
  auto pressure = Stack().Diagnose(DenseRecipe(), m, parse, H100());
  CHECK(std::any_of(pressure.begin(), pressure.end(), [](const Diagnosis& x) { return x.kind == "memory_pressure"; }));
  LogParse timers = Stack().ParseLog(ReadFile(SharedLogs() + "/megatron_iter_008.log"));
  auto comm = Stack().Diagnose(DenseRecipe(), m, timers, H100());
  REQUIRE_FALSE(comm.empty());
  auto it = std::find_if(comm.begin(), comm.end(), [](const Diagnosis& x) { return x.kind == "communication"; });
  REQUIRE(it != comm.end());
  CHECK_THAT(it->evidence, Catch::Contains("communication timers"));
  for (size_t i = 1; i < d.size(); ++i) CHECK(d[i - 1].severity >= d[i].severity);
}

TEST_CASE("launch overhead is read from the length of a micro-batch, not from their number",
          "[megatron][diagnose]") {
  // 16 GPUs as TP 2, PP 2, DP 4: 128 micro-batches of size 1 per data-parallel rank.
  Recipe r = testing::With(DenseRecipe(), "--global-batch-size", "512");
  auto launch = [&](double step_s) {
    Measurement m;
    m.step_time_s = step_s;
    auto d = Stack().Diagnose(r, m, LogParse{}, H100());
    auto it = std::find_if(d.begin(), d.end(),
                           [](const Diagnosis& x) { return x.kind == "launch_overhead"; });
    return it == d.end() ? std::optional<Diagnosis>() : std::optional<Diagnosis>(*it);
  };
  CHECK_FALSE(launch(128 * 0.053));  // 53 ms of GPU work a micro-batch: launches hide behind it
  auto short_ones = launch(128 * 0.010);
  REQUIRE(short_ones);
  CHECK(short_ones->severity == Approx(1.0));
  CHECK_THAT(short_ones->evidence,
             Catch::Contains("10.0 ms per micro-batch over 128 micro-batches"));
}

TEST_CASE("a compute-bound run reports its model FLOPs utilisation", "[megatron][diagnose]") {
  Recipe r = testing::TinyRecipe();
  Measurement m;
  m.step_time_s = 2.0;
  m.tflops_per_gpu = 600;
  auto d = Stack().Diagnose(r, m, LogParse{}, H100());
  auto it = std::find_if(d.begin(), d.end(), [](const Diagnosis& x) { return x.kind == "compute_bound"; });
  REQUIRE(it != d.end());
  CHECK_THAT(it->evidence, Catch::Contains("MFU 61%"));
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

TEST_CASE("a finished run with a clean exit is no failure even with errors in its start-up text", "[megatron][triage]") {
  std::string log =
      "UserWarning: ValueError was raised and handled while probing a kernel\n"
      "training ...\n"
      " iteration       20/      20 | elapsed time per iteration (ms): 100.0 | lm loss: 5.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
  CHECK(Stack().Triage(log, JobEnd{0, "succeeded", 30}).kind == FailureKind::kNone);
  // `torchrun ... | tee` exits 0 even when training died: the log decides.
  std::string died = "training ...\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
  CHECK(Stack().Triage(died, JobEnd{0, "succeeded", 30}).kind == FailureKind::kIllegalMemory);
}

TEST_CASE("a bigscience-style log in seconds measures in seconds", "[megatron][measure]") {
  Recipe recipe = testing::With(DenseRecipe(), "--seq-length", "2048");
  recipe.topology = Topology{48, 8, ""};
  LogParse parse = Stack().ParseLog(ReadFile(SharedLogs() + "/megatron_iter_010.log"));
  auto m = Stack().Measure(parse, recipe);
  REQUIRE(m.ok());
  CHECK(m->iterations_used == 11);  // a mid-run excerpt: nothing is warm-up
  CHECK(m->step_time_s == Approx(106.33));
  CHECK(m->tokens_per_s_per_gpu == Approx(2048.0 * 2048 / 106.33 / 384));
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

TEST_CASE("configuration errors raised in the first iteration are config errors", "[megatron][triage]") {
  std::string log =
      "training ...\n[before the start of training step] datetime: 2026-08-22 12:00:00.000000 \n"
      "Traceback (most recent call last):\n"
      "AssertionError: First dimension of the tensor should be divisible by tensor parallel size\n";
  Failure f = Stack().Triage(log, JobEnd{1, "failed", 120});
  CHECK(f.kind == FailureKind::kConfigError);
  CHECK(f.signature == "first_iteration_config_error");
  CHECK(f.line == 4);
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

TEST_CASE("a job that never logs an iteration for long is a hang at start-up", "[megatron][triage]") {
  std::string log = "using world size: 16\ntraining ...\n";
  CHECK(Stack().Triage(log, JobEnd{-1, "timed_out", 3600}).kind == FailureKind::kHang);
  CHECK(Stack().Triage(log, JobEnd{-1, "timed_out", 600}).kind == FailureKind::kTimeLimit);
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

using testing::Stack;

TEST_CASE("failures under launcher prefixes: NCCL warnings, tracebacks, glued banners, with the rank", "[megatron][triage]") {
  // srun --label on every line, blank ones included; NCCL's own warning is the only cause.
  std::string nccl =
      "0: iteration       10/     100 | consumed samples:          640 | elapsed time per iteration (ms): 1000.0 | lm loss: 9.0 |\n"
      "5: \n"
      "5: node7:1234:5678 [5] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.8<42> with error 12, opcode 0\n"
      "0: srun: error: node7: task 5: Exited with exit code 1\n";
  Failure f = Stack().Triage(nccl, JobEnd{1, "failed", 60});
  CHECK(f.kind == FailureKind::kNcclError);
  CHECK(f.signature == "late.nccl_warn");
  CHECK(f.line == 3);
  CHECK(f.process == "rank 5");
  CHECK(f.infrastructure);

  // A Python traceback under prefixes: the exception's own line is the evidence.
  std::string traceback =
      "[default3]: iteration       10/     100 | elapsed time per iteration (ms): 1000.0 | lm loss: 9.0 |\n"
      "[default3]:Traceback (most recent call last):\n"
      "[default3]:  File \"pretrain_gpt.py\", line 12, in <module>\n"
      "[default3]:RuntimeError: expected scalar type Float but found BFloat16\n"
      "[default0]:[W Utils.hpp:135] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated\n";
  Failure t = Stack().Triage(traceback, JobEnd{1, "failed", 60});
  CHECK(t.kind == FailureKind::kUnknown);
  CHECK(t.signature == "late.python_exception");
  CHECK(t.line == 4);
  CHECK(t.process == "rank 3");

  // Ranks' terminate banners glued on one line; the collective timeout comes later in a what().
  std::string glued =
      "[rank0]: iteration       10/     100 | elapsed time per iteration (ms): 1000.0 | lm loss: 9.0 |\n"
      "terminate called after throwing an instance of 'c10::DistBackendError'terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "[rank2]:  what():  [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n";
  Failure g = Stack().Triage(glued, JobEnd{-1, "failed", 700});
  CHECK(g.kind == FailureKind::kNcclTimeout);
  CHECK(g.line == 3);
  CHECK(g.process == "rank 2");
}

}  // namespace
}  // namespace attune::megatron
