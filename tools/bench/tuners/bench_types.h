// Copyright attune authors.
//
// tuner_bench: compares the agents (heuristic, random, grid, optuna) on the simulated
// scenarios at equal GPU-hour budgets. Shared value types.
#ifndef ATTUNE_TOOLS_BENCH_TUNERS_BENCH_TYPES_H_
#define ATTUNE_TOOLS_BENCH_TUNERS_BENCH_TYPES_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe.h"

namespace attune::bench {

struct BenchOptions {
  std::string attune_bin;                 // the `attune` CLI that runs campaigns
  std::vector<std::string> workflows;     // sim-*.yaml scenarios
  std::vector<std::string> agents = {"heuristic", "random", "grid", "optuna"};
  int seeds = 3;
  std::optional<double> budget_gpu_hours; // default: each workflow's own budget
  int depth = 4;                          // exhaustive search: moves from the baseline
  int max_states = 6000;                  // exhaustive search: recipes evaluated at most
  int beam = 40;                          // exhaustive search: recipes expanded per level
  std::string out_dir = "/tmp/attune-tuner-bench";
  std::vector<std::string> plugin_paths;
  std::string data_dir;                   // stacks/, skill/, workflows/
  nlohmann::json grid_space;              // null: derived from the baseline's legal moves
  int campaign_timeout_s = 900;
  // Keep every campaign's directory and every measured reference job's. Off: a campaign's
  // directory goes once its events are read back (events.ndjson, run.out and run.err stay), and
  // a reference job's once measured; whatever failed is kept either way.
  bool keep_runs = false;
  // Side-by-side re-measurement (meant for real launchers, where one run per recipe is noisy):
  // `remeasure_rounds` rounds, each running the baseline, the reference's `remeasure_top`
  // fastest recipes and every campaign's final leader once, in a rotating order. 0: off.
  int remeasure_rounds = 0;
  int remeasure_top = 3;
  // reference.json files of earlier runs (--reference): each scenario's best recipes there are
  // evaluated again and climbed from, so that "best" only grows from run to run.
  std::vector<std::string> reference_files;
};

// What the exhaustive search found for one scenario.
struct SpaceResult {
  double baseline_tps = 0;
  double best_tps = 0;
  std::string best_change;   // "--micro-batch-size: 1 -> 4, ..."
  int evaluated = 0;
  int feasible = 0;
  int depth = 0;
  bool truncated = false;    // hit max_states before exhausting the depth
  bool beamed = false;       // some level had more feasible recipes than the beam kept
  // The search is not exhaustive past its depth and beam: when an agent's final leader is faster
  // than what it found, that leader is the best known and every run is scored against it.
  double searched_best_tps = 0;
  std::string raised_by;     // the agent whose leader raised best_tps ("" when none did)
  // The climb past the beam (ClimbFromStarts): whether it raised best_tps, the moves of the climb
  // that did, the neighbours evaluated in all and whether it stopped at its cap.
  bool climbed = false;
  int climb_steps = 0;
  int climb_evaluated = 0;
  bool climb_truncated = false;
  double beam_best_tps = 0;  // best_tps as the level search left it
  // Whether a recipe carried from an earlier run's reference.json (--reference), re-evaluated
  // here, raised best_tps, and the fastest recipe known (written to this run's reference.json).
  bool carried = false;
  std::optional<Recipe> best_recipe;
  // The fastest feasible recipes the search measured (the baseline included), fastest first, at
  // most kTopKept: what a side-by-side re-measurement runs again.
  std::vector<std::pair<double, Recipe>> top;
  // The fastest feasible recipe the search found at each number of moves from the baseline
  // (index 0: the baseline itself; 0 where a level had none).
  std::vector<double> level_best;

  // The fewest one-lever moves from the baseline to a recipe at 90% of best_tps among the
  // recipes the search measured: 0 when the baseline is there already, -1 when no level reaches
  // it (the best was raised past the search by an agent's leader). Levels past the first are
  // beam-limited, so a shorter path the beam dropped is possible but not seen.
  int MovesTo90() const {
    for (size_t d = 0; d < level_best.size(); ++d) {
      if (best_tps > 0 && level_best[d] >= 0.9 * best_tps) return static_cast<int>(d);
    }
    return -1;
  }
};

inline constexpr int kTopKept = 10;

// One campaign, as read back from its event log.
struct CampaignOutcome {
  std::string workflow, agent;
  int seed = 0;
  int exit_code = 0;
  std::string error;                    // why it could not be read (empty when fine)
  double final_tps = 0;                 // noise-free throughput of the final leader
  double final_speedup = 0;             // final_tps / baseline_tps
  double fraction_of_best = 0;          // final_tps / exhaustive best
  std::optional<double> gpu_hours_to_90;  // charged when the leader first reached 90% of best
  double gpu_hours_charged = 0;
  // Charged when each candidate's first job finished, in the order the candidates ran. Every
  // candidate differs from a measured recipe by one lever, so a leader n moves from the baseline
  // comes at the earliest with the n-th candidate: no agent reaches 90% of the best sooner than
  // the baseline's runs and SpaceResult::MovesTo90() candidates' jobs.
  std::vector<double> gpu_hours_after_candidates;
  int jobs = 0;
  int failed_jobs = 0;
  int recipe_failures = 0;              // failed jobs not blamed on infrastructure (OOM, config)
  int candidates = 0;
  int refused = 0;
  // Speedup of the leader once 25%, 50% and 100% of the campaign's budget were charged (the
  // leader's noise-free throughput over the baseline's; a campaign that stopped early keeps its
  // last leader).
  double speedup_at_budget[3] = {0, 0, 0};
  // (GPU-hours charged, the leader's noise-free throughput) at each leader change.
  std::vector<std::pair<double, double>> trajectory;
  // The final leader: its candidate id and recipe (the baseline's when nothing beat it).
  std::string final_candidate = "baseline";
  std::optional<Recipe> final_recipe;
  // Filled by a side-by-side re-measurement (--remeasure): the leader's median throughput over
  // the best median among the reference's top recipes, and over the baseline's median.
  std::optional<double> remeasured_fraction_of_best;
  std::optional<double> remeasured_speedup;
};

inline constexpr double kBudgetCheckpoints[3] = {0.25, 0.5, 1.0};

}  // namespace attune::bench

#endif  // ATTUNE_TOOLS_BENCH_TUNERS_BENCH_TYPES_H_
