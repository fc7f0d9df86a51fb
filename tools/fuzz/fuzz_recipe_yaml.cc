// Fuzzes recipe files and the shell-word splitter.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attune/recipe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto recipe = attune::ParseRecipeYaml(text, "fuzz.yaml");
  if (recipe.ok()) {
    // A recipe that loads must survive its own YAML form.
    auto again = attune::ParseRecipeYaml(attune::RecipeToYaml(*recipe), "again.yaml");
    if (!again.ok()) abort();
    attune::RecipeId(*recipe);
  }
  auto words = attune::SplitShellWords(text);
  (void)words;
  return 0;
}
