// The `if:` expression language.
#include <catch2/catch.hpp>

#include "workflow/workflow.h"

namespace attune {
namespace {

const std::map<std::string, nlohmann::json> kValues = {
    {"leader", "c003"}, {"speedup", 1.12}, {"candidates", 4}, {"done", false}, {"budget.left", 0.2}};

bool Eval(const std::string& expr) {
  auto r = EvaluateCondition(expr, kValues);
  INFO(expr << ": " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("conditions compare strings and numbers", "[workflow][condition]") {
  CHECK(Eval("leader != 'baseline'"));
  CHECK_FALSE(Eval("leader == \"baseline\""));
  CHECK(Eval("speedup > 1.1"));
  CHECK(Eval("candidates >= 4 && candidates <= 4"));
  CHECK(Eval("budget.left < 0.5"));
  CHECK_FALSE(Eval("leader < 3"));  // different types never order
}

TEST_CASE("conditions combine with && || ! and parentheses", "[workflow][condition]") {
  CHECK(Eval("!done"));
  CHECK(Eval("done || speedup > 1"));
  CHECK_FALSE(Eval("!(speedup > 1) && true"));
  CHECK(Eval("(done || true) && !false"));
  CHECK(Eval("candidates"));  // non-zero numbers are true
}

TEST_CASE("unknown names are errors listing the known ones", "[workflow][condition]") {
  auto r = EvaluateCondition("leeder == 'x'", kValues);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("unknown name 'leeder' at column 1"));
  CHECK_THAT(r.status().message(), Catch::Contains("known names: budget.left, candidates"));
}

TEST_CASE("syntax errors name the column", "[workflow][condition]") {
  CHECK_THAT(CheckCondition("a == == b", {}).message(), Catch::Contains("unexpected '==' at column 6"));
  CHECK_THAT(CheckCondition("'open", {}).message(), Catch::Contains("unterminated string"));
  CHECK_THAT(CheckCondition("(a", {}).message(), Catch::Contains("unexpected end"));
  CHECK_THAT(CheckCondition("a $ b", {}).message(), Catch::Contains("unexpected '$'"));
  CHECK(CheckCondition("unknown_name > 3", {}).ok());
}

TEST_CASE("validation refuses names the engine does not define, with a did-you-mean",
          "[workflow][condition]") {
  const std::set<std::string> names = {"leader", "leader_changed", "speedup"};
  CHECK(CheckCondition("leader_changed && speedup > 1.1", names).ok());
  CHECK(CheckCondition("leader != 'baseline' || true", names).ok());
  Status s = CheckCondition("leadr_changed", names);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("unknown name 'leadr_changed' (did you mean "
                                          "'leader_changed'?); conditions may use: leader, "
                                          "leader_changed, speedup"));
  CHECK_FALSE(CheckCondition("speedup > 1 && nonsense", names).ok());
}

}  // namespace
}  // namespace attune
