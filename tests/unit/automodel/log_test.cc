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
