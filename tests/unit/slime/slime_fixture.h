// Shared helpers for the slime stack tests.
#ifndef ATTUNE_TESTS_UNIT_SLIME_FIXTURE_H_
#define ATTUNE_TESTS_UNIT_SLIME_FIXTURE_H_

#include <fstream>
#include <sstream>
#include <string>

#include "recipe_import.h"
#include "slime_stack.h"

namespace attune::slime::testing {

inline const SlimeStack& TheStack() {
  static auto stack = SlimeStack::Open(ATTUNE_SOURCE_DIR);
  if (!stack.ok()) FAIL(stack.status().message());
  return **stack;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A log excerpt from the shared fixtures (never copied into the repository).
inline std::string SharedLog(const std::string& name) {
  return ReadFile(std::string(ATTUNE_SHARED_DIR) + "/fixtures/logs/" + name);
}

// The call scripts/run-qwen3-4B.sh makes after its arrays are expanded (as an evaluator records it).
inline RecordedCall Qwen3Call() {
  RecordedCall call;
  call.argv = {"ray", "job", "submit", "--address=http://127.0.0.1:8265",
               "--runtime-env-json={\"env_vars\": {\"PYTHONPATH\": \"/root/Megatron-LM/\", \"CUDA_DEVICE_MAX_CONNECTIONS\": \"1\"}}",
               "--", "python3", "train.py",
               "--actor-num-nodes", "1", "--actor-num-gpus-per-node", "4", "--rollout-num-gpus", "4",
               "--num-layers", "36", "--hidden-size", "2560", "--ffn-hidden-size", "9728",
               "--num-attention-heads", "32", "--group-query-attention", "--num-query-groups", "8",
               "--swiglu", "--vocab-size", "151936", "--disable-bias-linear",
               "--hf-checkpoint", "/root/Qwen3-4B", "--ref-load", "/root/Qwen3-4B_torch_dist",
               "--prompt-data", "/root/dapo-math-17k/dapo-math-17k.jsonl", "--input-key", "prompt",
               "--rollout-shuffle", "--rm-type", "deepscaler", "--num-rollout", "3000",
               "--rollout-batch-size", "32", "--n-samples-per-prompt", "8",
               "--rollout-max-response-len", "8192", "--rollout-temperature", "0.8",
               "--global-batch-size", "256", "--balance-data",
               "--tensor-model-parallel-size", "2", "--sequence-parallel",
               "--pipeline-model-parallel-size", "1", "--context-parallel-size", "1",
               "--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1",
               "--use-dynamic-batch-size", "--max-tokens-per-gpu", "9216",
               "--advantage-estimator", "grpo", "--use-kl-loss", "--kl-loss-coef", "0.00",
               "--kl-loss-type", "low_var_kl", "--entropy-coef", "0.00", "--eps-clip", "0.2",
               "--eps-clip-high", "0.28",
               "--optimizer", "adam", "--lr", "1e-6", "--lr-decay-style", "constant", "--weight-decay", "0.1",
               "--adam-beta1", "0.9", "--adam-beta2", "0.98",
               "--rollout-num-gpus-per-engine", "2", "--sglang-mem-fraction-static", "0.7",
               "--attention-dropout", "0.0", "--hidden-dropout", "0.0",
               "--accumulate-allreduce-grads-in-fp32", "--attention-softmax-in-fp32", "--attention-backend", "flash"};
  return call;
}

inline Recipe Qwen3Recipe() {
  std::vector<std::string> unknown;
  auto r = ImportRecordedCall(Qwen3Call(), &unknown);
  if (!r.ok()) FAIL(r.status().message());
  return *r;
}

inline Recipe With(Recipe r, const std::string& key, const std::optional<std::string>& value) {
  REQUIRE(SetValue(&r, key, value).ok());
  return r;
}

}  // namespace attune::slime::testing

#endif  // ATTUNE_TESTS_UNIT_SLIME_FIXTURE_H_
