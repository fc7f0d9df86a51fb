#include <catch2/catch.hpp>

#include <sstream>

#include "automodel_fixture.h"

using namespace attune;
using namespace attune::automodel::testing;

namespace {

std::string Shared(const std::string& name) {
  return ReadFile(std::string(ATTUNE_SHARED_DIR) + "/fixtures/logs/" + name);
}

}  // namespace

TEST_CASE("the early INFO:root: format of the AutoModel docs parses exactly", "[automodel][log]") {
  auto parse = TheStack().ParseLog(Shared("automodel_iter_003.log"));
  std::vector<int64_t> iters;
  std::vector<double> losses, mem, tps;
  for (const auto& s : parse.iterations) {
    iters.push_back(s.iteration);
    losses.push_back(*s.loss);
    mem.push_back(s.extra.at("mem_gib"));
    tps.push_back(s.extra.at("tps"));
  }
  CHECK(iters == std::vector<int64_t>{4, 8, 12, 16, 20});  // the [val] line is not a step
  CHECK(losses == std::vector<double>{1.5514, 0.7913, 0.4358, 0.2057, 0.2557});
  CHECK(mem == std::vector<double>{11.66, 14.58, 15.48, 16.47, 12.35});
  CHECK(tps == std::vector<double>{6924.5, 9328.79, 9068.99, 9148.28, 9196.97});
}

TEST_CASE("the 2026 per-GPU tps form parses exactly", "[automodel][log]") {
  auto parse = TheStack().ParseLog(Shared("automodel_iter_004.log"));
  REQUIRE(parse.iterations.size() == 4);
  std::vector<double> per_gpu, losses;
  for (const auto& s : parse.iterations) {
    per_gpu.push_back(s.extra.at("tps_per_gpu"));
    losses.push_back(*s.loss);
    CHECK(s.extra.count("tps") == 0);
  }
  CHECK(parse.iterations[1].iteration == 6);
  CHECK(per_gpu == std::vector<double>{210.68, 2734.08, 2075.14, 830.26});
  CHECK(losses == std::vector<double>{1.2708, 1.3184, 1.1696, 1.2296});
  CHECK(parse.iterations[0].extra.at("num_label_tokens") == 4707);
}

TEST_CASE("throughput drops warm-up and steps that include validation or checkpoints", "[automodel][log]") {
  Recipe recipe = Import("launch_automodel.sh");  // 8 GPUs
  auto parse = TheStack().ParseLog(ReadFile(FixtureDir() + "/step_lines.log"));
  REQUIRE(parse.iterations.size() == 6);
  auto m = TheStack().Measure(parse, recipe);
  REQUIRE(m.ok());
  // Steps 2, 3 and 5 are clean: total tps 16000, 16400, 15600 → per physical GPU ÷ 8.
  CHECK(m->iterations_used == 3);
  CHECK(m->tokens_per_s_per_gpu == Approx(2000.0));
  CHECK(m->step_time_s == Approx(260000.0 / 16000.0));
  CHECK(*m->peak_memory_gib == Approx(41.5));
  CHECK(m->first_losses.front() == Approx(2.5));
}

TEST_CASE("a printed per-replica figure is turned into per physical GPU", "[automodel][log]") {
  // tp 2 on 8 GPUs: dp 4. A "/gpu" figure of 1000 is per DP×CP replica: 4000 total, 500 per GPU.
  Recipe recipe = Import("launch_automodel.sh");
  std::string log =
      "step 1 | epoch 0 | loss 2.0 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 900.00/gpu | num_label_tokens 100\n"
      "step 2 | epoch 0 | loss 2.0 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 1000.00/gpu | num_label_tokens 100\n";
  auto m = TheStack().Measure(TheStack().ParseLog(log), recipe);
  REQUIRE(m.ok());
  CHECK(m->tokens_per_s_per_gpu == Approx(500.0));
}

TEST_CASE("training.jsonl records parse like step lines", "[automodel][log]") {
  auto parse = TheStack().ParseLog(ReadFile(FixtureDir() + "/training.jsonl"));
  REQUIRE(parse.iterations.size() == 3);
  CHECK(parse.iterations[2].extra.at("tps") == 16400.0);
  CHECK(parse.iterations[2].extra.at("mfu") == Approx(41.3));
}

TEST_CASE("ANSI colours and CRLF do not hide a step line", "[automodel][log]") {
  auto parse = TheStack().ParseLog(
      "\x1b[32m2026-03-01 10:00:00 | INFO | root | \x1b[0mstep 7 | epoch 1 | loss 1.5000 | grad_norm 1.0 | "
      "lr 1.00e-05 | mem 10.00 GiB | tps 5.00(1.25/gpu) | num_label_tokens 3\r\n");
  REQUIRE(parse.iterations.size() == 1);
  CHECK(parse.iterations[0].iteration == 7);
  CHECK(*parse.iterations[0].loss == 1.5);
}

TEST_CASE("triage names OOM, mesh errors and real failure text", "[automodel][triage]") {
  auto oom = TheStack().Triage(ReadFile(FixtureDir() + "/oom.log"), JobEnd{1, "failed", 10});
  CHECK(oom.kind == FailureKind::kOom);
  CHECK(oom.signature == "cuda_oom");
  CHECK(oom.line == 3);
  auto mesh = TheStack().Triage(ReadFile(FixtureDir() + "/mesh_error.log"), JobEnd{1, "failed", 2});
  CHECK(mesh.kind == FailureKind::kConfigError);
  CHECK(mesh.signature == "mesh_not_divisible");
  auto real_oom = TheStack().Triage(Shared("failure_oom_003.log"), JobEnd{1, "failed", 100});
  CHECK(real_oom.kind == FailureKind::kOom);
  auto nccl = TheStack().Triage(Shared("failure_nccl_error_002.log"), JobEnd{1, "failed", 100});
  CHECK((nccl.kind == FailureKind::kNcclError || nccl.kind == FailureKind::kNcclTimeout));
  CHECK(nccl.infrastructure);
}

TEST_CASE("a clean log is no failure; a silent timeout is a hang", "[automodel][triage]") {
  auto clean = TheStack().Triage(ReadFile(FixtureDir() + "/step_lines.log"), JobEnd{0, "succeeded", 100});
  CHECK(clean.kind == FailureKind::kNone);
  auto hang = TheStack().Triage("INFO:root:starting\n", JobEnd{-1, "timed_out", 3600});
  CHECK(hang.kind == FailureKind::kHang);
}

TEST_CASE("key=value step lines without a step time are timed from their timestamps", "[automodel][log]") {
  Recipe recipe = Import("launch_automodel.sh");  // 8 GPUs; 4096 tokens × 64 sequences per step
  std::string log =
      "2025-06-01 12:00:00,000 - INFO - epoch=0 step=1 loss=2.50 grad_norm=1.10 lr=1e-05\n"
      "2025-06-01 12:00:01,000 - INFO - loading next shard\n"
      "2025-06-01 12:00:02,000 - INFO - epoch=0 step=2 loss=2.40 grad_norm=1.00 lr=1e-05\n"
      "2025-06-01 12:00:04,500 - INFO - epoch=0 step=3 loss=2.30 grad_norm=0.90 lr=1e-05\n"
      "2025-06-01 12:00:09,500 - INFO - epoch=0 step=5 loss=2.20 grad_norm=0.80 lr=1e-05\n";
  auto parse = TheStack().ParseLog(log);
  REQUIRE(parse.iterations.size() == 4);
  CHECK(parse.iterations[0].step_time_ms == 0);  // nothing before it to time it by
  CHECK(parse.iterations[1].step_time_ms == Approx(2000));
  CHECK(parse.iterations[2].step_time_ms == Approx(2500));
  CHECK(parse.iterations[3].step_time_ms == Approx(2500));  // 5 s over two steps
  CHECK(parse.iterations[3].iteration == 5);
  CHECK(*parse.iterations[3].loss == 2.2);
  CHECK(*parse.iterations[3].grad_norm == 0.8);
  CHECK(parse.iterations[3].extra.at("time_from_timestamps") == 1);
  auto m = TheStack().Measure(parse, recipe);
  REQUIRE(m.ok());
  CHECK(m->iterations_used == 3);
  CHECK(m->step_time_s == Approx(2.5));
  CHECK(m->tokens_per_s_per_gpu == Approx(4096.0 * 64 / 2.5 / 8));
}

TEST_CASE("NeMo 2.x progress bars: one record per global step, timed by train_step_timing", "[automodel][log]") {
  // Lightning redraws the bar with a carriage return after every micro-batch; global_step only
  // moves once per optimizer step.
  std::string log =
      "Epoch 0: :   1%|          | 1/100 [00:02<03:18, reduced_train_loss=11.00, global_step=0.000, consumed_samples=64.0, train_step_timing in s=2.100]\r"
      "Epoch 0: :   2%|1         | 2/100 [00:04<03:10, reduced_train_loss=11.00, global_step=0.000, consumed_samples=64.0, train_step_timing in s=2.100]\r"
      "Epoch 0: :   3%|2         | 3/100 [00:06<03:05, reduced_train_loss=10.50, global_step=1.000, consumed_samples=128.0, train_step_timing in s=2.000]\r"
      "Epoch 0: :   5%|4         | 5/100 [00:08<03:01, reduced_train_loss=10.20, global_step=2.000, consumed_samples=192.0, train_step_timing in s=1.900]\n"
      "[NeMo I 2025-01-02 03:04:05 nemo_logging:349] Training epoch 0, iteration 3/99 | lr: 1.274e-05 | global_batch_size: 64 | global_step: 3 | reduced_train_loss: 10.1 | train_step_timing in s: 1.95 | consumed_samples: 256\n";
  auto parse = TheStack().ParseLog(log);
  REQUIRE(parse.iterations.size() == 4);
  std::vector<int64_t> steps;
  std::vector<double> ms, losses;
  for (const auto& s : parse.iterations) {
    steps.push_back(s.iteration);
    ms.push_back(s.step_time_ms);
    losses.push_back(*s.loss);
  }
  CHECK(steps == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(ms == std::vector<double>{2100, 2000, 1900, 1950});
  CHECK(losses == std::vector<double>{11.0, 10.5, 10.2, 10.1});
  CHECK(parse.iterations[3].extra.at("lr") == Approx(1.274e-05));
  CHECK(parse.iterations[3].extra.at("global_batch_size") == 64);
  CHECK(parse.iterations[1].line == 1);  // all redraws are on the first physical line
  CHECK(parse.iterations[3].line == 2);
}

TEST_CASE("step lines under launcher prefixes parse once, whichever ranks print them", "[automodel][log]") {
  std::string log =
      "0: step 1 | epoch 0 | loss 2.0000 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 900.00\n"
      "1: step 1 | epoch 0 | loss 2.0000 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 900.00\n"
      "> (TrainActor pid=3, ip=10.0.0.1) step 2 | epoch 0 | loss 1.9000 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 950.00 [repeated 3x across cluster]\n";
  auto parse = TheStack().ParseLog(log);
  REQUIRE(parse.iterations.size() == 2);
  CHECK(parse.iterations[1].iteration == 2);
  CHECK(parse.iterations[1].extra.at("tps") == 950.0);
}

TEST_CASE("triage names the rank of the evidence and finds a silent training rank", "[automodel][triage]") {
  auto oom = TheStack().Triage("0: step 1 | epoch 0 | loss 2.0\n3: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB\n",
                               JobEnd{1, "failed", 10});
  CHECK(oom.kind == FailureKind::kOom);
  CHECK(oom.line == 2);
  CHECK(oom.process == "rank 3");
  std::string silent =
      "2025-06-01 12:00:00 - INFO - epoch=0 step=1 loss=2.50\n"
      "2025-06-01 12:00:02 - INFO - epoch=0 step=2 loss=2.40\n"
      "2025-06-01 12:30:00 - INFO - dataloader worker 3 heartbeat\n";
  auto hang = TheStack().Triage(silent, JobEnd{-1, "timed_out", 2000});
  CHECK(hang.kind == FailureKind::kHang);
  CHECK(hang.line == 3);
  CHECK(hang.hint.find("no training step for 1798 s after step 2") == 0);
}
