// Shared helpers for the megatron stack tests: the stack loaded from the source tree, reference
// recipes and clusters, file reading and a small CSV reader for the shared fixtures' INDEX.csv.
#ifndef ATTUNE_TESTS_UNIT_MEGATRON_TEST_SUPPORT_H_
#define ATTUNE_TESTS_UNIT_MEGATRON_TEST_SUPPORT_H_

#include <map>
#include <string>
#include <vector>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "megatron_stack.h"

namespace attune::megatron::testing {

// The stack with the knowledge files of this checkout (loaded once).
const MegatronStack& Stack();

// H100 nodes: 80 GiB, compute capability 9, 8 per node.
ClusterInfo H100();
// B200 nodes: compute capability 10.
ClusterInfo B200();
// The local launcher on a CPU machine: device type "cpu", 2 devices (cores), no GPU facts.
ClusterInfo Cpu();

// 2 nodes x 8 GPUs, TP 2, PP 2, SP, dense 32-layer GPT, MBS 1, GBS 256, per-token loss, pinned
// padded vocab, distributed optimizer with overlapped grad reduce: valid on H100().
Recipe DenseRecipe();
// 1 node x 8 GPUs, 8-expert MoE, EP 1, TP 1: valid on H100().
Recipe MoeRecipe();
// 1 x 1 GPU, minigpt-sized.
Recipe TinyRecipe();
// workflows/recipes/minigpt.yaml's settings: MBS 1 of GBS 8, full uniform recompute, gpu_type cpu.
Recipe MinigptRecipe();

Recipe With(Recipe r, const std::string& key, const std::optional<std::string>& value);

std::string ReadFile(const std::string& path);
std::string SharedLogs();      // <shared>/fixtures/logs
std::string OwnFixtures();     // <source>/tests/fixtures/megatron

// Rows of a CSV file with a header; fields keyed by column name.
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path);

}  // namespace attune::megatron::testing

#endif  // ATTUNE_TESTS_UNIT_MEGATRON_TEST_SUPPORT_H_
