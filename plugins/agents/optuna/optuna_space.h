// Copyright attune authors.
//
// The optuna agent's view of a campaign as an optimisation problem, and the way back from a
// sampled point to one legal move. Pure functions of the view; deterministic; thread-compatible.
//
// Search space: one categorical parameter per catalog lever, named by the lever id. A lever's
// value in a recipe is the text of its keys' values ("--tensor-model-parallel-size=2
// --sequence-parallel=" for a lever of two keys; "(absent)" for a missing key). Its choices are
// the values it has in the baseline, the leader, every candidate of the history and the target
// of every legal move, sorted (numbers by value). Levers with fewer than two choices are left
// out: nothing can be learnt about them.
//
// Trials (what is told to the study), one per recipe the campaign ran:
//  - the baseline and every candidate measured (new_leader, slower, within_noise): complete,
//    value = tokens/s/GPU (maximised);
//  - refused by the gate, failed for the recipe (OOM, config error, ...), paired-loss mismatch:
//    failed trials;
//  - an infrastructure failure, pending or skipped: not told (the recipe is not to blame).
//
// Mapping a sampled point back to a proposal (ChooseMove): the open moves are the legal moves
// from the leader that history.h does not rule out (tried recipe or banned change). Among the
// levers where the point differs from the leader, the move that reaches the sampled value
// exactly wins; without one, the move on such a lever whose value is nearest (in the lever's
// sorted choices); ties go to the lever with the larger expected speed effect in the catalog
// (|expected_speed|: a lever that costs speed one way, like recompute, gains it the other way),
// then to the move listed first. A point equal to the leader on every lever with an open move
// maps to nothing. The tie-break matters: a point sampled at random differs from the leader on
// most levers, and with the signed prior a lever like recompute (-15% when turned on) was never
// reached, so the agent did worse than random search in the tuner benchmark.
#ifndef ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTUNA_SPACE_H_
#define ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTUNA_SPACE_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attune/agent.h"

namespace attune::agents::optuna {

struct Trial {
  std::string candidate_id;                   // "baseline" or "c003"
  std::map<std::string, std::string> params;  // lever id -> value text
  bool failed = false;
  double value = 0;  // tokens/s/GPU when !failed
};

struct SearchSpace {
  std::map<std::string, std::vector<std::string>> choices;  // lever id -> sorted values
  std::vector<Trial> trials;
};

// A lever's value text in `recipe` (see the file comment).
std::string LeverValue(const Lever& lever, const Recipe& recipe);

SearchSpace BuildSearchSpace(const CampaignView& view);

// The helper's request (README.md, "Protocol").
nlohmann::json RequestJson(const SearchSpace& space, const std::string& sampler, uint64_t seed,
                           int startup_trials, int asks);

struct MoveChoice {
  const Move* move = nullptr;
  bool exact = false;  // the move reaches the sampled value of its lever
};

// The legal moves from the leader that are not ruled out by the history (history.h).
std::vector<const Move*> OpenMoves(const CampaignView& view);

// The open move a sampled point maps to (see the file comment); std::nullopt when none.
std::optional<MoveChoice> ChooseMove(const CampaignView& view, const SearchSpace& space,
                                     const std::vector<const Move*>& open,
                                     const std::map<std::string, std::string>& point);

}  // namespace attune::agents::optuna

#endif  // ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTUNA_SPACE_H_
