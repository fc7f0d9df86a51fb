// Copyright attune authors.
#include "value_types.h"

#include <sstream>

#include "recipe_view.h"

namespace attune::megatron {
namespace {

// Flags whose value Megatron-LM's argument parser reads as an int or a float (arguments.py,
// `type=int` / `type=float`). A value it would refuse, or that imported with junk in it (a comment
// left in a launch script: "1 # Not explicitly set"), is refused here with the flag's name, rather
// than read as absent and replaced by a default.
const char* const kIntFlags[] = {
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
    "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--num-layers",
    "--hidden-size", "--ffn-hidden-size", "--num-attention-heads", "--num-query-groups",
    "--kv-channels", "--seq-length", "--max-position-embeddings", "--micro-batch-size",
    "--global-batch-size", "--train-iters", "--train-samples", "--log-interval",
    "--eval-interval", "--eval-iters", "--save-interval", "--num-experts", "--moe-router-topk",
    "--moe-ffn-hidden-size", "--num-layers-per-virtual-pipeline-stage",
    "--num-virtual-stages-per-pipeline-rank", "--recompute-num-layers", "--vocab-size",
    "--padded-vocab-size", "--make-vocab-size-divisible-by", "--seed", "--lr-warmup-iters",
    "--lr-decay-iters", "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
    "--ddp-bucket-size", "--num-workers"};
const char* const kFloatFlags[] = {
    "--lr", "--min-lr", "--weight-decay", "--clip-grad", "--adam-beta1", "--adam-beta2",
    "--adam-eps", "--init-method-std", "--hidden-dropout", "--attention-dropout",
    "--lr-warmup-fraction", "--moe-aux-loss-coeff", "--moe-z-loss-coeff", "--rotary-base",
    "--norm-epsilon", "--loss-scale", "--initial-loss-scale"};

bool WholeInt(const std::string& text) {
  auto s = WithoutDigitUnderscores(text);
  if (!s || s->empty()) return false;
  size_t i = ((*s)[0] == '-' || (*s)[0] == '+') ? 1 : 0;
  if (i == s->size()) return false;
  for (; i < s->size(); ++i) {
    if ((*s)[i] < '0' || (*s)[i] > '9') return false;
  }
  return true;
}

bool WholeFloat(const std::string& text) {
  auto s = WithoutDigitUnderscores(text);
  if (!s || s->empty()) return false;
  try {
    size_t used = 0;
    (void)std::stod(*s, &used);
    return used == s->size();
  } catch (...) {
    return false;  // std::stod reports "not a number" by throwing
  }
}

// Flags Megatron declares with nargs='+': one number per space-separated word.
bool IsListFlag(const std::string& flag) { return flag == "--moe-aux-loss-coeff"; }

bool EveryWordFloat(const std::string& value) {
  std::istringstream words(value);
  std::string word;
  bool any = false;
  while (words >> word) {
    if (!WholeFloat(word)) return false;
    any = true;
  }
  return any;
}

}  // namespace

std::optional<std::string> MalformedValue(const Recipe& r) {
  for (const char* flag : kIntFlags) {
    auto v = GetValue(r, flag);
    if (v && !WholeInt(*v)) {
      return std::string(flag) + " takes an integer, but its value is '" + *v +
             "'; remove what follows the number (a comment or text left from the launch script)";
    }
  }
  for (const char* flag : kFloatFlags) {
    auto v = GetValue(r, flag);
    if (v && !(IsListFlag(flag) ? EveryWordFloat(*v) : WholeFloat(*v))) {
      return std::string(flag) + " takes a number, but its value is '" + *v +
             "'; remove what follows the number";
    }
  }
  return std::nullopt;
}

}  // namespace attune::megatron
