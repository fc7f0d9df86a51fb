// Fuzzes Megatron launch-script import: any script gives a recipe or a Status; a recipe renders.
#include <cstdint>
#include <string>

#include "megatron_stack.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto stack = attune::megatron::MegatronStack::Open(ATTUNE_SOURCE_DIR);
  if (!stack.ok()) return 0;
  std::string script(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> unknown;
  auto recipe = (*stack)->ImportLaunch(script, &unknown);
  if (recipe.ok()) {
    auto launch = (*stack)->RenderLaunch(*recipe);
    (void)launch;
  }
  return 0;
}
