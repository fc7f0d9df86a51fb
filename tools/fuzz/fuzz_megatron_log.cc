// Fuzzes the Megatron log parser, measurement and triage on arbitrary text.
#include <cstdint>
#include <string_view>

#include "megatron_stack.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto stack = attune::megatron::MegatronStack::Open(ATTUNE_SOURCE_DIR);
  if (!stack.ok()) return 0;
  std::string_view log(reinterpret_cast<const char*>(data), size);
  auto parse = (*stack)->ParseLog(log);
  attune::Recipe recipe;
  recipe.stack = "megatron";
  recipe.args = {{"--seq-length", {"4096"}}, {"--global-batch-size", {"64"}}};
  auto m = (*stack)->Measure(parse, recipe);
  (void)m;
  (*stack)->Triage(log, attune::JobEnd{1, "failed", 10});
  return 0;
}
