// The objective gate refuses every objective rule with its id, applies the conditional rules in
// context, fails closed on unknown keys; LegalMoves never proposes what Validate or the gate refuse.
#include <catch2/catch.hpp>

#include <set>

#include "test_support.h"

namespace attune::megatron {
namespace {

using testing::DenseRecipe;
using testing::H100;
using testing::B200;
using testing::MoeRecipe;
using testing::Stack;
using testing::TinyRecipe;
using testing::With;

GateVerdict Check(const Recipe& base, const Recipe& cand) { return Stack().CheckObjective(base, cand); }

TEST_CASE("every key of every objective rule is refused with the rule's id", "[megatron][gate]") {
  int checked = 0;
  for (const auto& rule : Stack().knowledge().objective.objective) {
    for (const auto& key : rule.keys) {
      Recipe base = DenseRecipe();
      auto current = GetValue(base, key);
      Recipe cand = With(base, key, current ? std::optional<std::string>(*current + "7") : std::optional<std::string>("7"));
      auto v = Check(base, cand);
      INFO(key);
      CHECK_FALSE(v.pass);
      CHECK(v.rule_id == rule.id);
      CHECK_THAT(v.reason, Catch::Contains(key));
      ++checked;
    }
  }
  CHECK(checked > 150);
}

TEST_CASE("a key in neither the catalog nor objective.yaml fails closed", "[megatron][gate]") {
  auto v = Check(DenseRecipe(), With(DenseRecipe(), "--some-new-flag", "1"));
  CHECK_FALSE(v.pass);
  CHECK(v.rule_id == "fail_closed.unknown_key");
  CHECK_THAT(v.reason, Catch::Contains("--some-new-flag") && Catch::Contains("objective.yaml"));
  CHECK(Check(DenseRecipe(), With(DenseRecipe(), "env:FOO", "1")).rule_id == "fail_closed.unknown_key");
}

TEST_CASE("logging-only and lever changes pass with a tolerance", "[megatron][gate]") {
  auto neutral = Check(DenseRecipe(), With(DenseRecipe(), "--log-interval", "1"));
  CHECK(neutral.pass);
  CHECK(neutral.rule_id == "ok");
  auto lever = Check(DenseRecipe(), With(DenseRecipe(), "--overlap-param-gather", ""));
  CHECK(lever.pass);
  CHECK(lever.loss_rel_tolerance == Approx(Stack().knowledge().objective.tolerance_default));
  auto tp = Check(DenseRecipe(), With(DenseRecipe(), "--tensor-model-parallel-size", "4"));
  CHECK(tp.pass);
  CHECK(tp.loss_rel_tolerance == Approx(Stack().knowledge().objective.tolerance_changes_rng));
  auto attn = Check(DenseRecipe(), With(DenseRecipe(), "--attention-backend", "flash"));
  CHECK(attn.loss_rel_tolerance == Approx(Stack().knowledge().objective.tolerance_numerics));
}

TEST_CASE("a changed entry point is refused", "[megatron][gate]") {
  Recipe cand = DenseRecipe();
  cand.entry = {"pretrain_bert.py"};
  CHECK(Check(DenseRecipe(), cand).rule_id == "obj.entry_point");
}

TEST_CASE("micro-batch changes without per-token loss are refused", "[megatron][gate][conditional]") {
  Recipe base = With(DenseRecipe(), "--calculate-per-token-loss", std::nullopt);
  auto v = Check(base, With(base, "--micro-batch-size", "2"));
  CHECK_FALSE(v.pass);
  CHECK(v.rule_id == "cond.mbs_without_per_token_loss");
  CHECK_THAT(v.reason, Catch::Contains("fix:"));
  CHECK(Check(DenseRecipe(), With(DenseRecipe(), "--micro-batch-size", "2")).pass);
}

TEST_CASE("a data declaration of fixed-length unmasked samples allows micro-batch changes", "[megatron][gate][conditional][data]") {
  Recipe base = With(DenseRecipe(), "--calculate-per-token-loss", std::nullopt);
  Recipe declared = With(With(base, "data:fixed_length", "true"), "data:loss_mask", "none");
  GateVerdict v = Check(declared, With(declared, "--micro-batch-size", "2"));
  INFO(v.reason);
  CHECK(v.pass);
  // Mock data is fixed-length by construction; the loss mask must still be declared.
  Recipe mock = With(With(base, "--mock-data", ""), "data:loss_mask", "none");
  CHECK(Check(mock, With(mock, "--micro-batch-size", "2")).pass);
  // Half a declaration, a masked loss, or SFT data still refuse.
  for (const Recipe& r : {With(base, "data:fixed_length", "true"), With(base, "data:loss_mask", "none"),
                          With(declared, "data:loss_mask", "eod"), With(declared, "data:fixed_length", "false"),
                          With(declared, "--eod-mask-loss", ""), With(declared, "--sft", "")}) {
    CHECK(Check(r, With(r, "--micro-batch-size", "2")).rule_id == "cond.mbs_without_per_token_loss");
  }
  // The declaration is part of the objective: a candidate may not change it.
  CHECK(Check(base, declared).rule_id == "obj.data");
  CHECK(Check(declared, With(declared, "data:loss_mask", "eod")).rule_id == "obj.data");
}

TEST_CASE("the data declaration is validated", "[megatron][validate][data]") {
  Recipe declared = With(With(DenseRecipe(), "data:fixed_length", "true"), "data:loss_mask", "none");
  CHECK(Stack().Validate(declared, H100()).ok());
  Status typo = Stack().Validate(With(declared, "data:fixed_lenght", "true"), H100());
  CHECK_THAT(typo.message(), Catch::Contains("data.fixed_lenght is not a declaration"));
  Status value = Stack().Validate(With(declared, "data:loss_mask", "nothing"), H100());
  CHECK_THAT(value.message(), Catch::Contains("expected one of none, eod, varying"));
}

TEST_CASE("micro-batch changes with a per-micro-batch MoE aux loss are refused", "[megatron][gate][conditional]") {
  Recipe base = With(MoeRecipe(), "--moe-aux-loss-coeff", "0.01");
  CHECK(Check(base, With(base, "--micro-batch-size", "2")).rule_id == "cond.moe_aux_loss_per_micro_batch");
  Recipe seq_aux = With(base, "--moe-router-load-balancing-type", "seq_aux_loss");
  CHECK(Check(seq_aux, With(seq_aux, "--micro-batch-size", "2")).pass);
  CHECK(Check(MoeRecipe(), With(MoeRecipe(), "--micro-batch-size", "2")).pass);  // coeff 0
}

TEST_CASE("an expert capacity factor pins MBS, SP, TP and CP", "[megatron][gate][conditional]") {
  Recipe base = With(MoeRecipe(), "--moe-expert-capacity-factor", "1.0");
  CHECK(Check(base, With(base, "--micro-batch-size", "2")).rule_id == "cond.capacity_factor_local_tokens");
  CHECK(Check(base, With(base, "--context-parallel-size", "2")).rule_id == "cond.capacity_factor_local_tokens");
}

TEST_CASE("a cyclic dataloader pins DP and MBS", "[megatron][gate][conditional]") {
  Recipe base = With(DenseRecipe(), "--dataloader-type", "cyclic");
  CHECK(Check(base, With(base, "--micro-batch-size", "2")).rule_id == "cond.cyclic_dataloader");
  // TP 2 -> 4 halves DP.
  CHECK(Check(base, With(base, "--tensor-model-parallel-size", "4")).rule_id == "cond.cyclic_dataloader");
  // PP and TP trade places: DP unchanged.
  Recipe swapped = With(With(base, "--tensor-model-parallel-size", "1"), "--pipeline-model-parallel-size", "4");
  CHECK(Check(base, swapped).rule_id != "cond.cyclic_dataloader");
}

TEST_CASE("--decrease-batch-size-if-needed and an unpinned global batch refuse DP/MBS changes", "[megatron][gate][conditional]") {
  Recipe dec = With(DenseRecipe(), "--decrease-batch-size-if-needed", "");
  CHECK(Check(dec, With(dec, "--micro-batch-size", "2")).rule_id == "cond.decrease_batch_size");
  Recipe unpinned = With(DenseRecipe(), "--global-batch-size", std::nullopt);
  CHECK(Check(unpinned, With(unpinned, "--micro-batch-size", "2")).rule_id == "cond.global_batch_not_pinned");
  Recipe bigger = unpinned;
  bigger.topology.nodes = 4;
  CHECK(Check(unpinned, bigger).rule_id == "cond.global_batch_not_pinned");
  Recipe pinned_bigger = DenseRecipe();
  pinned_bigger.topology.nodes = 4;
  CHECK(Check(DenseRecipe(), pinned_bigger).pass);
}

TEST_CASE("a TP change is refused unless the padded vocabulary stays the same", "[megatron][gate][conditional]") {
  Recipe base = With(With(DenseRecipe(), "--padded-vocab-size", std::nullopt), "--vocab-size", "50257");
  auto v = Check(base, With(base, "--tensor-model-parallel-size", "4"));
  CHECK(v.rule_id == "cond.tp_padded_vocab");
  Recipe round = With(base, "--vocab-size", "65536");  // a multiple of 128*4 either way
  CHECK(Check(round, With(round, "--tensor-model-parallel-size", "4")).pass);
  Recipe unknown = With(base, "--vocab-size", std::nullopt);  // tokenizer file: cannot tell
  CHECK(Check(unknown, With(unknown, "--tensor-model-parallel-size", "4")).rule_id == "cond.tp_padded_vocab");
}

TEST_CASE("fp8 param-gather is refused only when fp8 is on", "[megatron][gate][conditional]") {
  Recipe fp8 = With(DenseRecipe(), "--fp8-format", "hybrid");
  CHECK(Check(fp8, With(fp8, "--fp8-param-gather", "")).rule_id == "cond.fp8_param_gather");
  CHECK(Check(DenseRecipe(), With(DenseRecipe(), "--fp8-param-gather", "")).pass);
}

TEST_CASE("every conditional rule of objective.yaml has a refusing test above", "[megatron][gate][conditional]") {
  std::set<std::string> tested = {"cond.mbs_without_per_token_loss", "cond.moe_aux_loss_per_micro_batch",
                                  "cond.capacity_factor_local_tokens", "cond.cyclic_dataloader",
                                  "cond.decrease_batch_size", "cond.global_batch_not_pinned",
                                  "cond.tp_padded_vocab", "cond.fp8_param_gather"};
  for (const auto& rule : Stack().knowledge().objective.conditional) {
    INFO(rule.id);
    CHECK(tested.count(rule.id) == 1);
  }
}

// ---- LegalMoves ------------------------------------------------------------------------------

std::vector<std::pair<std::string, Recipe>> MoveRecipes() {
  Recipe no_flags = TinyRecipe();
  Recipe pp4 = With(With(With(DenseRecipe(), "--pipeline-model-parallel-size", "4"),
                         "--tensor-model-parallel-size", "1"), "--sequence-parallel", std::nullopt);
  Recipe tp1 = With(With(DenseRecipe(), "--tensor-model-parallel-size", "1"), "--sequence-parallel", std::nullopt);
  tp1.env.clear();
  Recipe recompute = With(With(With(DenseRecipe(), "--recompute-granularity", "full"), "--recompute-method", "block"),
                          "--recompute-num-layers", "4");
  Recipe moe_ep4 = With(With(MoeRecipe(), "--expert-model-parallel-size", "4"), "--moe-token-dispatcher-type", "alltoall");
  return {{"dense", DenseRecipe()}, {"moe", MoeRecipe()}, {"tiny", no_flags}, {"pp4", pp4},
          {"tp1 no env", tp1}, {"full recompute", recompute},
          {"unpinned gbs", With(DenseRecipe(), "--global-batch-size", std::nullopt)},
          {"moe ep4 alltoall", moe_ep4}};
}

TEST_CASE("LegalMoves never yields a move that Validate or the gate refuses", "[megatron][moves]") {
  for (const auto& cluster : {H100(), B200()}) {
    for (const auto& [name, recipe] : MoveRecipes()) {
      auto moves = Stack().LegalMoves(recipe, cluster);
      INFO(name << " on " << cluster.device_type);
      CHECK(moves.size() >= 5);
      for (const auto& move : moves) {
        Recipe next = recipe;
        INFO(move.summary);
        REQUIRE(ApplyChanges(&next, move.changes).ok());
        CHECK(Stack().Validate(next, cluster).ok());
        CHECK(Stack().CheckObjective(recipe, next).pass);
        CHECK_FALSE(move.changes.empty());
        CHECK_FALSE(next == recipe);
      }
    }
  }
}

const Move* FindMove(const std::vector<Move>& moves, const std::string& lever, const std::string& key,
                     const std::optional<std::string>& to) {
  for (const auto& m : moves) {
    if (m.lever_id != lever) continue;
    for (const auto& c : m.changes) {
      if (c.key == key && c.to == to) return &m;
    }
  }
  return nullptr;
}

TEST_CASE("TP 1 -> 2 before Blackwell also sets CUDA_DEVICE_MAX_CONNECTIONS=1", "[megatron][moves]") {
  Recipe tp1 = MoveRecipes()[4].second;
  auto h100_moves = Stack().LegalMoves(tp1, H100());
  const Move* m = FindMove(h100_moves, "tensor_parallel", "--tensor-model-parallel-size", "2");
  REQUIRE(m != nullptr);
  CHECK(m->changes.size() == 2);
  CHECK(m->changes[1] == Change{"env:CUDA_DEVICE_MAX_CONNECTIONS", std::nullopt, "1"});
  auto b200_moves = Stack().LegalMoves(tp1, B200());
  const Move* b = FindMove(b200_moves, "tensor_parallel", "--tensor-model-parallel-size", "2");
  REQUIRE(b != nullptr);
  CHECK(b->changes.size() == 1);
}

TEST_CASE("TP comm overlap from a recipe without SP is one move with SP", "[megatron][moves]") {
  Recipe no_sp = With(DenseRecipe(), "--sequence-parallel", std::nullopt);
  auto moves = Stack().LegalMoves(no_sp, H100());
  const Move* m = FindMove(moves, "tp_comm_overlap", "--tp-comm-overlap", "");
  REQUIRE(m != nullptr);
  CHECK(m->changes.size() == 2);
  CHECK(m->changes[1].key == "--sequence-parallel");
}

TEST_CASE("TP 2 -> 1 drops sequence parallelism in the same move", "[megatron][moves]") {
  auto moves = Stack().LegalMoves(DenseRecipe(), H100());
  const Move* m = FindMove(moves, "tensor_parallel", "--tensor-model-parallel-size", "1");
  REQUIRE(m != nullptr);
  std::vector<Move> just_this = {*m};
  CHECK(FindMove(just_this, "tensor_parallel", "--sequence-parallel", std::nullopt) != nullptr);
}

TEST_CASE("micro-batch moves keep the global batch and only divide it", "[megatron][moves]") {
  auto moves = Stack().LegalMoves(DenseRecipe(), H100());
  std::set<std::string> mbs;
  for (const auto& m : moves) {
    if (m.lever_id != "micro_batch_size") continue;
    for (const auto& c : m.changes) CHECK(c.key == "--micro-batch-size");
    mbs.insert(*m.changes[0].to);
    CHECK_THAT(m.summary, Catch::Contains("global batch unchanged"));
  }
  CHECK(mbs == std::set<std::string>{"16", "2", "4", "8"});
  Recipe unpinned = With(DenseRecipe(), "--global-batch-size", std::nullopt);
  for (const auto& m : Stack().LegalMoves(unpinned, H100())) CHECK(m.lever_id != "micro_batch_size");
}

TEST_CASE("overlap-param-gather from a recipe without the distributed optimizer adds its prerequisites", "[megatron][moves]") {
  Recipe plain = With(With(DenseRecipe(), "--use-distributed-optimizer", std::nullopt), "--overlap-grad-reduce", std::nullopt);
  auto moves = Stack().LegalMoves(plain, H100());
  const Move* m = FindMove(moves, "overlap_param_gather", "--overlap-param-gather", "");
  REQUIRE(m != nullptr);
  CHECK(m->changes.size() == 3);
}

TEST_CASE("LegalMoves is deterministic", "[megatron][moves]") {
  auto a = Stack().LegalMoves(DenseRecipe(), H100());
  auto b = Stack().LegalMoves(DenseRecipe(), H100());
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].changes == b[i].changes);
}

}  // namespace
}  // namespace attune::megatron

namespace attune::megatron {
namespace {

TEST_CASE("every lever of the catalog is proposed from at least one reference recipe", "[megatron][moves]") {
  std::set<std::string> proposed;
  for (const auto& cluster : {H100(), B200()}) {
    for (const auto& [name, recipe] : MoveRecipes()) {
      for (const auto& m : Stack().LegalMoves(recipe, cluster)) proposed.insert(m.lever_id);
    }
  }
  for (const auto& lever : Stack().Levers()) {
    INFO(lever.id);
    CHECK(proposed.count(lever.id) == 1);
  }
}

}  // namespace
}  // namespace attune::megatron
