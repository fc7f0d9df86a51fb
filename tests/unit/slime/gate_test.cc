#include <catch2/catch.hpp>

#include <set>

#include "rules.h"
#include "slime_fixture.h"

using namespace attune;
using namespace attune::slime;
using namespace attune::slime::testing;

namespace {

GateVerdict Gate(const Recipe& base, const std::string& key, const std::optional<std::string>& value) {
  return TheStack().CheckObjective(base, With(base, key, value));
}

}  // namespace

TEST_CASE("objective-changing slime edits are refused by their rule", "[slime][gate]") {
  Recipe base = Qwen3Recipe();
  const std::pair<const char*, const char*> refused[] = {
      {"--rollout-batch-size", "obj.rollout_batch"}, {"--n-samples-per-prompt", "obj.rollout_batch"},
      {"--global-batch-size", "obj.rollout_batch"},  {"--rollout-temperature", "obj.sampling"},
      {"--rollout-top-p", "obj.sampling"},           {"--rollout-max-response-len", "obj.sampling"},
      {"--advantage-estimator", "obj.loss"},         {"--kl-loss-coef", "obj.loss"},
      {"--eps-clip-high", "obj.loss"},               {"--use-tis", "obj.loss"},
      {"--update-weights-interval", "obj.staleness"},{"--rm-type", "obj.reward"},
      {"--lr", "obj.optimizer"},                     {"--hf-checkpoint", "obj.model"},
  };
  for (const auto& [key, rule] : refused) {
    INFO(key);
    GateVerdict v = Gate(base, key, "7");
    CHECK_FALSE(v.pass);
    CHECK(v.rule_id == rule);
  }
}

TEST_CASE("Megatron flags of a slime recipe go to the Megatron gate", "[slime][gate]") {
  Recipe base = Qwen3Recipe();
  GateVerdict shape = Gate(base, "--hidden-size", "4096");
  CHECK_FALSE(shape.pass);
  CHECK(shape.reason.find("(Megatron flag)") != std::string::npos);
  GateVerdict tp = Gate(base, "--tensor-model-parallel-size", "4");
  CHECK(tp.pass);
  CHECK(tp.loss_rel_tolerance >= 0.05);  // TP changes RNG streams (Megatron's catalog)
  GateVerdict unknown = Gate(base, "--made-up-megatron-flag", "1");
  CHECK_FALSE(unknown.pass);
  CHECK(unknown.rule_id == "fail_closed.unknown_key");
}

TEST_CASE("slime levers pass; unknown slime-family flags fail closed in slime's gate", "[slime][gate]") {
  Recipe base = Qwen3Recipe();
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"--sglang-mem-fraction-static", "0.8"}, {"--rollout-num-gpus", "8"},
           {"--rollout-num-gpus-per-engine", "1"}, {"--max-tokens-per-gpu", "16384"},
           {"--offload-train", ""}}) {
    INFO(key);
    GateVerdict v = Gate(base, key, value);
    CHECK(v.pass);
  }
  // slime normalises by the step's global batch: the micro-batch size is slime's lever, not
  // Megatron's conditional rule about --calculate-per-token-loss.
  CHECK(Gate(With(base, "--use-dynamic-batch-size", std::nullopt), "--micro-batch-size", "2").pass);
  GateVerdict v = Gate(base, "--sglang-made-up-knob", "3");
  CHECK_FALSE(v.pass);
  CHECK(v.rule_id == "fail_closed.unknown_key");
  CHECK(SlimeOwnsKey(TheStack().knowledge(), "--sglang-made-up-knob"));
  CHECK_FALSE(SlimeOwnsKey(TheStack().knowledge(), "--tensor-model-parallel-size"));
}

TEST_CASE("conditional rules refuse placement changes that alter the sample mix", "[slime][gate]") {
  Recipe base = Qwen3Recipe();
  REQUIRE(Gate(base, "--rollout-num-gpus", "8").pass);
  GateVerdict partial = Gate(With(base, "--partial-rollout", ""), "--rollout-num-gpus", "8");
  CHECK_FALSE(partial.pass);
  CHECK(partial.rule_id == "cond.partial_rollout_placement");
  Recipe filtered = With(With(base, "--over-sampling-batch-size", "64"), "--dynamic-sampling-filter-path",
                         "slime.rollout.filter_hub.dynamic_sampling_filters.check_reward_nonzero_std");
  GateVerdict f = Gate(filtered, "--sglang-server-concurrency", "256");
  CHECK_FALSE(f.pass);
  CHECK(f.rule_id == "cond.dynamic_filter_completion_order");
  GateVerdict flops = Gate(With(base, "--balance-by-flops", ""), "--max-tokens-per-gpu", "4096");
  CHECK_FALSE(flops.pass);
  CHECK(flops.rule_id == "cond.balance_by_flops_token_cap");
}

TEST_CASE("a mixed edit is refused when either side refuses", "[slime][gate]") {
  Recipe base = Qwen3Recipe();
  Recipe both = With(With(base, "--sglang-mem-fraction-static", "0.8"), "--lr", "2e-6");
  CHECK_FALSE(TheStack().CheckObjective(base, both).pass);
  Recipe both2 = With(With(base, "--sglang-mem-fraction-static", "0.8"), "--tensor-model-parallel-size", "4");
  CHECK(TheStack().CheckObjective(base, both2).pass);
}

TEST_CASE("legal moves validate and pass the gate, and include slime's levers", "[slime][gate][moves]") {
  Recipe base = Qwen3Recipe();
  ClusterInfo cluster;
  auto moves = TheStack().LegalMoves(base, cluster);
  REQUIRE_FALSE(moves.empty());
  std::set<std::string> levers;
  for (const auto& m : moves) {
    INFO(m.summary);
    levers.insert(m.lever_id);
    Recipe next = base;
    for (const auto& c : m.changes) REQUIRE(SetValue(&next, c.key, c.to).ok());
    CHECK(TheStack().Validate(next, cluster).ok());
    CHECK(TheStack().CheckObjective(base, next).pass);
  }
  CHECK(levers.count("sglang_mem_fraction_static"));
  CHECK(levers.count("max_tokens_per_gpu"));
  CHECK(levers.count("tensor_parallel"));  // from the Megatron catalog
}

TEST_CASE("a move that names --rollout-num-gpus on a colocated recipe says absent meant every actor GPU",
          "[slime][moves]") {
  // Colocated on 2 nodes of 8: generation had all 16 GPUs; naming fewer is a move down.
  Recipe colocated = With(With(With(Qwen3Recipe(), "--colocate", ""), "--actor-num-nodes", "2"),
                          "--actor-num-gpus-per-node", "8");
  colocated = With(colocated, "--rollout-num-gpus", std::nullopt);
  ClusterInfo cluster;
  int seen = 0;
  for (const auto& m : TheStack().LegalMoves(colocated, cluster)) {
    for (const auto& c : m.changes) {
      if (c.key != "--rollout-num-gpus" || c.from) continue;
      ++seen;
      INFO(m.summary);
      REQUIRE(m.defaults.count("--rollout-num-gpus"));
      CHECK(m.defaults.at("--rollout-num-gpus") == "16");
      CHECK(c.to != "16");  // naming what absent meant is no move
    }
  }
  CHECK(seen > 0);
}

TEST_CASE("the benchmark form: no checkpoints or periodic evaluation, fewer rollouts only with a pinned schedule", "[slime][benchmark]") {
  // A constant LR without warm-up: the schedule does not depend on --num-rollout.
  Recipe recipe = With(With(With(With(Qwen3Recipe(), "--num-rollout", "3000"), "--lr-decay-style", "constant"),
                            "--save-interval", "20"),
                       "--eval-prompt-data", "aime /data/aime.jsonl");
  recipe = With(With(recipe, "--eval-interval", "10"), "--save", "/ckpt");
  auto form = TheStack().BenchmarkForm(recipe);
  REQUIRE(form.ok());
  CHECK(GetValue(*form, "--num-rollout") == "5");
  CHECK(TheStack().BenchmarkLength(*form) == 5);
  CHECK(TheStack().BenchmarkLength(recipe) == 3000);
  CHECK_FALSE(TheStack().BenchmarkLength(With(recipe, "--num-rollout", "many")).has_value());
  CHECK_FALSE(GetValue(*form, "--save-interval").has_value());  // no interval: slime saves nothing
  CHECK_FALSE(GetValue(*form, "--eval-interval").has_value());
  CHECK(GetValue(*form, "--skip-eval-before-train") == "");
  CHECK(GetValue(*form, "--save") == "/ckpt");
  CHECK(TheStack().CheckBenchmarkForm(recipe, *form).pass);
  GateVerdict as_candidate = TheStack().CheckObjective(recipe, *form);
  CHECK_FALSE(as_candidate.pass);  // a shorter run is never shipped
  CHECK(as_candidate.rule_id == "obj.rollout_batch");

  // Megatron's default decay over train_iters (sized from --num-rollout): the length stays.
  Recipe decaying = With(recipe, "--lr-decay-style", "cosine");
  auto decaying_form = TheStack().BenchmarkForm(decaying);
  REQUIRE(decaying_form.ok());
  CHECK(GetValue(*decaying_form, "--num-rollout") == "3000");
  CHECK(TheStack().CheckBenchmarkForm(decaying, *decaying_form).pass);
  GateVerdict refused = TheStack().CheckBenchmarkForm(decaying, With(*decaying_form, "--num-rollout", "5"));
  CHECK_FALSE(refused.pass);
  CHECK(refused.rule_id == "benchmark.num_rollout");
  // A constant LR with warm-up iterations: Megatron asserts warm-up < decay, which a short run breaks.
  auto warm = TheStack().BenchmarkForm(With(recipe, "--lr-warmup-iters", "10"));
  REQUIRE(warm.ok());
  CHECK(GetValue(*warm, "--num-rollout") == "3000");
  // Decay iterations given: pinned again; never lengthened.
  Recipe pinned = With(decaying, "--lr-decay-iters", "6000");
  auto pinned_form = TheStack().BenchmarkForm(pinned);
  REQUIRE(pinned_form.ok());
  CHECK(GetValue(*pinned_form, "--num-rollout") == "5");
  CHECK(TheStack().CheckBenchmarkForm(pinned, *pinned_form).pass);
  CHECK_FALSE(TheStack().CheckBenchmarkForm(pinned, With(pinned, "--num-rollout", "4000")).pass);
  CHECK_FALSE(TheStack().CheckBenchmarkForm(pinned, With(*pinned_form, "--lr", "1e-3")).pass);
}

TEST_CASE("the profiled form: slime's torch.profiler over one rollout after warm-up, a gate-neutral change", "[slime][profile]") {
  // A constant LR without warm-up: the benchmark form runs 5 rollouts.
  const Recipe recipe = With(With(Qwen3Recipe(), "--num-rollout", "3000"), "--lr-decay-style", "constant");
  auto form = TheStack().BenchmarkForm(recipe);
  REQUIRE(form.ok());
  REQUIRE(GetValue(*form, "--num-rollout") == "5");
  auto profiled = TheStack().ProfileForm(*form, "/campaign/jobs/j/traces");
  REQUIRE(profiled.ok());
  CHECK(GetValue(*profiled, "--use-pytorch-profiler") == "");
  CHECK(GetValue(*profiled, "--profile-target") == "train_overall");
  CHECK(GetValue(*profiled, "--tensorboard-dir") == "/campaign/jobs/j/traces");
  // slime's schedule: wait start-1 rollouts, warm up one, trace end-start; rollout 0 is warm-up.
  CHECK(GetValue(*profiled, "--profile-step-start") == "2");
  CHECK(GetValue(*profiled, "--profile-step-end") == "3");
  // Megatron's own loop is not slime's: its --profile and --profile-ranks would do nothing.
  CHECK_FALSE(GetValue(*profiled, "--profile").has_value());
  CHECK_FALSE(GetValue(*profiled, "--profile-ranks").has_value());
  std::set<std::string> changed;
  for (const Change& c : Diff(*form, *profiled)) changed.insert(c.key);
  CHECK(changed == std::set<std::string>{"--use-pytorch-profiler", "--profile-target", "--profile-step-start",
                                         "--profile-step-end", "--tensorboard-dir"});
  // The engine accepts it as a benchmark form of the recipe, and the profiling keys alone are
  // neutral (slime's --profile-target in slime's gate, the Megatron flags in Megatron's).
  CHECK(TheStack().CheckBenchmarkForm(recipe, *profiled).pass);
  GateVerdict neutral = TheStack().CheckObjective(*form, *profiled);
  INFO(neutral.rule_id << ": " << neutral.reason);
  CHECK(neutral.pass);
}

TEST_CASE("the profiled form is refused where no window fits or no training actor traces", "[slime][profile]") {
  const Recipe recipe = With(Qwen3Recipe(), "--lr-decay-style", "constant");
  auto short_run = TheStack().ProfileForm(With(recipe, "--num-rollout", "2"), "/t");
  REQUIRE_FALSE(short_run.ok());
  CHECK(short_run.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(short_run.status().message(), Catch::Contains("2 rollout(s)") && Catch::Contains("--num-rollout"));
  auto three = TheStack().ProfileForm(With(recipe, "--num-rollout", "3"), "/t");
  REQUIRE(three.ok());
  CHECK(GetValue(*three, "--profile-step-start") == "1");
  CHECK(GetValue(*three, "--profile-step-end") == "2");

  auto from_epochs = TheStack().ProfileForm(With(recipe, "--num-rollout", std::nullopt), "/t");
  REQUIRE_FALSE(from_epochs.ok());
  CHECK_THAT(from_epochs.status().message(), Catch::Contains("unknown number of rollouts"));

  // A decaying LR sized from --num-rollout keeps the full run in the benchmark form; a profiled job
  // is never stopped early, so it is refused with what to change.
  Recipe decaying = With(With(recipe, "--num-rollout", "3000"), "--lr-decay-style", "cosine");
  auto form = TheStack().BenchmarkForm(decaying);
  REQUIRE(form.ok());
  auto long_run = TheStack().ProfileForm(*form, "/t");
  REQUIRE_FALSE(long_run.ok());
  CHECK(long_run.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(long_run.status().message(), Catch::Contains("3000 rollouts") && Catch::Contains("--lr-decay-iters"));

  auto rollout_only = TheStack().ProfileForm(With(With(recipe, "--num-rollout", "5"), "--debug-rollout-only", ""), "/t");
  REQUIRE_FALSE(rollout_only.ok());
  CHECK(rollout_only.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(rollout_only.status().message(), Catch::Contains("--debug-rollout-only"));
}
