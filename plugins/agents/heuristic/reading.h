// Copyright attune authors.
//
// The heuristic's own reading of the leader: the stack's diagnoses (CampaignView::diagnosis)
// merged with what the agent reads itself from the measurement, the recipe and the history.
//
// Own readings (kinds as in attune/metrics.h):
//   memory_headroom / memory_pressure  peak memory vs ClusterInfo::device_memory_gib
//   oom                                a candidate built on the current leader failed out of memory
//   pipeline_bubble                    (PP-1)/(M·VPP) from the Megatron parallel sizes
//   communication                      TP beyond the NVLink domain (the node; 72 GPUs on GB200 and
//                                      GB300 racks); data-parallel reduce without overlap
//   launch_overhead                    many micro-batches of size 1
//   moe_imbalance                      few experts per expert-parallel rank: the busiest rank,
//                                      which every rank waits for, carries well above the mean
//   moe_dispatch                       the expert-parallel group spans NVLink domains: routed
//                                      tokens cross the network twice per MoE layer
//   compute_bound                      nothing else limits much
// Merge rule: one Diagnosis per kind, the higher severity wins, evidence strings are joined.
// Recipe readings use Megatron flag names; for other stacks they are simply absent.
#ifndef ATTUNE_PLUGINS_AGENTS_HEURISTIC_READING_H_
#define ATTUNE_PLUGINS_AGENTS_HEURISTIC_READING_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attune/agent.h"

namespace attune::agents {

// Parallel shape of a recipe, from Megatron flags (defaults when absent).
struct RecipeShape {
  int world = 1;
  int tp = 1, pp = 1, cp = 1, vpp = 1;
  int dp = 1;
  int mbs = 1;
  int ep = 1, etp = 1;  // expert parallel sizes (ETP defaults to TP)
  int experts = 0;
  std::optional<int> gbs;
  // Micro-batches per iteration per pipeline (GBS / (MBS·DP)); std::nullopt without GBS.
  std::optional<int> MicroBatches() const;
  // Pipeline idle fraction (PP-1)/(M·VPP); 0 without PP>1 or without M.
  double Bubble() const;
};

RecipeShape ReadShape(const Recipe& recipe);

// Parses a whole-string integer; std::nullopt otherwise.
std::optional<long long> ParseInt(const std::optional<std::string>& text);

// `key`'s value in `recipe` as a positive integer, read from `defaults` (what an absent key
// means, Move::defaults) when the recipe does not set it; std::nullopt otherwise.
std::optional<double> PositiveFlag(const Recipe& recipe,
                                   const std::map<std::string, std::string>& defaults,
                                   const std::string& key);

// The recipe's vocabulary: --vocab-size, else the one its --tokenizer-type implies
// (support::MegatronTokenizerVocab); std::nullopt when neither says.
std::optional<double> VocabSize(const Recipe& recipe,
                                const std::map<std::string, std::string>& defaults);

// How much more than the mean routed load the busiest of `ep` expert-parallel ranks carries when
// each holds experts/ep experts (0 without expert parallelism); see ReadMoe in reading.cc.
double MoeBusiestExcess(int experts, int ep);

// The merged diagnoses of the leader, sorted by decreasing severity (ties by kind).
std::vector<Diagnosis> ReadDiagnoses(const CampaignView& view);

// The severity of `kind` in `diagnoses` (0 when absent).
double SeverityOf(const std::vector<Diagnosis>& diagnoses, const std::string& kind);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HEURISTIC_READING_H_
