// UTF-8 checks of users' files, and the inputs the fuzzers crashed on (tests/fixtures/fuzz).
#include "api/utf8.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/recipe.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

TEST_CASE("well-formed UTF-8 passes and each ill-formed kind is found at its offset", "[utf8]") {
  CHECK_FALSE(FirstInvalidUtf8("").has_value());
  CHECK_FALSE(FirstInvalidUtf8("plain ascii").has_value());
  CHECK_FALSE(FirstInvalidUtf8("32\xC3\x97H200 \xE2\x86\x92 \xF0\x9F\x9A\x80").has_value());
  CHECK(FirstInvalidUtf8("ab\x80").value() == 2);                // a lone continuation byte
  CHECK(FirstInvalidUtf8("a\xC0\xAF").value() == 1);             // overlong '/'
  CHECK(FirstInvalidUtf8("a\xE0\x80\xAF").value() == 1);         // overlong, three bytes
  CHECK(FirstInvalidUtf8("a\xED\xA0\x80").value() == 1);         // a UTF-16 surrogate
  CHECK(FirstInvalidUtf8("a\xF4\x90\x80\x80").value() == 1);     // above U+10FFFF
  CHECK(FirstInvalidUtf8("ok\xE2\x86").value() == 2);            // cut short at the end
  CHECK(FirstInvalidUtf8("\xC3\x97\xDF\x8F\x8D").value() == 4);  // valid, valid, then a stray
}

TEST_CASE("a recipe file that is not UTF-8 is refused with line, column and advice",
          "[utf8][recipe]") {
  auto recipe = ParseRecipeYaml("stack: megatron\nentry: [python3\xD4\xDF.py]\n", "r.yaml");
  REQUIRE_FALSE(recipe.ok());
  CHECK(recipe.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(recipe.status().message(),
             Catch::StartsWith("r.yaml:2:16: byte 0xD4 is not valid UTF-8") &&
                 Catch::Contains("re-save the file as UTF-8"));
}

TEST_CASE("a recipe file with a control character is refused with its position", "[utf8][recipe]") {
  auto recipe =
      ParseRecipeYaml(std::string("stack: megatron\nenv:\n  A\0B: \"1\"\n", 30), "r.yaml");
  REQUIRE_FALSE(recipe.ok());
  CHECK_THAT(recipe.status().message(),
             Catch::StartsWith("r.yaml:3:4: byte 0x00 is a control character"));
  CHECK(ParseRecipeYaml("stack: megatron\r\nentry:\t[python3, t.py]\r\n", "crlf.yaml").ok());
}

TEST_CASE("escape sequences cannot smuggle control characters or bad bytes into a recipe",
          "[utf8][recipe]") {
  for (const char* value : {"\"a\\0b\"", "\"a\\xFFb\"", "\"\\x01\"", "\"nb\\_sp\\xA0\""}) {
    INFO(value);
    std::string text =
        std::string("stack: megatron\nentry: [python3, t.py]\nargs:\n  - [--x, ") + value + "]\n";
    auto recipe = ParseRecipeYaml(text, "e.yaml");
    if (recipe.ok()) {
      // What loads must survive its own YAML form.
      CHECK(ParseRecipeYaml(RecipeToYaml(*recipe), "again.yaml").ok());
    } else {
      CHECK_THAT(recipe.status().message(),
                 Catch::StartsWith("e.yaml: args: --x holds a control character"));
    }
  }
  auto config = ParseRecipeYaml(
      "stack: megatron\nentry: [python3, t.py]\nconfig: {a: [\"x\\0\"]}\n", "c.yaml");
  REQUIRE_FALSE(config.ok());
  CHECK_THAT(config.status().message(), Catch::Contains("config holds a control character"));
}

TEST_CASE("a recipe built in code with bytes that are not UTF-8 still gets an id",
          "[utf8][recipe]") {
  auto recipe = ParseRecipeYaml("stack: megatron\nentry: [python3, train.py]\n", "r.yaml");
  REQUIRE(recipe.ok());
  std::string before = RecipeId(*recipe);
  recipe->entry.push_back("bad\xFF");
  CHECK(RecipeId(*recipe).size() == 12);
  CHECK(RecipeId(*recipe) != before);
}

// Every input a fuzzer crashed on stays here, run through the same steps as its fuzz target.
TEST_CASE("recipe_yaml fuzz crash inputs are refused or round-trip without a crash",
          "[utf8][fuzz]") {
  const fs::path dir = fs::path(ATTUNE_SOURCE_DIR) / "tests/fixtures/fuzz/recipe_yaml";
  int inputs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    INFO(entry.path().filename().string());
    auto recipe = ParseRecipeYaml(text.str(), "fuzz.yaml");
    if (recipe.ok()) {
      auto again = ParseRecipeYaml(RecipeToYaml(*recipe), "again.yaml");
      CHECK(again.ok());
      CHECK(RecipeId(*recipe).size() == 12);
    } else {
      CHECK_FALSE(recipe.status().message().empty());
    }
    ++inputs;
  }
  CHECK(inputs >= 1);
}

}  // namespace
}  // namespace attune
