#include <catch2/catch.hpp>

#include "automodel_fixture.h"

using namespace attune;
using namespace attune::automodel::testing;

namespace {

std::string Verdict(const Recipe& base, const std::string& key, const std::string& value) {
  auto v = TheStack().CheckObjective(base, With(base, key, value));
  return v.pass ? "pass" : v.rule_id;
}

}  // namespace

TEST_CASE("the gate refuses every objective change by its rule id", "[automodel][gate]") {
  Recipe base = Import("launch_automodel.sh");
  CHECK(Verdict(base, "--optimizer.lr", "2e-5") == "obj.optimizer");
  CHECK(Verdict(base, "--step_scheduler.global_batch_size", "128") == "obj.batch");
  CHECK(Verdict(base, "--seed", "1") == "obj.seed");
  CHECK(Verdict(base, "--dataset.seq_length", "2048") == "obj.data");
  CHECK(Verdict(base, "--model.pretrained_model_name_or_path", "x") == "obj.model");
  CHECK(Verdict(base, "--distributed.mp_policy.param_dtype", "float32") == "obj.precision");
  CHECK(Verdict(base, "--fp8.enabled", "true") == "obj.precision");
  CHECK(Verdict(base, "--peft.dim", "8") == "obj.peft");
  CHECK(Verdict(base, "--packed_sequence.packed_sequence_size", "4096") == "obj.packed_sequence");
  CHECK(Verdict(base, "--model.backend.fake_balanced_gate", "true") == "obj.fake_balanced_gate");
  CHECK(Verdict(base, "--loss_fn._target_", "ChunkedCrossEntropy") == "obj.loss_fn");
  CHECK(Verdict(base, "--distributed.grad_reduce_in_fp32", "true") == "obj.megatron_fsdp_numerics");
  CHECK(Verdict(base, "--model.backend.experts", "torch_mm_mxfp8") == "obj.experts_mxfp8");
}

TEST_CASE("keys in neither list fail closed; neutral keys and levers pass", "[automodel][gate]") {
  Recipe base = Import("launch_automodel.sh");
  CHECK(Verdict(base, "--model.some_new_knob", "1") == "fail_closed.unknown_key");
  CHECK(Verdict(base, "env:SOMETHING", "1") == "fail_closed.unknown_key");
  CHECK(Verdict(base, "--checkpoint.enabled", "false") == "pass");
  CHECK(Verdict(base, "--distributed.activation_checkpointing", "false") == "pass");
  CHECK(Verdict(base, "--step_scheduler.local_batch_size", "4") == "pass");
}

TEST_CASE("micro-batch size of a MoE model is refused: its aux loss is per micro-batch", "[automodel][gate]") {
  std::vector<std::string> unknown;
  auto moe = attune::automodel::ImportLaunchScript("automodel moe_pretrain.yaml --nproc-per-node 8\n",
                                                   FixtureDir(), &unknown);
  REQUIRE(moe.ok());
  CHECK(Verdict(*moe, "--step_scheduler.local_batch_size", "4") == "cond.local_batch_size_moe_aux_loss");
}

TEST_CASE("a TP change widens the paired-loss tolerance", "[automodel][gate]") {
  Recipe base = Import("launch_automodel.sh");
  auto narrow = TheStack().CheckObjective(base, With(base, "--distributed.activation_checkpointing", "false"));
  auto wide = TheStack().CheckObjective(base, With(base, "--distributed.tp_size", "4"));
  REQUIRE(narrow.pass);
  REQUIRE(wide.pass);
  CHECK(wide.loss_rel_tolerance > narrow.loss_rel_tolerance);
}

TEST_CASE("the benchmark form: checkpoints and validation off, max_steps lowered only with a pinned schedule", "[automodel][benchmark]") {
  Recipe recipe = Import("launch_automodel.sh");  // max_steps 200, ckpt every 100, val every 50, no lr_scheduler
  auto form = TheStack().BenchmarkForm(recipe);
  REQUIRE(form.ok());
  CHECK(GetValue(*form, "--checkpoint.enabled") == "false");
  CHECK(GetValue(*form, "--step_scheduler.ckpt_every_steps") == "1000000000");
  CHECK(GetValue(*form, "--step_scheduler.val_every_steps") == "1000000000");
  CHECK(GetValue(*form, "--step_scheduler.save_checkpoint_every_epoch") == "false");
  CHECK(GetValue(*form, "--step_scheduler.max_steps") == "50");  // no scheduler: nothing derives from it
  CHECK(TheStack().BenchmarkLength(*form) == 50);
  CHECK(TheStack().BenchmarkLength(recipe) == 200);
  CHECK_FALSE(TheStack().BenchmarkLength(With(recipe, "--step_scheduler.max_steps", "0")).has_value());
  // The form passes the form's gate; the same change as a candidate is refused: a shorter run
  // must never ship.
  CHECK(TheStack().CheckBenchmarkForm(recipe, *form).pass);
  GateVerdict as_candidate = TheStack().CheckObjective(recipe, *form);
  CHECK_FALSE(as_candidate.pass);
  CHECK(as_candidate.rule_id == "obj.batch");

  // A cosine schedule whose decay and warm-up come from max_steps: the length stays.
  Recipe derived = With(recipe, "--lr_scheduler.lr_decay_style", "cosine");
  auto derived_form = TheStack().BenchmarkForm(derived);
  REQUIRE(derived_form.ok());
  CHECK(GetValue(*derived_form, "--step_scheduler.max_steps") == std::nullopt);
  CHECK(GetValue(*derived_form, "--checkpoint.enabled") == "false");
  CHECK(TheStack().CheckBenchmarkForm(derived, *derived_form).pass);
  Recipe shortened = With(derived, "--step_scheduler.max_steps", "50");
  GateVerdict refused = TheStack().CheckBenchmarkForm(derived, shortened);
  CHECK_FALSE(refused.pass);
  CHECK(refused.rule_id == "benchmark.max_steps");

  // Decay and warm-up pinned: max_steps may be lowered again; never raised.
  Recipe pinned = With(With(derived, "--lr_scheduler.lr_decay_steps", "200"), "--lr_scheduler.lr_warmup_steps", "20");
  auto pinned_form = TheStack().BenchmarkForm(pinned);
  REQUIRE(pinned_form.ok());
  CHECK(GetValue(*pinned_form, "--step_scheduler.max_steps") == "50");
  CHECK(TheStack().CheckBenchmarkForm(pinned, *pinned_form).pass);
  CHECK_FALSE(TheStack().CheckBenchmarkForm(pinned, With(pinned, "--step_scheduler.max_steps", "500")).pass);
  // Anything else the form changed is judged as a candidate would be.
  CHECK_FALSE(TheStack().CheckBenchmarkForm(pinned, With(*pinned_form, "--optimizer.lr", "1e-3")).pass);
}

TEST_CASE("the profiled form is refused: AutoModel's recipes write no PyTorch-profiler trace", "[automodel][profile]") {
  auto form = TheStack().BenchmarkForm(Import("launch_automodel.sh"));
  REQUIRE(form.ok());
  auto profiled = TheStack().ProfileForm(*form, "/campaign/jobs/j/traces");
  REQUIRE_FALSE(profiled.ok());
  // Unimplemented ends the campaign's profile step as `unsupported`, recording nothing.
  CHECK(profiled.status().code() == StatusCode::kUnimplemented);
  CHECK_THAT(profiled.status().message(), Catch::Contains("automodel stack cannot profile"));
  CHECK_THAT(profiled.status().message(), Catch::Contains("nsys_start"));
  CHECK_THAT(profiled.status().message(), Catch::Contains("attune profile analyze"));
}
