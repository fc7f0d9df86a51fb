#include <catch2/catch.hpp>

#include "slime_fixture.h"

using namespace attune;
using namespace attune::slime::testing;

namespace {

Failure TriageFixture(const std::string& name) {
  JobEnd end;
  end.exit_code = 1;
  end.launcher_state = "failed";
  end.ran_seconds = 600;
  return TheStack().Triage(SharedLog(name), end);
}

}  // namespace

TEST_CASE("slime failure fixtures are classified with their evidence line", "[slime][triage]") {
  struct Case {
    const char* file;
    FailureKind kind;
    const char* signature;
    const char* evidence;  // a piece of the deciding line
  };
  const Case cases[] = {
      {"slime_failure_oom_001.log", FailureKind::kOom, "torch_memory_saver_oom", "TorchMemorySaver::malloc return OOM"},
      {"slime_failure_oom_002.log", FailureKind::kOom, "cuda_oom_pytorch", "OutOfMemoryError"},
      {"slime_failure_nccl_001.log", FailureKind::kNcclError, "nccl_error", "NCCL error in:"},
      {"slime_failure_nccl_002.log", FailureKind::kNcclError, "nccl_warn_cuda_failure", "named symbol not found"},
      {"slime_failure_nccl_003.log", FailureKind::kNcclError, "nccl_error", "DistBackendError"},
      {"slime_failure_ray_001.log", FailureKind::kUnknown, "ray_core_check_failed", "Check failed: objects_valid"},
      {"slime_failure_sglang_002.log", FailureKind::kLaunchError, "sglang_server_launch_failed", ""},
      {"slime_failure_sglang_003.log", FailureKind::kUnknown, "late.sglang_http_error", "503 Service Unavailable"},
      {"slime_failure_sglang_004.log", FailureKind::kOom, "late.sglang_kv_cache_full", "KV cache pool is full"},
      {"slime_failure_config_001.log", FailureKind::kConfigError, "ray_actor_creation_failed", "RolloutManager.__init__"},
      {"slime_failure_other_002.log", FailureKind::kUnknown, "weight_update_failed", "Weight version mismatch"},
      // The three below say no more than their evidence line: an SGLang 500 at the end of a
      // rollout, a `ray job submit` failure banner (the GPU-count error itself is not in the log),
      // a RuntimeError from Megatron's NaN grad-norm check raised through a Ray task.
      {"slime_failure_sglang_001.log", FailureKind::kUnknown, "late.sglang_http_error", "500 Internal Server Error"},
      {"slime_failure_config_002.log", FailureKind::kUnknown, "late.ray_job_failed", "Job 'raysubmit_58TRJUbPYiZ4YT36' failed"},
      {"slime_failure_other_001.log", FailureKind::kUnknown, "late.python_exception", "RayTaskError(RuntimeError)"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    Failure f = TriageFixture(c.file);
    CHECK(f.signature == c.signature);
    CHECK(FailureKindName(f.kind) == std::string(FailureKindName(c.kind)));
    CHECK(f.evidence.find(c.evidence) != std::string::npos);
    CHECK(f.line > 0);
    CHECK_FALSE(f.hint.empty());
  }
}

TEST_CASE("slime's signatures come before Megatron's, late ones after", "[slime][triage]") {
  JobEnd end{1, "failed", 100};
  // Ray's memory monitor names OutOfMemoryError too: host OOM, not device OOM.
  Failure host = TheStack().Triage(
      "(MegatronTrainRayActor pid=1) ok\n"
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n", end);
  CHECK(host.kind == FailureKind::kHostOom);
  CHECK(host.signature == "ray_memory_monitor_kill");
  CHECK(host.line == 2);

  // A KV-cache warning before a real CUDA OOM: the OOM decides.
  Failure oom = TheStack().Triage(
      "(SGLangEngine pid=3) [2026-01-01 00:00:00 TP0] KV cache pool is full. Retract requests.\n"
      "(MegatronTrainRayActor pid=4) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", end);
  CHECK(oom.signature == "cuda_oom_pytorch");
  CHECK(oom.line == 2);

  // The static micro-batch assertion of build_dp_schedule.
  Failure split = TheStack().Triage(
      "AssertionError: static path: num_mbs (6) is not a multiple of dp_size * mb_group (4)\n", end);
  CHECK(split.kind == FailureKind::kConfigError);
  CHECK(split.signature == "slime_static_micro_batch_split");
}

TEST_CASE("a log without a failure is not a failure", "[slime][triage]") {
  Failure f = TheStack().Triage(SharedLog("slime_perf_005.log"), JobEnd{0, "succeeded", 30});
  CHECK(f.kind == FailureKind::kNone);
}

TEST_CASE("argument assertions of the driver are configuration errors", "[slime][triage]") {
  JobEnd end{1, "failed", 20};
  Failure f = TheStack().Triage(
      "[2026-01-01 00:00:00] arguments.py:1500 - using world size: 8\n"
      "AssertionError: --rollout-temperature must be > 0\n", end);
  CHECK(f.kind == FailureKind::kConfigError);
  CHECK(f.signature == "argument_error");
  CHECK(f.line == 2);
  Failure u = TheStack().Triage("train.py: error: unrecognized arguments: --rollout-batchsize 32\n", end);
  CHECK(u.signature == "argument_error");
}

TEST_CASE("a training actor silent while rollout actors keep logging is a hang", "[slime][triage]") {
  // slime's own records are the progress: two rollouts and their train steps, then 25 minutes of
  // rollout-side output and nothing from the trainer until the time limit.
  std::string log =
      "(MegatronTrainRayActor pid=11, ip=10.0.0.1) [2026-02-01 10:00:00] model.py:649 - step 0: {'train/loss': 1.5, 'train/grad_norm': 2.0}\n"
      "(MegatronTrainRayActor pid=11, ip=10.0.0.1) [2026-02-01 10:00:01] train.py:90 - perf 0: {'perf/step_time': 60.0, 'perf/actor_train_time': 40.0, 'perf/update_weights_time': 5.0}\n"
      "(MegatronTrainRayActor pid=11, ip=10.0.0.1) [2026-02-01 10:01:05] model.py:649 - step 1: {'train/loss': 1.4, 'train/grad_norm': 1.9}\n"
      "(MegatronTrainRayActor pid=11, ip=10.0.0.1) [2026-02-01 10:01:06] train.py:90 - perf 1: {'perf/step_time': 62.0, 'perf/actor_train_time': 41.0, 'perf/update_weights_time': 5.0}\n"
      "(RolloutManager pid=22, ip=10.0.0.2) [2026-02-01 10:05:00] rollout.py:300 - generating rollout 2\n"
      "(SGLangEngine pid=33, ip=10.0.0.2) [2026-02-01 10:20:00] Decode batch. #running-req: 0\n"
      "(RolloutManager pid=22, ip=10.0.0.2) [2026-02-01 10:26:30] rollout.py:300 - waiting for the trainer\n";
  Failure f = TheStack().Triage(log, JobEnd{-1, "timed_out", 1800});
  CHECK(f.kind == FailureKind::kHang);
  CHECK(f.line == 7);
  CHECK(f.process == "RolloutManager pid=22, ip=10.0.0.2");
  CHECK(f.hint.find("no training step for 1524 s after rollout 1 (line 4") == 0);
  CHECK(f.hint.find("(3 lines, e.g. from RolloutManager pid=22, ip=10.0.0.2)") != std::string::npos);
  // The same log cut before the rollout side's long output: the time limit, not a hang.
  std::string short_log = log.substr(0, log.find("(SGLangEngine"));
  CHECK(TheStack().Triage(short_log, JobEnd{-1, "timed_out", 400}).kind == FailureKind::kTimeLimit);
}
