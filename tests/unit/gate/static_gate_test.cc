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

// Field by field, so that a field added to ClusterInfo keeps its default here (GCC 12 warns on an
// aggregate initializer that leaves one out, designated or not).
const ClusterInfo kH100 = [] {
  ClusterInfo c;
  c.device_type = "H100";
  c.device_memory_gib = 80;
  c.peak_tflops = 989;
  c.devices_per_node = 8;
  c.max_nodes = 1;
  c.compute_capability_major = 9;
  return c;
}();

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

TEST_CASE("the gate owns the campaign rules: changes that do not apply, no change, duplicates",
          "[gate]") {
  auto stack = MegatronStack();
  const Recipe base = Baseline();
  auto moves = stack->LegalMoves(base, kH100);
  REQUIRE(moves.size() >= 2);
  Recipe first = base;
  REQUIRE(ApplyChanges(&first, moves[0].changes).ok());
  CandidateGateInput in;
  in.base_id = "baseline";
  in.base = &base;
  SECTION("changes that do not apply are refused with the apply error") {
    in.apply_error = "--no-such-flag is not in the recipe";
    GateVerdict v = CandidateGateCheck(*stack, base, kH100, in);
    CHECK_FALSE(v.pass);
    CHECK(v.rule_id == "engine.changes_do_not_apply");
    CHECK_THAT(v.reason, Catch::Contains("--no-such-flag is not in the recipe"));
  }
  SECTION("a candidate identical to its parent is refused") {
    in.candidate = &base;
    GateVerdict v = CandidateGateCheck(*stack, base, kH100, in);
    CHECK_FALSE(v.pass);
    CHECK(v.rule_id == "engine.no_change");
  }
  SECTION("a candidate that returns to the baseline from another parent is a duplicate") {
    in.base_id = "c001";
    in.base = &first;
    in.candidate = &base;
    GateVerdict v = CandidateGateCheck(*stack, base, kH100, in);
    CHECK_FALSE(v.pass);
    CHECK(v.rule_id == "engine.duplicate");
    CHECK_THAT(v.reason, Catch::Contains("baseline"));
  }
  SECTION("a candidate that repeats an earlier one names it and its outcome") {
    in.candidate = &first;
    in.earlier.push_back({"c004", RecipeId(first), "slower"});
    GateVerdict v = CandidateGateCheck(*stack, base, kH100, in);
    CHECK_FALSE(v.pass);
    CHECK(v.rule_id == "engine.duplicate");
    CHECK_THAT(v.reason, Catch::Contains("c004") && Catch::Contains("slower"));
  }
  SECTION("a new legal move passes, then the static rules still apply") {
    in.candidate = &first;
    Recipe other = base;
    REQUIRE(ApplyChanges(&other, moves[1].changes).ok());
    in.earlier.push_back({"c002", RecipeId(other), "slower"});
    CHECK(CandidateGateCheck(*stack, base, kH100, in).pass);
    Recipe objective = first;
    REQUIRE(SetValue(&objective, "--lr", "1e-3").ok());
    in.candidate = &objective;
    GateVerdict v = CandidateGateCheck(*stack, base, kH100, in);
    CHECK_FALSE(v.pass);
    CHECK(v.rule_id.rfind("engine.", 0) != 0);
  }
}

Recipe Production() {
  Recipe r = Baseline();
  REQUIRE(SetValue(&r, "--train-iters", "500000").ok());
  REQUIRE(SetValue(&r, "--log-interval", "100").ok());
  REQUIRE(SetValue(&r, "--save", "/ckpt").ok());
  REQUIRE(SetValue(&r, "--save-interval", "2000").ok());
  REQUIRE(SetValue(&r, "--eval-interval", "1000").ok());
  return r;
}

TEST_CASE("the megatron benchmark form stops a long recipe early and changes only run control", "[gate][benchmark]") {
  auto stack = MegatronStack();
  const Recipe prod = Production();
  auto run = stack->BenchmarkForm(prod);
  REQUIRE(run.ok());
  CHECK(GetValue(*run, "--exit-interval") == "50");
  CHECK(GetValue(*run, "--train-iters") == "500000");
  CHECK(GetValue(*run, "--log-interval") == "1");
  CHECK(GetValue(*run, "--eval-iters") == "0");
  CHECK_FALSE(GetValue(*run, "--save").has_value());
  CHECK_FALSE(GetValue(*run, "--save-interval").has_value());
  CHECK(CheckBenchmarkForm(*stack, prod, *run).ok());
  // The gate judges candidates against the recipe, never against its benchmark form.
  CHECK(StaticGateCheck(*stack, prod, prod, kH100).pass);
}

TEST_CASE("the megatron benchmark form leaves a short recipe as it is", "[gate][benchmark]") {
  auto stack = MegatronStack();
  const Recipe short_one = Baseline();  // 30 iterations, logs every one, no checkpoints
  auto run = stack->BenchmarkForm(short_one);
  REQUIRE(run.ok());
  CHECK(Diff(short_one, *run).empty());

  Recipe own_exit = Production();
  REQUIRE(SetValue(&own_exit, "--exit-interval", "20").ok());
  run = stack->BenchmarkForm(own_exit);
  REQUIRE(run.ok());
  CHECK(GetValue(*run, "--exit-interval") == "20");  // already short: kept
  // The length a job of the form logs when nothing stops it (the adaptive stop projects with it).
  CHECK(stack->BenchmarkLength(*run) == 20);
  CHECK(stack->BenchmarkLength(*stack->BenchmarkForm(Production())) == 50);
  CHECK(stack->BenchmarkLength(Production()) == 500000);
}

TEST_CASE("the megatron benchmark form measures sample-based and unbounded recipes", "[gate][benchmark]") {
  auto stack = MegatronStack();
  Recipe samples = Baseline();
  REQUIRE(SetValue(&samples, "--train-iters", std::nullopt).ok());
  REQUIRE(SetValue(&samples, "--train-samples", "3840").ok());  // 30 iterations at GBS 128
  auto run = stack->BenchmarkForm(samples);
  REQUIRE(run.ok());
  CHECK_FALSE(GetValue(*run, "--exit-interval").has_value());
  REQUIRE(SetValue(&samples, "--train-samples", "300000000").ok());
  run = stack->BenchmarkForm(samples);
  REQUIRE(run.ok());
  CHECK(GetValue(*run, "--exit-interval") == "50");
  CHECK(GetValue(*run, "--train-samples") == "300000000");
  CHECK(stack->BenchmarkLength(*run) == 50);
  REQUIRE(SetValue(&samples, "--exit-interval", std::nullopt).ok());
  REQUIRE(SetValue(&samples, "--rampup-batch-size", "16 16 1000").ok());
  CHECK_FALSE(stack->BenchmarkLength(samples).has_value());  // a ramped batch: unknown length
}

TEST_CASE("the megatron benchmark form runs a batch-size ramp's final batch", "[gate][benchmark]") {
  // A 50-iteration job would never leave the ramp's first batch: it times the batch the run
  // trains at from its first step instead.
  auto stack = MegatronStack();
  Recipe ramp = Production();
  REQUIRE(SetValue(&ramp, "--rampup-batch-size", "16 16 5859375").ok());
  auto run = stack->BenchmarkForm(ramp);
  REQUIRE(run.ok());
  CHECK_FALSE(GetValue(*run, "--rampup-batch-size").has_value());
  CHECK(GetValue(*run, "--global-batch-size") == GetValue(ramp, "--global-batch-size"));
  CHECK(GetValue(*run, "--exit-interval") == "50");
  CHECK(CheckBenchmarkForm(*stack, ramp, *run).ok());
  // Megatron-LM's step schedule (its GPT-3 example's): the batch of the last step, whatever the
  // order the steps are written in.
  Recipe schedule = Production();
  REQUIRE(SetValue(&schedule, "--global-batch-size", std::nullopt).ok());
  const std::string steps = "0:16 2.4B:320 12B:1536 4.8B:624";
  REQUIRE(SetValue(&schedule, "--step-batch-size-schedule", steps).ok());
  run = stack->BenchmarkForm(schedule);
  REQUIRE(run.ok());
  CHECK_FALSE(GetValue(*run, "--step-batch-size-schedule").has_value());
  CHECK(GetValue(*run, "--global-batch-size") == "1536");
  CHECK(CheckBenchmarkForm(*stack, schedule, *run).ok());
  // Only the ramp may go: anything else the form changed is still refused, and so is a form that
  // kept a ramp's first batch.
  Recipe other = *run;
  REQUIRE(SetValue(&other, "--lr", "1e-3").ok());
  CHECK_FALSE(CheckBenchmarkForm(*stack, schedule, other).ok());
  Recipe first_batch = *run;
  REQUIRE(SetValue(&first_batch, "--global-batch-size", "16").ok());
  CHECK_FALSE(CheckBenchmarkForm(*stack, schedule, first_batch).ok());
  // A schedule that does not parse is an error that names it.
  REQUIRE(SetValue(&schedule, "--step-batch-size-schedule", "0:16 later:1536").ok());
  auto bad = stack->BenchmarkForm(schedule);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("'later:1536' is not THRESHOLD:BATCH"));
}

TEST_CASE("a benchmark form that would train another model or resize the job is refused", "[gate][benchmark]") {
  auto stack = MegatronStack();
  const Recipe prod = Production();
  Recipe lr = prod;
  REQUIRE(SetValue(&lr, "--lr", "1e-3").ok());
  Status s = CheckBenchmarkForm(*stack, prod, lr);
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(s.message(), Catch::Contains("obj.lr"));
  CHECK_THAT(s.message(), Catch::Contains("plugin defect"));
  Recipe iters = prod;
  REQUIRE(SetValue(&iters, "--train-iters", "50").ok());  // changes the LR schedule
  CHECK_FALSE(CheckBenchmarkForm(*stack, prod, iters).ok());
  Recipe bigger = prod;
  bigger.topology.nodes = 2;
  CHECK_THAT(CheckBenchmarkForm(*stack, prod, bigger).message(), Catch::Contains("topology"));
}

TEST_CASE("the megatron profiled form adds only profiling flags, inside the run", "[gate][profile]") {
  auto stack = MegatronStack();
  const Recipe base = Baseline();
  auto form = stack->BenchmarkForm(base);
  REQUIRE(form.ok());
  auto profiled = stack->ProfileForm(*form, "/campaign/jobs/j/traces");
  REQUIRE(profiled.ok());
  CHECK(GetValue(*profiled, "--profile") == std::optional<std::string>(""));
  CHECK(GetValue(*profiled, "--use-pytorch-profiler") == std::optional<std::string>(""));
  CHECK(GetValue(*profiled, "--tensorboard-dir") == std::optional<std::string>("/campaign/jobs/j/traces"));
  const long start = std::stol(*GetValue(*profiled, "--profile-step-start"));
  const long end = std::stol(*GetValue(*profiled, "--profile-step-end"));
  CHECK(start == 10);
  CHECK(end == 12);
  const int world = base.topology.WorldSize();
  std::string ranks;
  for (int r = 0; r < std::min(world, 8); ++r) ranks += (r ? " " : "") + std::to_string(r);
  CHECK(GetValue(*profiled, "--profile-ranks") == std::optional<std::string>(ranks));
  // The engine accepts it as a benchmark form of the recipe: same model, same job size.
  CHECK(CheckBenchmarkForm(*stack, base, *profiled).ok());
  for (const Change& c : Diff(*form, *profiled)) {
    INFO(c.key);
    CHECK((c.key.find("profile") != std::string::npos || c.key == "--tensorboard-dir"));
  }
  SECTION("a short run gets its window inside it; one too short to profile is refused") {
    Recipe shorter = *form;
    REQUIRE(SetValue(&shorter, "--exit-interval", std::nullopt).ok());
    REQUIRE(SetValue(&shorter, "--train-iters", "6").ok());
    auto p6 = stack->ProfileForm(shorter, "/t");
    REQUIRE(p6.ok());
    CHECK(GetValue(*p6, "--profile-step-start") == std::optional<std::string>("3"));
    CHECK(GetValue(*p6, "--profile-step-end") == std::optional<std::string>("5"));
    REQUIRE(SetValue(&shorter, "--train-iters", "2").ok());
    auto p2 = stack->ProfileForm(shorter, "/t");
    REQUIRE_FALSE(p2.ok());
    CHECK(p2.status().code() == StatusCode::kFailedPrecondition);
    CHECK_THAT(p2.status().message(), Catch::Contains("2 iteration(s)"));
  }
}

}  // namespace
}  // namespace attune
