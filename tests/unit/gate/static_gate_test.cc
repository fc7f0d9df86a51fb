// The static gate with the real megatron stack: engine rules first, then validation, then the
// stack's objective rules; every legal move passes.
#include <catch2/catch.hpp>

#include "attune/recipe.h"
#include "gate/static_gate.h"
#include "megatron_stack.h"

namespace attune {
namespace {

std::unique_ptr<Stack> MegatronStack() {
  PluginContext ctx;
  ctx.data_dir = ATTUNE_SOURCE_DIR;
  ctx.log = [](LogLevel, const std::string&) {};
  auto plugin = megatron::Create(ctx);
  REQUIRE(plugin.ok());
  return std::unique_ptr<Stack>(dynamic_cast<Stack*>(plugin->release()));
}

Recipe Baseline() {
  auto r = LoadRecipeFile(std::string(ATTUNE_SOURCE_DIR) + "/tests/e2e/workflows/llama8b_h100.yaml");
  REQUIRE(r.ok());
  return *r;
}

const ClusterInfo kH100{"H100", 80, 989, 8, 1, 9, false};

TEST_CASE("the gate refuses a candidate that runs another program", "[gate]") {
  auto stack = MegatronStack();
  Recipe c = Baseline();
  c.entry = {"other_train.py"};
  GateVerdict v = StaticGateCheck(*stack, Baseline(), c, kH100);
  CHECK_FALSE(v.pass);
  CHECK(v.rule_id == "engine.entry_changed");
  CHECK_THAT(v.reason, Catch::Contains("other_train.py"));
}

TEST_CASE("the gate refuses a candidate for another stack", "[gate]") {
  auto stack = MegatronStack();
  Recipe c = Baseline();
  c.stack = "automodel";
  GateVerdict v = StaticGateCheck(*stack, Baseline(), c, kH100);
  CHECK_FALSE(v.pass);
  CHECK(v.rule_id == "engine.stack_changed");
}

TEST_CASE("the gate refuses a candidate that does not validate for the cluster", "[gate]") {
  auto stack = MegatronStack();
  Recipe c = Baseline();
  REQUIRE(SetValue(&c, "--tensor-model-parallel-size", "3").ok());
  GateVerdict v = StaticGateCheck(*stack, Baseline(), c, kH100);
  CHECK_FALSE(v.pass);
  CHECK(v.rule_id == "engine.validate");
}

TEST_CASE("the gate refuses a change of the training objective with the stack's rule", "[gate]") {
  auto stack = MegatronStack();
  Recipe c = Baseline();
  REQUIRE(SetValue(&c, "--lr", "1e-3").ok());
  GateVerdict v = StaticGateCheck(*stack, Baseline(), c, kH100);
  CHECK_FALSE(v.pass);
  CHECK_FALSE(v.rule_id.empty());
  CHECK(v.rule_id.rfind("engine.", 0) != 0);
}

TEST_CASE("every legal move of the stack passes the gate", "[gate]") {
  auto stack = MegatronStack();
  const Recipe base = Baseline();
  auto moves = stack->LegalMoves(base, kH100);
  REQUIRE_FALSE(moves.empty());
  for (const auto& m : moves) {
    Recipe c = base;
    REQUIRE(ApplyChanges(&c, m.changes).ok());
    GateVerdict v = StaticGateCheck(*stack, base, c, kH100);
    INFO(m.lever_id << ": " << v.rule_id << ": " << v.reason);
    CHECK(v.pass);
  }
}

}  // namespace
}  // namespace attune
