// Copyright attune authors.
//
// Dry runs of Megatron-LM recipes (attune/sim_plan.h, docs/sim.md): the recipe's flags read into
// the parallel plan the simulated cluster models, Megatron's argument checks (sim_rules.h) and
// its log text (sim_log.h). The slime stack reuses the mapping for its train.py arguments, and the
// sim launcher's `predict` command reads calibration rows through it.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_MAPPING_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_MAPPING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "attune/sim_plan.h"
#include "attune/status.h"

namespace attune::megatron {

// The plan plus what Megatron's checks and its argument dump need: the flags as given (flag ->
// joined values, "" for a switch), the environment, and the argparse errors met while reading
// (the first one wins, as argparse reports it before anything else runs).
struct SimSetup : sim::ParallelPlan {
  std::map<std::string, std::string> flags;
  std::map<std::string, std::string> env;
  std::vector<std::string> read_errors;

  bool Has(const std::string& flag) const { return flags.count(flag) > 0; }
};

// Reads a Megatron recipe for a job of `world` GPUs. Never fails on Megatron-level problems
// (CheckMegatronArguments reports those as Megatron would); fails only when the recipe is not a
// Megatron GPT recipe at all (no --num-layers/--hidden-size/--num-attention-heads).
Result<SimSetup> ReadSimSetup(const Recipe& recipe, int world);

// ReadSimSetup, then Megatron's checks: the plan, with its refusal set when Megatron would refuse.
Result<sim::ParallelPlan> MegatronSimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                                 int world);

// Padded vocabulary, as Megatron computes it: ceil(V / (divisible_by·TP))·(divisible_by·TP).
int64_t PaddedVocab(int64_t vocab, int64_t divisible_by, int tp);

// Megatron's --pipeline-model-parallel-layout unrolled into its virtual stages, each a string of
// E (embedding), t (decoder layer), m (MTP depth) and L (loss); nothing when the text is not a
// layout Megatron parses.
std::optional<std::vector<std::string>> UnrollPipelineLayout(std::string text);

// True for flags that change speed, memory or logging only (reference §1); they do not enter the
// objective key.
bool IsThroughputOrLoggingFlag(const std::string& flag);

// A canonical string of the objective-defining flags and values.
std::string ObjectiveKey(const std::map<std::string, std::string>& flags);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_SIM_MAPPING_H_
