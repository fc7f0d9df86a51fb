// Copyright attune authors.
#include <catch2/catch.hpp>

#include "lessons.h"

using attune::agents::ParseEffect;
using attune::agents::ParseLessons;

TEST_CASE("effects read as percent, fraction or speedup ratio", "[agents][lessons]") {
  CHECK(*ParseEffect("+12%") == Approx(0.12));
  CHECK(*ParseEffect("-3 %") == Approx(-0.03));
  CHECK(*ParseEffect("0.05") == Approx(0.05));
  CHECK(*ParseEffect("1.15x") == Approx(0.15));
  CHECK_FALSE(ParseEffect("large").has_value());
}

TEST_CASE("lessons are read from lines, YAML-like entries and markdown tables",
          "[agents][lessons]") {
  const char* text =
      "# Past campaign: llama 8B\n"
      "lever: micro_batch_size effect: +12%\n"
      "- lever: recompute\n"
      "  outcome: slower\n"
      "  effect: -8%\n"
      "| Lever | Effect | Notes |\n"
      "|---|---|---|\n"
      "| `overlap_grad_reduce` | +4% | multi-node |\n"
      "| micro_batch_size | +8% | |\n";
  auto priors = ParseLessons(text);
  REQUIRE(priors.count("micro_batch_size") == 1);
  CHECK(priors["micro_batch_size"].effect == Approx(0.10));
  CHECK(priors["micro_batch_size"].count == 2);
  CHECK(priors["recompute"].effect == Approx(-0.08));
  CHECK(priors["overlap_grad_reduce"].effect == Approx(0.04));
}

TEST_CASE("missing or unrelated lesson text gives no priors", "[agents][lessons]") {
  CHECK(ParseLessons("").empty());
  CHECK(ParseLessons("we tuned things and it went well\neffect: +5%\n").empty());
}

TEST_CASE("lessons exported by the report step are read, n/a effects skipped",
          "[agents][lessons]") {
  const char* text =
      "# Lessons from campaign abc\n\n"
      "stack: megatron\n"
      "speedup: 1.31x\n\n"
      "## Tried\n\n"
      "- lever: micro_batch_size effect: +11.2% outcome: new_leader change: "
      "`--micro-batch-size: 1 -> 2` — peak 30 of 80 GiB\n"
      "- lever: tensor_parallel effect: n/a outcome: failed change: "
      "`--tensor-model-parallel-size: 2 -> 1` — oom: CUDA out of memory\n"
      "- lever: overlap_grad_reduce effect: -0.4% outcome: within_noise change: `x` — y\n";
  auto priors = ParseLessons(text);
  CHECK(priors["micro_batch_size"].effect == Approx(0.112));
  CHECK(priors.count("tensor_parallel") == 0);
  CHECK(priors["overlap_grad_reduce"].effect == Approx(-0.004));
}
