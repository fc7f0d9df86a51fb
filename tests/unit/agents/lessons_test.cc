// Copyright attune authors.
#include <catch2/catch.hpp>

#include "lessons.h"

using attune::Change;
using attune::agents::ParseChangeList;
using attune::agents::ParseEffect;
using attune::agents::LessonsForStack;
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

TEST_CASE("the change of a lesson is read as the report step writes it", "[agents][lessons]") {
  std::vector<Change> c = ParseChangeList(
      "--recompute-granularity: full -> (absent), --sequence-parallel: (absent) -> (set), "
      "env:PYTORCH_CUDA_ALLOC_CONF: (absent) -> expandable_segments:True, --moe-layer-freq: 1 -> ([0]*3+[1]*58)");
  REQUIRE(c.size() == 4);
  CHECK(c[0] == Change{"--recompute-granularity", "full", std::nullopt});
  CHECK(c[1] == Change{"--sequence-parallel", std::nullopt, ""});
  CHECK(c[2] == Change{"env:PYTORCH_CUDA_ALLOC_CONF", std::nullopt, "expandable_segments:True"});
  CHECK(c[3] == Change{"--moe-layer-freq", "1", "([0]*3+[1]*58)"});
  CHECK(ParseChangeList("x").empty());
}

TEST_CASE("an effect measured on the reverse move is turned into the forward one",
          "[agents][lessons]") {
  const char* text =
      "- lever: recompute effect: +39.4% outcome: new_leader change: "
      "`--recompute-granularity: full -> (absent), --recompute-method: uniform -> (absent)` — z\n"
      "- lever: micro_batch_size effect: +10% outcome: new_leader change: `--micro-batch-size: 1 -> 2` — z\n";
  // Without a direction the effects are taken as written.
  auto plain = ParseLessons(text);
  CHECK(plain["recompute"].effect == Approx(0.394));
  int asked = 0;
  auto priors = ParseLessons(text, [&](const std::string& lever, const std::vector<Change>& changes) {
    ++asked;
    REQUIRE_FALSE(changes.empty());
    return lever == "recompute" && !changes.front().to ? -1 : 1;
  });
  CHECK(asked == 2);
  CHECK(priors["recompute"].effect == Approx(1 / 1.394 - 1));
  CHECK(priors["micro_batch_size"].effect == Approx(0.10));
}

TEST_CASE("only the lessons of the campaign's stack are read", "[agents][lessons]") {
  const char* text =
      "<!-- 2026-01-01-llama-h100.md -->\n# Lessons from campaign a\n\nstack: megatron\n\n## Tried\n\n"
      "- lever: micro_batch_size effect: +10% outcome: new_leader change: `--micro-batch-size: 1 -> 2` — x\n"
      "<!-- 2026-01-02-llama-fsdp.md -->\n# Lessons from campaign b\n\nstack: automodel\n\n## Tried\n\n"
      "- lever: micro_batch_size effect: -20% outcome: slower change: `step_scheduler.local_batch_size: 1 -> 2` — y\n"
      "<!-- notes.md -->\nlever: recompute effect: -5%\n";
  auto megatron = ParseLessons(LessonsForStack(text, "megatron"));
  CHECK(megatron["micro_batch_size"].effect == Approx(0.10));
  CHECK(megatron["micro_batch_size"].count == 1);
  CHECK(megatron.count("recompute") == 1);  // a file that names no stack applies to every stack
  auto automodel = ParseLessons(LessonsForStack(text, "automodel"));
  CHECK(automodel["micro_batch_size"].effect == Approx(-0.20));
  CHECK(automodel["micro_batch_size"].count == 1);
  // Text without file markers is one file.
  CHECK(LessonsForStack("stack: slime\nlever: x effect: +1%\n", "megatron").empty());
  CHECK_FALSE(LessonsForStack("lever: x effect: +1%\n", "megatron").empty());
}
