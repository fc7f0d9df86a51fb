// Copyright attune authors.
//
// Dry runs of AutoModel recipes on the simulated cluster (attune/sim_plan.h, docs/sim.md): the
// recipe's effective settings (config + dotted overrides) as a parallel plan — FSDP2 / Megatron-FSDP
// / DDP over the data-parallel ranks with TP, CP, PP and EP — and the simulated job's log in
// AutoModel's own format, which this stack's parser reads.
#ifndef ATTUNE_PLUGINS_STACKS_AUTOMODEL_DRY_RUN_H_
#define ATTUNE_PLUGINS_STACKS_AUTOMODEL_DRY_RUN_H_

#include <string>

#include <nlohmann/json.hpp>

#include "attune/cluster.h"
#include "attune/recipe.h"
#include "attune/sim_plan.h"
#include "attune/status.h"
#include "knowledge.h"

namespace attune::automodel {

// The config.json fields of checkpoint `name`: config.json in `name` when it is a local
// directory, else the checkpoint's config.json in the local Hugging Face cache (HF_HUB_CACHE,
// HF_HOME/hub, ~/.cache/huggingface/hub), else stacks/automodel/models.yaml. NotFound says where
// it looked and how to add the model.
Result<nlohmann::json> FindModelConfig(const std::string& name, const Knowledge& knowledge);

// The shape a config.json describes (transformers' field names; Llama, Mistral/Mixtral, Qwen2/3 and
// Qwen-MoE, DeepSeek-style MoE), with `seq_length` tokens per sequence.
Result<sim::ModelShape> ShapeFromModelConfig(const nlohmann::json& config, int64_t seq_length);

Result<sim::ParallelPlan> AutoModelSimulationPlan(const Recipe& recipe, const Knowledge& knowledge,
                                                  const ClusterInfo& cluster, int world);

std::string RenderAutoModelLog(const Recipe& recipe, const sim::SimulatedRun& run);

}  // namespace attune::automodel

#endif  // ATTUNE_PLUGINS_STACKS_AUTOMODEL_DRY_RUN_H_
