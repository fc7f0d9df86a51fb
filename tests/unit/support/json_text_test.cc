// support::JsonObjectsIn and MatchingBrace: objects in free text, nested ones taken whole, braces
// inside strings ignored; and ThisModulePath for the module the support code is linked into.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "attune/support/json_text.h"
#include "attune/support/module_path.h"

namespace attune::support {
namespace {

TEST_CASE("MatchingBrace respects strings and escapes", "[support][json_text]") {
  std::string text = R"(x {"a": "}", "b": {"c": "\"}"}} y)";
  size_t open = text.find('{');
  CHECK(MatchingBrace(text, open) == text.size() - 3);
  CHECK(MatchingBrace("{\"a\": 1", 0) == std::string::npos);
}

TEST_CASE("JsonObjectsIn returns top-level objects in order", "[support][json_text]") {
  auto objects = JsonObjectsIn(
      "I think {not json} then {\"changes\": [{\"key\": \"k\"}]} and finally {\"done\": true}");
  REQUIRE(objects.size() == 2);
  CHECK(objects[0].contains("changes"));  // its inner {"key"} is not returned on its own
  CHECK(objects[1]["done"] == true);
  CHECK(JsonObjectsIn("no objects { here").empty());
  CHECK(JsonObjectsIn("").empty());
}

TEST_CASE("ThisModulePath names the executable the support code is linked into",
          "[support][module_path]") {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  REQUIRE_FALSE(ec);
  CHECK(ThisModulePath() == std::filesystem::weakly_canonical(exe).string());
  CHECK(ThisModuleDir() == std::filesystem::weakly_canonical(exe).parent_path().string());
}

}  // namespace
}  // namespace attune::support
