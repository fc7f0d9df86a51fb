// Shared triage (attune/support/log_triage.h): the signature file's schema, the most specific cause
// over the first matching line, the evidence's process, and the hang rule on multi-process logs.
#include <catch2/catch.hpp>

#include "attune/support/log_triage.h"

namespace attune::support {
namespace {

const char* kSpec = R"(version: 1
hang:
  step_time_factor: 10
  startup_allowance_s: 100
  min_silence_s: 60
signatures:
  - id: oom
    kind: oom
    regex: "CUDA out of memory|OutOfMemoryError"
    hint: save memory
  - id: timeout
    kind: nccl_timeout
    regex: "Watchdog caught collective operation timeout"
    hint: a collective timed out
    infrastructure: true
  - id: nccl
    kind: nccl_error
    regex: "DistBackendError|NCCL WARN"
    hint: NCCL failed
    infrastructure: true
  - id: ray_task
    kind: unknown
    regex: "RayTaskError"
    hint: an actor failed
  - id: startup
    kind: config_error
    regex: "ValueError"
    hint: fix the argument
    before_training: true
)";

TriageSpec Spec() {
  auto spec = ParseTriageSpec(kSpec, "triage.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

Failure Triage(const std::string& log, std::vector<ProgressRecord> progress, JobEnd end,
               size_t training_start = 0) {
  auto lines = SplitLogLines(log);
  TriageInput input;
  input.progress = std::move(progress);
  input.training_start = training_start;
  return TriageLines(Spec(), lines, input, end);
}

TEST_CASE("the signature file: version, hang settings, literals, errors with line and column", "[support][triage]") {
  TriageSpec spec = Spec();
  CHECK(spec.hang_min_silence_s == 60);
  CHECK(spec.hang_startup_allowance_s == 100);
  REQUIRE(spec.signatures.size() == 5);
  CHECK(spec.signatures[0].literals == std::vector<std::string>{"CUDA out of memory", "OutOfMemoryError"});
  CHECK(spec.signatures[4].before_training);

  auto bad_kind = ParseTriageSpec("version: 1\nsignatures:\n  - id: x\n    kind: oops\n    regex: a\n    hint: h\n", "t.yaml");
  REQUIRE_FALSE(bad_kind.ok());
  CHECK(bad_kind.status().message().find("t.yaml:4:11: signatures[0].kind: unknown failure kind 'oops'") == 0);
  auto bad_regex = ParseTriageSpec("version: 1\nsignatures:\n  - {id: x, kind: oom, regex: '(', hint: h}\n", "t.yaml");
  REQUIRE_FALSE(bad_regex.ok());
  CHECK(bad_regex.status().message().find("signatures[0].regex: invalid regular expression") != std::string::npos);
  auto unknown_key = ParseTriageSpec("version: 1\nsignatures:\n  - {id: x, kind: oom, regex: a, hint: h, colour: red}\n", "t.yaml");
  REQUIRE_FALSE(unknown_key.ok());
  CHECK(unknown_key.status().message().find("unknown key 'colour'") != std::string::npos);
  auto duplicate = ParseTriageSpec("version: 1\nsignatures:\n  - {id: x, kind: oom, regex: a, hint: h}\n  - {id: x, kind: oom, regex: b, hint: h}\n", "t.yaml");
  REQUIRE_FALSE(duplicate.ok());
  CHECK(duplicate.status().message().find("duplicate signature id 'x'") != std::string::npos);
  auto no_version = ParseTriageSpec("signatures: []\n", "t.yaml");
  CHECK_FALSE(no_version.ok());
  auto negative = ParseTriageSpec("version: 1\nhang: {min_silence_s: -3}\nsignatures: []\n", "t.yaml");
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().message().find("hang.min_silence_s: expected a number of 0 or more, found '-3'") != std::string::npos);
}

TEST_CASE("glued terminate banners lose to the collective timeout named later, with its rank", "[support][triage]") {
  std::string log =
      "0: iteration 10/100 |\n"
      "1: terminate called after throwing an instance of 'c10::DistBackendError'terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "1:   what():  [PG 0 Rank 1] Process group watchdog thread terminated with exception: DistBackendError\n"
      "3: [rank3]:[E ProcessGroupNCCL.cpp:1] [PG 0 Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7)\n";
  Failure f = Triage(log, {{1, 10, 100, 1.0, ""}}, JobEnd{1, "failed", 50});
  CHECK(f.kind == FailureKind::kNcclTimeout);
  CHECK(f.signature == "timeout");
  CHECK(f.line == 4);
  CHECK(f.process == "rank 3");
  CHECK(f.infrastructure);
}

TEST_CASE("an OOM inside Ray's exception wrapper is an OOM", "[support][triage]") {
  std::string log =
      "(MegatronTrainRayActor pid=1, ip=10.0.0.1) step 1: {'train/loss': 1.0}\n"
      "ray.exceptions.RayTaskError(OutOfMemoryError): ray::MegatronTrainRayActor.train() (pid=1, ip=10.0.0.1)\n"
      "(MegatronTrainRayActor pid=1, ip=10.0.0.1) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
  Failure f = Triage(log, {}, JobEnd{1, "failed", 50});
  CHECK(f.kind == FailureKind::kOom);
  CHECK(f.line == 2);  // the first line naming the OOM (the wrapper's own line names it too)
}

TEST_CASE("before_training signatures only look before the training marker", "[support][triage]") {
  std::string log = "ValueError: bad flag\niteration 1\nValueError: later\n";
  CHECK(Triage(log, {}, JobEnd{1, "failed", 5}, 1).kind == FailureKind::kConfigError);
  std::string late = "iteration 1\nValueError: in a data worker\n";
  CHECK(Triage(late, {}, JobEnd{1, "failed", 5}, 0).kind == FailureKind::kUnknown);
}

TEST_CASE("a hang: the training rank falls silent while other processes keep logging", "[support][triage]") {
  std::string log =
      "(TrainActor pid=1) [2026-01-01 00:00:00] step 1 done\n"
      "(TrainActor pid=1) [2026-01-01 00:00:10] step 2 done\n"
      "(RolloutManager pid=2) [2026-01-01 00:01:00] generating\n"
      "(RolloutManager pid=2) [2026-01-01 00:20:00] generating\n";
  std::vector<ProgressRecord> progress = {{1, 1, 0, 10.0, ""}, {2, 2, 0, 10.0, ""}};
  Failure f = Triage(log, progress, JobEnd{-1, "timed_out", 1500});
  CHECK(f.kind == FailureKind::kHang);
  CHECK(f.signature == "hang_no_progress");
  CHECK(f.infrastructure);  // retried once by the tune step before the recipe is blamed
  CHECK(f.line == 4);
  CHECK(f.process == "RolloutManager pid=2");
  CHECK(f.hint.find("no training step for 1190 s after step 2") == 0);
  CHECK(f.hint.find("other output went on (2 lines, e.g. from RolloutManager pid=2)") != std::string::npos);

  // The same silence, shorter than 10 step times and min_silence_s: not a hang but the time limit.
  std::string short_log =
      "(TrainActor pid=1) [2026-01-01 00:00:00] step 1 done\n"
      "(TrainActor pid=1) [2026-01-01 00:00:10] step 2 done\n"
      "(RolloutManager pid=2) [2026-01-01 00:00:50] generating\n";
  Failure g = Triage(short_log, progress, JobEnd{-1, "timed_out", 60});
  CHECK(g.kind == FailureKind::kTimeLimit);

  // A process that exited 0 by itself did not hang, however quiet its end.
  Failure clean = Triage(log, progress, JobEnd{0, "succeeded", 1500});
  CHECK(clean.kind == FailureKind::kNone);
}

TEST_CASE("without timestamps, run time the steps do not explain is a hang", "[support][triage]") {
  std::string log = "step 1\nstep 2\nother\n";
  std::vector<ProgressRecord> progress = {{1, 1, 0, 1.0, ""}, {2, 2, 0, 1.0, ""}};
  Failure f = Triage(log, progress, JobEnd{-1, "timed_out", 1000});
  CHECK(f.kind == FailureKind::kHang);
  CHECK(f.hint.find("about 898 s of the job's 1000 s are not explained by logged steps") == 0);
  // Planned steps all logged: finished, not hung.
  std::vector<ProgressRecord> done = {{1, 1, 2, 1.0, ""}, {2, 2, 2, 1.0, ""}};
  CHECK(Triage(log, done, JobEnd{-1, "timed_out", 1000}).kind == FailureKind::kTimeLimit);
  // No step at all within the start-up allowance plus the silence: a hang.
  CHECK(Triage("loading\n", {}, JobEnd{-1, "timed_out", 200}).kind == FailureKind::kHang);
  CHECK(Triage("loading\n", {}, JobEnd{-1, "timed_out", 150}).kind == FailureKind::kTimeLimit);
}

TEST_CASE("the launcher's report when nothing in the log explains the end", "[support][triage]") {
  CHECK(Triage("x\n", {}, JobEnd{0, "succeeded", 5}).kind == FailureKind::kNone);
  Failure code = Triage("x\nlast words\n", {}, JobEnd{3, "failed", 5});
  CHECK(code.kind == FailureKind::kUnknown);
  CHECK(code.signature == "job_end_failed");
  CHECK(code.evidence == "last words");
  CHECK(Triage("x\n", {}, JobEnd{-1, "node_failure", 5}).infrastructure);
  CHECK(Triage("x\n", {}, JobEnd{-1, "cancelled", 5}).kind == FailureKind::kCancelled);
}

}  // namespace
}  // namespace attune::support
