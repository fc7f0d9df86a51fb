#include <catch2/catch.hpp>
#include <cstdio>
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

TEST_CASE("without its recipe a log is measured by its own per-GPU figure, never its total",
          "[automodel][log]") {
  // `attune log parse` without --recipe: the stack gets a recipe naming only itself, whose 1 x 1
  // topology would have read the job's total (16000 tokens/s on 8 GPUs) as one GPU's.
  Recipe bare;
  bare.stack = "automodel";
  std::string log =
      "step 1 | epoch 0 | loss 2.0 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 9000.00(1125.00/gpu) | num_label_tokens 100\n"
      "step 2 | epoch 0 | loss 2.0 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 16000.00(2000.00/gpu) | num_label_tokens 100\n"
      "step 3 | epoch 0 | loss 2.0 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 16400.00(2050.00/gpu) | num_label_tokens 100\n";
  auto m = TheStack().Measure(TheStack().ParseLog(log), bare);
  REQUIRE(m.ok());
  CHECK(m->iterations_used == 2);
  CHECK(m->tokens_per_s_per_gpu == Approx(2025.0));
  // The printed totals still time the steps: 100 label tokens at 16000 and 16400 tokens/s.
  CHECK(m->step_time_s == Approx((100.0 / 16000 + 100.0 / 16400) / 2));
  // With the recipe (8 GPUs, TP 2: DP 4) the total is divided by the GPUs, as before.
  auto with_recipe = TheStack().Measure(TheStack().ParseLog(log), Import("launch_automodel.sh"));
  REQUIRE(with_recipe.ok());
  CHECK(with_recipe->tokens_per_s_per_gpu == Approx(16200.0 / 8));
  // A log that prints only the total cannot be measured per GPU without the mesh.
  std::string totals =
      "step 1 | epoch 0 | loss 2.0 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 9000.00 | num_label_tokens 100\n"
      "step 2 | epoch 0 | loss 2.0 | grad_norm 1.0 | lr 1.00e-05 | mem 10.00 GiB | tps 16000.00 | num_label_tokens 100\n";
  auto unknown = TheStack().Measure(TheStack().ParseLog(totals), bare);
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.status().message(), Catch::Contains("--recipe"));
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

TEST_CASE("a job that ran to its time limit while stepping is a time limit, not a hang",
          "[automodel][triage]") {
  // 100 steps of 15 s after a 180 s start, in a job the limit ended at 1,800 s: the steps explain
  // the run. Neither form prints a step time: the total form gives tokens and tokens per second,
  // the per-GPU form only timestamps to go by.
  std::string total_form = "2026-01-01 00:00:00 | INFO | root | Starting training\n";
  std::string per_gpu_form = total_form;
  for (int step = 1; step <= 100; ++step) {
    const int t = 180 + 15 * step;
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "2026-01-01 %02d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    total_form += std::string(stamp) + " | INFO | root | step " + std::to_string(step) +
                  " | epoch 0 | loss 2.5 | grad_norm 1.0 | lr 1.00e-05 | mem 30.00 GiB | "
                  "tps 34952.53(4369.07/gpu) | num_label_tokens 524288\n";
    per_gpu_form += std::string(stamp) + " | INFO | root | step " + std::to_string(step) +
                    " | epoch 0 | loss 2.5 | grad_norm 1.0 | lr 1.00e-05 | mem 30.00 GiB | "
                    "tps 4369.07/gpu | num_label_tokens 524288\n";
  }
  auto parse = TheStack().ParseLog(total_form);
  REQUIRE(parse.iterations.size() == 100);
  CHECK(parse.iterations[5].step_time_ms == Approx(15000).epsilon(0.001));
  for (const std::string* log : {&total_form, &per_gpu_form}) {
    auto limit = TheStack().Triage(*log, JobEnd{-1, "timed_out", 1800});
    CHECK(limit.kind == FailureKind::kTimeLimit);
  }
  // The same steps in a job that then sat for 1,500 s more are still a hang.
  auto hang = TheStack().Triage(per_gpu_form, JobEnd{-1, "timed_out", 3300});
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

TEST_CASE("NeMo 2.x progress output: the progress printer, Megatron's bar and the HF bar with tps", "[automodel][log]") {
  // NeMo's ProgressPrinter (one line per global step on rank 0, under an srun label here), then a
  // NeMo log line that names global_step but is not a step.
  std::string printer =
      "  0: Training epoch 0, iteration 0/4679 | lr: 5.882e-07 | global_batch_size: 48 | global_step: 0 | reduced_train_loss: 0.4985 | train_step_timing in s: 314.5\n"
      "  0: Training epoch 0, iteration 1/4679 | lr: 1.176e-06 | global_batch_size: 48 | global_step: 1 | reduced_train_loss: 0.507 | train_step_timing in s: 71.29 | consumed_samples: 96\n"
      "  0: [NeMo I 2025-12-18 15:49:42 nemo_logging:393] Running garbage collection at train global_step: 5\n"
      "Training epoch 0, iteration 2/4679 | lr: 1.5e-06 | consumed_samples: 144 | global_batch_size: 48 | global_step: 2 | reduced_train_loss: 0.5 | train_step_timing in s: 70.1 | val_loss: 4.106\n";
  auto parse = TheStack().ParseLog(printer);
  REQUIRE(parse.iterations.size() == 3);
  std::vector<int64_t> steps;
  std::vector<double> ms, losses;
  for (const auto& s : parse.iterations) {
    steps.push_back(s.iteration);
    ms.push_back(s.step_time_ms);
    losses.push_back(*s.loss);
  }
  CHECK(steps == std::vector<int64_t>{0, 1, 2});
  CHECK(ms[0] == Approx(314500));
  CHECK(ms[1] == Approx(71290));
  CHECK(ms[2] == Approx(70100));
  CHECK(losses == std::vector<double>{0.4985, 0.507, 0.5});  // reduced_train_loss, not val_loss
  CHECK(parse.iterations[1].extra.at("lr") == Approx(1.176e-06));
  CHECK(parse.iterations[1].extra.at("global_batch_size") == 48);

  // Megatron's tqdm bar, redrawn with carriage returns (tqdm's compact numbers).
  std::string bar =
      "Epoch 0: :  1%|          | 1/100 [00:04<06:36, reduced_train_loss=7.910, global_step=0.000, consumed_samples=256.0, train_step_timing in s=4.000]\r"
      "Epoch 0: :  2%|2         | 2/100 [00:07<05:50, reduced_train_loss=7.800, global_step=1.000, consumed_samples=512.0, train_step_timing in s=3.590]\r"
      "Epoch 0: : 100%|##########| 2000/2000 [2:00:00<00:00, reduced_train_loss=2.310, global_step=2e+3, consumed_samples=5.12e+5, train_step_timing in s=3.580]\n";
  auto bars = TheStack().ParseLog(bar);
  REQUIRE(bars.iterations.size() == 3);
  CHECK(bars.iterations[2].iteration == 2000);
  CHECK(bars.iterations[2].step_time_ms == Approx(3580));
  CHECK(bars.iterations[2].extra.at("consumed_samples") == 512000);
  CHECK(bars.iterations[1].line == 1);  // every redraw is on the first physical line

  // The HF model path's bar counts micro-batches; global_step, loss and tps move once per
  // optimizer step, so the redraws in between repeat them: one record per global step.
  std::string hf =
      "Epoch 0:   0%|          | 78/43800 [00:39<6:06:25,  1.99it/s, global_step=3.000, reduced_train_loss=12.40, tps=9400.0, lr=3e-6]\r"
      "Epoch 0:   0%|          | 79/43800 [00:39<6:06:25,  1.99it/s, global_step=4.000, reduced_train_loss=12.30, tps=9484.0, lr=3e-6]\r"
      "Epoch 0:   0%|          | 80/43800 [00:40<6:06:25,  1.99it/s, global_step=4.000, reduced_train_loss=12.30, tps=9484.0, lr=3e-6]\n";
  auto hf_parse = TheStack().ParseLog(hf);
  REQUIRE(hf_parse.iterations.size() == 2);
  CHECK(hf_parse.iterations[1].iteration == 4);
  CHECK(hf_parse.iterations[1].extra.at("tps") == 9484.0);
  CHECK(hf_parse.iterations[1].step_time_ms == 0);
}

TEST_CASE("key=value recipes: speculative decoding and diffusion lines, a bar glued in front", "[automodel][log]") {
  std::string log =
      "2026-07-26 20:46:09 | INFO | nemo_automodel.recipes.llm.train_eagle1 | epoch=0 step=3160 loss=2.4690 acc=0.3527 lr=4.78591e-06 grad_norm=0.1533 hidden_loss=1.794 token_loss=4.737\n"
      "Training:  59%|#####9    | 38/64 [00:15<00:08,  3.07step/s, acc=0.0107, loss=8.2841, lr=4.47e-05, tau=1.03]2026-07-26 20:46:12 | INFO | __main__ | epoch=0 step=3161 train_loss=8.284101 train_acc=0.010703 lr=4.466e-05\n"
      "2026-07-26 20:46:13 | INFO | __main__ | decode_eval: step=3161 accept_length=2.1\n"
      "2026-07-26 20:46:15 | INFO | root | [TRAIN] step=3162 epoch=0 loss=0.123456 avg_loss=0.2 lr=1.000e-04 grad_norm=0.300 step_time=1.234s samples_per_sec=10.00 mem=12.50GB\n";
  auto parse = TheStack().ParseLog(log);
  REQUIRE(parse.iterations.size() == 3);
  CHECK(*parse.iterations[0].loss == 2.469);
  CHECK(*parse.iterations[0].grad_norm == 0.1533);
  CHECK(parse.iterations[1].iteration == 3161);
  CHECK(*parse.iterations[1].loss == 8.284101);  // the logger's value, not the bar's rounded one
  CHECK(parse.iterations[1].step_time_ms == Approx(3000));  // from the glued line's own timestamp
  CHECK(parse.iterations[2].step_time_ms == Approx(1234));  // printed: step_time=1.234s
  CHECK(parse.iterations[2].extra.at("mem_gib") == 12.5);
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
