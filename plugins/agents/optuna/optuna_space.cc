// Copyright attune authors.
#include "optuna_space.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "history.h"

namespace attune::agents::optuna {
namespace {

// The value as a number when the whole text is one ("4", "1.5"); for ordering choices so that
// "nearest" means nearest in value for numeric levers.
std::optional<double> AsNumber(const std::string& text) {
  size_t eq = text.rfind('=');
  std::string value = eq == std::string::npos ? text : text.substr(eq + 1);
  if (value.empty() || text.find(' ') != std::string::npos) return std::nullopt;
  char* end = nullptr;
  double number = std::strtod(value.c_str(), &end);
  if (end != value.c_str() + value.size() || !std::isfinite(number)) return std::nullopt;
  return number;
}

bool ChoiceLess(const std::string& a, const std::string& b) {
  std::optional<double> x = AsNumber(a);
  std::optional<double> y = AsNumber(b);
  if (x && y && *x != *y) return *x < *y;
  if (x.has_value() != y.has_value()) return x.has_value();  // numbers before words
  return a < b;
}

std::optional<Trial> TrialOf(const CandidateRecord& record) {
  Trial trial;
  trial.candidate_id = record.candidate_id;
  switch (record.outcome) {
    case Outcome::kNewLeader:
    case Outcome::kSlower:
    case Outcome::kWithinNoise:
      if (!record.measurement || record.measurement->tokens_per_s_per_gpu <= 0) return std::nullopt;
      trial.value = record.measurement->tokens_per_s_per_gpu;
      return trial;
    case Outcome::kRefused:
    case Outcome::kPairedLossMismatch:
      trial.failed = true;
      return trial;
    case Outcome::kFailed:
      if (IsInfrastructureFailure(record)) return std::nullopt;  // retried by the engine
      trial.failed = true;
      return trial;
    case Outcome::kPending:
    case Outcome::kSkipped:
      return std::nullopt;
  }
  return std::nullopt;
}

// Every recipe the space is built over: baseline, leader, the history's, the moves' targets.
std::vector<Recipe> SpaceRecipes(const CampaignView& view, const TriedSet& tried) {
  std::vector<Recipe> recipes = {view.baseline, view.leader};
  for (const auto& [id, recipe] : tried.recipes_by_candidate) recipes.push_back(recipe);
  for (const Move& m : view.legal_moves) {
    if (std::optional<Recipe> target = Apply(view.leader, m.changes)) recipes.push_back(*target);
  }
  return recipes;
}

std::map<std::string, std::string> ParamsOf(const CampaignView& view, const SearchSpace& space,
                                            const Recipe& recipe) {
  std::map<std::string, std::string> params;
  for (const Lever& lever : view.levers) {
    if (space.choices.count(lever.id) > 0) params[lever.id] = LeverValue(lever, recipe);
  }
  return params;
}

const Lever* FindLever(const CampaignView& view, const std::string& id) {
  for (const Lever& l : view.levers) {
    if (l.id == id) return &l;
  }
  return nullptr;
}

long IndexOf(const std::vector<std::string>& choices, const std::string& value) {
  auto it = std::find(choices.begin(), choices.end(), value);
  return it == choices.end() ? -1 : static_cast<long>(it - choices.begin());
}

// How far the move lands from the sampled value: 0 exact, else the distance in sorted choices;
// std::nullopt when the move's lever is not in the space or the point keeps the leader's value.
std::optional<long> Distance(const CampaignView& view, const SearchSpace& space, const Move& move,
                             const std::map<std::string, std::string>& point) {
  const Lever* lever = FindLever(view, move.lever_id);
  auto choices = space.choices.find(move.lever_id);
  auto sampled = point.find(move.lever_id);
  if (lever == nullptr || choices == space.choices.end() || sampled == point.end())
    return std::nullopt;
  if (sampled->second == LeverValue(*lever, view.leader)) return std::nullopt;
  std::optional<Recipe> target = Apply(view.leader, move.changes);
  if (!target) return std::nullopt;
  long to = IndexOf(choices->second, LeverValue(*lever, *target));
  long want = IndexOf(choices->second, sampled->second);
  if (to < 0 || want < 0) return std::nullopt;
  return std::labs(to - want);
}

}  // namespace

std::string LeverValue(const Lever& lever, const Recipe& recipe) {
  std::string text;
  for (const std::string& key : lever.keys) {
    if (!text.empty()) text += ' ';
    if (lever.keys.size() > 1) text += key + "=";
    text += ValueText(GetValue(recipe, key));
  }
  return text;
}

SearchSpace BuildSearchSpace(const CampaignView& view) {
  TriedSet tried = CollectTried(view);
  std::vector<Recipe> recipes = SpaceRecipes(view, tried);
  SearchSpace space;
  for (const Lever& lever : view.levers) {
    std::set<std::string> values;
    for (const Recipe& r : recipes) values.insert(LeverValue(lever, r));
    if (values.size() < 2) continue;
    std::vector<std::string> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end(), ChoiceLess);
    space.choices[lever.id] = std::move(sorted);
  }
  if (space.choices.empty()) return space;
  if (view.baseline_measurement && view.baseline_measurement->tokens_per_s_per_gpu > 0) {
    space.trials.push_back({"baseline", ParamsOf(view, space, view.baseline), false,
                            view.baseline_measurement->tokens_per_s_per_gpu});
  }
  for (const CandidateRecord& record : view.history) {
    auto recipe = tried.recipes_by_candidate.find(record.candidate_id);
    if (recipe == tried.recipes_by_candidate.end()) continue;  // its base is unknown
    std::optional<Trial> trial = TrialOf(record);
    if (!trial) continue;
    trial->params = ParamsOf(view, space, recipe->second);
    space.trials.push_back(std::move(*trial));
  }
  return space;
}

nlohmann::json RequestJson(const SearchSpace& space, const std::string& sampler, uint64_t seed,
                           int startup_trials, int asks) {
  nlohmann::json trials = nlohmann::json::array();
  for (const Trial& t : space.trials) {
    nlohmann::json j = {{"candidate", t.candidate_id},
                        {"params", t.params},
                        {"state", t.failed ? "fail" : "complete"}};
    if (!t.failed) j["value"] = t.value;
    trials.push_back(std::move(j));
  }
  // numpy's generators take seeds below 2^32.
  return {{"protocol", 1},
          {"sampler", sampler},
          {"seed", seed % 4294967296ULL},
          {"startup_trials", startup_trials},
          {"asks", asks},
          {"space", space.choices},
          {"trials", std::move(trials)}};
}

std::vector<const Move*> OpenMoves(const CampaignView& view) {
  TriedSet tried = CollectTried(view);
  std::vector<const Move*> open;
  for (const Move& m : view.legal_moves) {
    if (!AlreadyTried(tried, view.leader, m.changes)) open.push_back(&m);
  }
  return open;
}

std::optional<MoveChoice> ChooseMove(const CampaignView& view, const SearchSpace& space,
                                     const std::vector<const Move*>& open,
                                     const std::map<std::string, std::string>& point) {
  std::optional<MoveChoice> best;
  long best_distance = 0;
  double best_gain = 0;
  for (const Move* m : open) {
    std::optional<long> distance = Distance(view, space, *m, point);
    if (!distance) continue;
    const Lever* lever = FindLever(view, m->lever_id);
    double gain = lever != nullptr ? std::fabs(lever->expected_speed) : 0;
    bool better =
        !best || *distance < best_distance || (*distance == best_distance && gain > best_gain);
    if (!better) continue;
    best = MoveChoice{m, *distance == 0};
    best_distance = *distance;
    best_gain = gain;
  }
  return best;
}

}  // namespace attune::agents::optuna
