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
