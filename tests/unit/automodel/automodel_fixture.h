// Shared helpers for the automodel stack tests.
#ifndef ATTUNE_TESTS_UNIT_AUTOMODEL_FIXTURE_H_
#define ATTUNE_TESTS_UNIT_AUTOMODEL_FIXTURE_H_

#include <fstream>
#include <sstream>
#include <string>

#include "automodel_stack.h"
#include "recipe_import.h"

namespace attune::automodel::testing {

inline const AutoModelStack& TheStack() {
  static auto stack = AutoModelStack::Create(ATTUNE_SOURCE_DIR);
  REQUIRE(stack.ok());
  return **stack;
}

inline std::string FixtureDir() { return std::string(ATTUNE_SOURCE_DIR) + "/tests/fixtures/automodel"; }

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Recipe Import(const std::string& script_name) {
  std::vector<std::string> unknown;
  auto recipe = ImportLaunchScript(ReadFile(FixtureDir() + "/" + script_name), FixtureDir(), &unknown);
  REQUIRE(recipe.ok());
  return *recipe;
}

inline Recipe With(Recipe r, const std::string& key, const std::string& value) {
  REQUIRE(SetValue(&r, key, value).ok());
  return r;
}

}  // namespace attune::automodel::testing

#endif  // ATTUNE_TESTS_UNIT_AUTOMODEL_FIXTURE_H_
