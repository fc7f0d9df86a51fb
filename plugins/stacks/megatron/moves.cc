#include "moves.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "devices.h"
#include "objective.h"
#include "companions.h"
#include "recipe_view.h"
#include "validate.h"

namespace attune::megatron {
namespace {

long GeneratorLimit(const std::string& max, const Recipe& recipe) {
  RecipeView v = ReadView(recipe);
  if (max == "gpus_per_node") return v.gpus_per_node;
  if (max == "nvlink_gpus") return v.nvlink_gpus;
  if (max == "world") return v.world;
  if (max == "num_layers") return v.layers.value_or(1);
  if (max == "layers_per_stage") {
    // Megatron caps a recompute count at the layers a stage holds: values past it repeat a move.
    auto counts = PipelineRankLayers(recipe, v);
    if (counts && !counts->empty()) return *std::max_element(counts->begin(), counts->end());
    return std::max(1L, v.layers.value_or(1) / std::max(1L, v.pp));
  }
  if (max == "num_experts") return v.experts.value_or(1);
  return std::atol(max.c_str());
}

// What the lever's absent key means in `recipe`: its catalog default, or the value of the key it
// defaults from (itself defaulting to that key's lever's default).
std::optional<std::string> EffectiveDefault(const Knowledge& knowledge, const LeverSpec& spec,
                                            const Recipe& recipe) {
  if (spec.default_from.empty()) return spec.default_value;
  if (auto value = GetValue(recipe, spec.default_from)) return value;
  for (const auto& other : knowledge.levers) {
    if (!other.lever.keys.empty() && other.lever.keys[0] == spec.default_from) return other.default_value;
  }
  return spec.default_value;
}

bool TurnsOn(const std::optional<std::string>& from, const std::optional<std::string>& to,
             const LeverSpec& spec) {
  if (!to) return false;
  return !from || (spec.default_value && *to != *spec.default_value);
}

// The changes for one lever value, or std::nullopt when the lever may not move there.
std::optional<std::vector<Change>> BuildChanges(const Knowledge& knowledge, const LeverSpec& spec,
                                                const std::optional<std::string>& value,
                                                const Recipe& recipe, const ClusterInfo& cluster) {
  Recipe next = recipe;
  std::vector<Change> changes;
  if (spec.type == LeverType::kPreset) {
    const Preset& preset = spec.presets[std::stoul(*value)];
    for (const auto& key : spec.lever.keys) {
      std::optional<std::string> to;
      for (const auto& [k, v] : preset.set) {
        if (k == key) to = v;
      }
      AddChange(&next, &changes, key, to);
    }
  } else {
    const std::string& key = spec.lever.keys[0];
    auto from = GetValue(recipe, key);
    // An absent key already means the default: moving to the default is no move.
    std::optional<std::string> absent_means = EffectiveDefault(knowledge, spec, recipe);
    if (!from && value && absent_means && *value == *absent_means) return std::nullopt;
    AddChange(&next, &changes, key, value);
  }
  if (changes.empty()) return std::nullopt;
  bool on = TurnsOn(changes[0].from, changes[0].to, spec);
  for (const auto& key : spec.excludes) {
    if (on && GetValue(next, key)) return std::nullopt;
  }
  for (const auto& key : spec.requires_present) {
    if (!GetValue(next, key)) return std::nullopt;
  }
  if (on) {
    for (const auto& [key, v] : spec.adds_when_on) AddChange(&next, &changes, key, v);
  }
  for (const auto& name : spec.companions) ApplyCompanion(name, cluster, recipe, &next, &changes);
  return changes;
}

std::string Summarize(const LeverSpec& spec, const std::optional<std::string>& value,
                      const std::vector<Change>& changes, const Recipe& recipe) {
  std::string s = spec.lever.id + ": ";
  if (spec.type == LeverType::kPreset) {
    s += "preset '" + spec.presets[std::stoul(*value)].name + "' (" + DescribeChanges(changes) + ")";
  } else {
    s += DescribeChanges(changes);
  }
  if (spec.lever.id == "micro_batch_size") {
    RecipeView before = ReadView(recipe);
    Recipe after = recipe;
    (void)ApplyChanges(&after, changes);
    s += " (micro-batches per step " + std::to_string(before.micro_batches) + " -> " +
         std::to_string(ReadView(after).micro_batches) + ", global batch unchanged)";
  }
  return s;
}

}  // namespace

std::vector<std::optional<std::string>> CandidateValues(const LeverSpec& spec,
                                                        const Recipe& recipe) {
  std::vector<std::optional<std::string>> out;
  switch (spec.type) {
    case LeverType::kSwitch:
      return {std::nullopt, std::string()};
    case LeverType::kPreset:
      for (size_t i = 0; i < spec.presets.size(); ++i) out.push_back(std::to_string(i));
      return out;
    case LeverType::kInt:
    case LeverType::kChoice:
      break;
  }
  if (!spec.powers_of_two_up_to.empty()) {
    long limit = GeneratorLimit(spec.powers_of_two_up_to, recipe);
    for (long p = 1; p <= limit && p <= (1L << 20); p *= 2) out.push_back(std::to_string(p));
    return out;
  }
  if (!spec.divisors_of.empty()) {
    long of = GeneratorLimit(spec.divisors_of, recipe);
    long limit = std::min(of, GeneratorLimit(spec.divisors_up_to, recipe));
    for (long d = 1; d <= limit && d <= (1L << 20); ++d) {
      if (of % d == 0) out.push_back(std::to_string(d));
    }
    return out;
  }
  return spec.values;
}

std::vector<Move> EnumerateMoves(const Knowledge& knowledge, const Recipe& recipe,
                                 const ClusterInfo& cluster) {
  std::vector<Move> moves;
  const DeviceKind device = ClusterDeviceKind(cluster);
  const RecipeView view = ReadView(recipe);
  for (const auto& spec : knowledge.levers) {
    // A GPU-only lever on a CPU cluster is refused at launch or does nothing: never propose it.
    if (!LeverRunsOn(spec, device)) continue;
    // Sharding over, or overlapping communication with, a single data-parallel rank changes
    // nothing: a candidate spent on it could only measure noise.
    if (spec.needs_data_parallel && view.dp <= 1) continue;
    // Megatron turns sequence parallelism off at TP 1: switching it there changes nothing.
    if (spec.needs_tensor_parallel && view.tp <= 1) continue;
    // Megatron ignores the MoE settings of a dense model.
    if (spec.needs_experts && !view.experts) continue;
    for (const auto& value : CandidateValues(spec, recipe)) {
      auto changes = BuildChanges(knowledge, spec, value, recipe, cluster);
      if (!changes) continue;
      Recipe next = recipe;
      if (!ApplyChanges(&next, *changes).ok()) continue;
      if (!ClusterViolations(knowledge, next, cluster).empty()) continue;
      // Megatron takes a one-stage virtual pipeline as none: a virtual-pipeline value that leaves
      // the stages a rank holds as they were changes nothing.
      const bool virtual_pipeline = !spec.lever.keys.empty() &&
                                    (spec.lever.keys[0] == "--num-virtual-stages-per-pipeline-rank" ||
                                     spec.lever.keys[0] == "--num-layers-per-virtual-pipeline-stage");
      if (virtual_pipeline && ReadView(next).vpp == view.vpp) continue;
      if (!CheckObjectiveRules(knowledge, recipe, next).pass) continue;
      Move move{spec.lever.id, *changes, Summarize(spec, value, *changes, recipe), {}, {}};
      for (const Change& c : move.changes) {
        if (c.from || spec.lever.keys.empty() || c.key != spec.lever.keys[0]) continue;
        if (auto absent_means = EffectiveDefault(knowledge, spec, recipe)) move.defaults[c.key] = *absent_means;
      }
      moves.push_back(std::move(move));
    }
  }
  return moves;
}

}  // namespace attune::megatron
