// Fuzzes the AutoModel log parser (step lines and training.jsonl) and triage.
#include <cstdint>
#include <string_view>

#include "automodel_stack.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto stack = attune::automodel::AutoModelStack::Create(ATTUNE_SOURCE_DIR);
  if (!stack.ok()) return 0;
  std::string_view log(reinterpret_cast<const char*>(data), size);
  auto parse = (*stack)->ParseLog(log);
  attune::Recipe recipe;
  recipe.stack = "automodel";
  auto m = (*stack)->Measure(parse, recipe);
  (void)m;
  (*stack)->Triage(log, attune::JobEnd{1, "timed_out", 10});
  return 0;
}
