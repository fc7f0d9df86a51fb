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
  CHECK_THAT(CheckConditionSyntax("a == == b").message(), Catch::Contains("unexpected '==' at column 6"));
  CHECK_THAT(CheckConditionSyntax("'open").message(), Catch::Contains("unterminated string"));
  CHECK_THAT(CheckConditionSyntax("(a").message(), Catch::Contains("unexpected end"));
  CHECK_THAT(CheckConditionSyntax("a $ b").message(), Catch::Contains("unexpected '$'"));
  CHECK(CheckConditionSyntax("unknown_name > 3").ok());
}

}  // namespace
}  // namespace attune
