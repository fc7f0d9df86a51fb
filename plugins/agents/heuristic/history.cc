// Copyright attune authors.
#include "history.h"

#include <algorithm>

namespace attune::agents {

std::string ValueText(const std::optional<std::string>& value) {
  return value ? *value : std::string("(absent)");
}

std::optional<Recipe> Apply(const Recipe& base, const std::vector<Change>& changes) {
  Recipe out = base;
  // SetValue rather than ApplyChanges: a history record's `from` may describe an older leader
  // than the one we rebuild (the engine records changes relative to the base at that time).
  for (const Change& c : changes) {
    if (!SetValue(&out, c.key, c.to).ok()) return std::nullopt;
  }
  return out;
}

bool IsInfrastructureFailure(const CandidateRecord& record) {
  return record.outcome == Outcome::kFailed && record.failure && record.failure->infrastructure;
}

bool BansItsChanges(const CandidateRecord& record) {
  // A pair (two levers proposed together) is judged as a whole: its recipe is tried, but neither
  // change alone is to blame for what the combination did.
  const nlohmann::json& levers = record.agent_meta.is_object() && record.agent_meta.contains("levers")
                                     ? record.agent_meta["levers"]
                                     : nlohmann::json();
  if (levers.is_array() && levers.size() > 1) return false;
  if (record.outcome == Outcome::kRefused || record.outcome == Outcome::kPairedLossMismatch) return true;
  if (record.outcome != Outcome::kFailed) return false;
  return !IsInfrastructureFailure(record);
}

std::vector<Change> BlamedChanges(const CampaignView& view, const CandidateRecord& record) {
  auto lever = std::find_if(view.levers.begin(), view.levers.end(),
                            [&](const Lever& l) { return l.id == record.lever_id; });
  if (lever == view.levers.end()) return record.changes;
  std::vector<Change> blamed;
  for (const Change& c : record.changes) {
    if (std::find(lever->keys.begin(), lever->keys.end(), c.key) != lever->keys.end()) {
      blamed.push_back(c);
    }
  }
  // Companion changes (an env var that must follow TP, ...) stay usable by other levers.
  return blamed.empty() ? record.changes : blamed;
}

TriedSet CollectTried(const CampaignView& view) {
  TriedSet tried;
  tried.recipes_by_candidate["baseline"] = view.baseline;
  tried.recipe_ids.insert(RecipeId(view.baseline));
  tried.recipe_ids.insert(RecipeId(view.leader));
  // Measured peaks of the bases, for out-of-memory bans.
  std::map<std::string, double> peak_gib;
  if (view.baseline_measurement && view.baseline_measurement->peak_memory_gib) {
    peak_gib["baseline"] = *view.baseline_measurement->peak_memory_gib;
  }
  for (const CandidateRecord& record : view.history) {
    if (record.measurement && record.measurement->peak_memory_gib && !record.candidate_id.empty()) {
      peak_gib[record.candidate_id] = *record.measurement->peak_memory_gib;
    }
    if (BansItsChanges(record)) {
      const bool oom = record.outcome == Outcome::kFailed && record.failure &&
                       record.failure->kind == FailureKind::kOom;
      auto base_peak = peak_gib.find(record.base_id.empty() ? std::string("baseline") : record.base_id);
      for (const Change& c : BlamedChanges(view, record)) {
        const std::pair<std::string, std::string> key{c.key, ValueText(c.to)};
        if (oom && base_peak != peak_gib.end()) {
          auto [it, inserted] = tried.oom_at_peak_gib.emplace(key, base_peak->second);
          if (!inserted) it->second = std::min(it->second, base_peak->second);
          const nlohmann::json& memory = record.agent_meta.is_object() && record.agent_meta.contains("memory")
                                             ? record.agent_meta["memory"] : nlohmann::json();
          if (memory.is_number()) {
            const double predicted = base_peak->second * (1 + memory.get<double>());
            auto [p, fresh] = tried.oom_predicted_peak_gib.emplace(key, predicted);
            if (!fresh) p->second = std::min(p->second, predicted);
          }
        } else {
          tried.banned.insert(key);
        }
      }
    }
    auto base = tried.recipes_by_candidate.find(record.base_id);
    const Recipe* base_recipe = nullptr;
    if (base != tried.recipes_by_candidate.end()) {
      base_recipe = &base->second;
    } else if (record.base_id == view.leader_id) {
      base_recipe = &view.leader;
    }
    if (base_recipe == nullptr) continue;  // an unknown base: its recipe cannot be rebuilt
    std::optional<Recipe> recipe = Apply(*base_recipe, record.changes);
    if (!recipe) continue;
    tried.recipe_ids.insert(RecipeId(*recipe));
    if (!record.candidate_id.empty()) tried.recipes_by_candidate[record.candidate_id] = *recipe;
  }
  // A change also banned for another reason (a gate refusal, a config error) stays banned.
  for (const auto& key : tried.banned) {
    tried.oom_at_peak_gib.erase(key);
    tried.oom_predicted_peak_gib.erase(key);
  }
  return tried;
}

bool TouchesBanned(const TriedSet& tried, const std::vector<Change>& changes,
                   std::optional<double> base_peak_gib, std::optional<double> predicted_peak_gib) {
  for (const Change& c : changes) {
    const std::pair<std::string, std::string> key{c.key, ValueText(c.to)};
    if (tried.banned.count(key) > 0) return true;
    auto oom = tried.oom_at_peak_gib.find(key);
    if (oom == tried.oom_at_peak_gib.end()) continue;
    if (base_peak_gib && *base_peak_gib <= oom->second * (1.0 - kOomRetryMargin)) continue;
    auto then = tried.oom_predicted_peak_gib.find(key);
    if (predicted_peak_gib && then != tried.oom_predicted_peak_gib.end() &&
        *predicted_peak_gib <= then->second * (1.0 - kOomRetryMargin)) {
      continue;
    }
    return true;
  }
  return false;
}

bool BlockedOnlyByOutOfMemory(const TriedSet& tried, const Recipe& base, const std::vector<Change>& changes) {
  bool oom = false;
  for (const Change& c : changes) {
    const std::pair<std::string, std::string> key{c.key, ValueText(c.to)};
    if (tried.banned.count(key) > 0) return false;
    oom = oom || tried.oom_at_peak_gib.count(key) > 0;
  }
  if (!oom) return false;
  std::optional<Recipe> recipe = Apply(base, changes);
  return recipe && tried.recipe_ids.count(RecipeId(*recipe)) == 0;
}

bool AlreadyTried(const TriedSet& tried, const Recipe& leader, const std::vector<Change>& changes,
                  std::optional<double> base_peak_gib) {
  if (changes.empty() || TouchesBanned(tried, changes, base_peak_gib)) return true;
  std::optional<Recipe> recipe = Apply(leader, changes);
  if (!recipe) return true;
  return tried.recipe_ids.count(RecipeId(*recipe)) > 0;
}

}  // namespace attune::agents
