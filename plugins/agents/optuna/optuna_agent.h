// Copyright attune authors.
//
// OptunaAgent: the Bayesian-optimisation baseline. Each Propose rebuilds an Optuna study from
// the view (optuna_space.h: one categorical parameter per lever, every measured recipe a complete
// trial valued at tokens/s/GPU, every recipe the gate refused or that failed for its own sake a
// failed trial), asks it for points through a Python helper (optuna_helper.py, run once per call
// with support::RunProcess, the request on stdin) and maps the first point that moves a lever to
// one open legal move from the leader. Stateless: a restarted campaign gets the same answer from
// the same view (the sampler is seeded with view.seed). Done when no open move is left or the
// budget left is below one job's cost.
//
// Config (`with:`, options_schema.cc): sampler (tpe | random | nsga2; cmaes and qmc are refused),
// startup_trials, timeout_s, python, helper. The README documents the helper protocol.
#ifndef ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTUNA_AGENT_H_
#define ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTUNA_AGENT_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attune/agent.h"
#include "optuna_space.h"

namespace attune::agents::optuna {

// How many points one helper run asks for: the first that maps to an open move is proposed.
inline constexpr int kAsksPerProposal = 8;

struct OptunaConfig {
  std::string sampler = "tpe";
  int startup_trials = 10;
  double timeout_s = 60;
  std::string python = "/usr/bin/python3";
  std::string helper;  // resolved absolute path of optuna_helper.py
};

// Validates `with:` against the schema and refuses the samplers that cannot work on a categorical
// space. `module_dir` and `data_dir` are where the helper is looked for when `helper` is not set:
// <module_dir>/optuna_helper.py (installed and build trees), then
// <data_dir>/plugins/agents/optuna/optuna_helper.py (a source tree as data directory).
Result<OptunaConfig> ParseOptunaConfig(const nlohmann::json& with, const std::string& module_dir,
                                       const std::string& data_dir);

class OptunaAgent : public Agent {
 public:
  explicit OptunaAgent(OptunaConfig config) : config_(std::move(config)) {}
  std::string Name() const override { return "optuna"; }
  Result<Proposal> Propose(const CampaignView& view) override;

 private:
  // One helper run: the request in, the parsed answer (its "points") out.
  Result<nlohmann::json> RunHelper(const nlohmann::json& request) const;
  // The proposal for the helper's points (may throw nlohmann::json::exception on a bad answer).
  Result<Proposal> ProposeFrom(const CampaignView& view, const SearchSpace& space,
                               const std::vector<const Move*>& open, const nlohmann::json& answer,
                               nlohmann::json meta) const;

  OptunaConfig config_;
};

Result<std::unique_ptr<Plugin>> CreateOptunaAgent(const PluginContext& context);

}  // namespace attune::agents::optuna

#endif  // ATTUNE_PLUGINS_AGENTS_OPTUNA_OPTUNA_AGENT_H_
