// Copyright attune authors.
//
// The reference for a scenario: a level-by-level search of the recipes reachable from the
// baseline by legal moves (Stack::LegalMoves, each also passing the static gate against the
// baseline), de-duplicated by recipe id, each run once on the simulated cluster with its noise
// turned off. Level 1 is every single move from the baseline; each further level expands the
// `beam` fastest recipes of the level before (exhaustive while a level has at most `beam`
// feasible recipes). The best throughput found is the bar the tuners are measured against.
//
// The Evaluator runs one recipe, in the stack's benchmark form as a campaign would, through the
// real plugins (stack renders and parses; the sim launcher runs the job in virtual time) and
// caches the result by recipe id.
#ifndef ATTUNE_TOOLS_BENCH_TUNERS_SPACE_SEARCH_H_
#define ATTUNE_TOOLS_BENCH_TUNERS_SPACE_SEARCH_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "attune/launcher.h"
#include "attune/stack.h"
#include "bench_types.h"
#include "plugin/plugin_host.h"

namespace attune::bench {

// The parts of a workflow file the bench needs.
struct ScenarioFile {
  std::string path;
  std::string stack;
  nlohmann::json stack_with = nlohmann::json::object();
  std::string launcher;
  nlohmann::json launcher_with = nlohmann::json::object();
  std::string recipe_path;   // absolute
  double budget_gpu_hours = 0;
  Recipe recipe;
};

Result<ScenarioFile> ReadScenario(const std::string& workflow_path);

class Evaluator {
 public:
  // `work_dir` holds the reference jobs' directories. A job that measured is deleted once read
  // unless `keep_jobs` (a search evaluates thousands: gigabytes of simulated logs); a job that
  // failed is always kept, to be looked at.
  static Result<std::unique_ptr<Evaluator>> Create(PluginHost* host, const ScenarioFile& scenario,
                                                   const std::string& data_dir,
                                                   const std::string& work_dir,
                                                   bool keep_jobs = false);
  // Noise-free tokens/s/GPU, or std::nullopt when the recipe fails on the simulated cluster.
  std::optional<double> TokensPerS(const Recipe& recipe);
  // One more run of `recipe`, never cached, in a job directory called `name` (unique per call).
  std::optional<double> MeasureAgain(const Recipe& recipe, const std::string& name);
  const Stack& stack() const { return *stack_; }
  // Whether each evaluation is a real run (a launcher that polls at an interval, e.g. local:
  // minigpt), which costs minutes, not a simulated one in virtual time.
  bool real_time() const;
  const ClusterInfo& cluster() const { return cluster_; }

 private:
  std::optional<double> RunOnce(const Recipe& recipe, const std::string& name);

  std::unique_ptr<Stack> stack_;
  std::unique_ptr<Launcher> launcher_;
  ClusterInfo cluster_;
  std::string work_dir_;
  bool keep_jobs_ = false;
  std::map<std::string, std::optional<double>> cache_;
};

SpaceResult SearchSpace(Evaluator* evaluator, const Recipe& baseline, int depth, int max_states,
                        int beam);

// Raises `r->best_tps` past the beam's horizon (simulated clusters only: on a real launcher each
// neighbour is a real run, and the reference is the grid the search covered; it returns at once): from each start (the search's fastest recipes, the
// agents' final leaders) a steepest-ascent climb over one-move neighbours (legal, passing the
// static gate against the baseline), noise-free, until no neighbour is faster; at most
// `max_states` neighbour evaluations in all.
void ClimbFromStarts(Evaluator* evaluator, const Recipe& baseline, const std::vector<Recipe>& starts,
                     int max_states, SpaceResult* r);

// Default grid space: at most `max_keys` keys the baseline's legal moves touch, preferring
// micro-batch size, TP, PP and recompute granularity (what framework grid tuners sweep), then
// the keys with the most moves; each with the baseline's value and the values the moves propose.
nlohmann::json DefaultGridSpace(const Evaluator& evaluator, const Recipe& baseline,
                                int max_keys = 3);

}  // namespace attune::bench

#endif  // ATTUNE_TOOLS_BENCH_TUNERS_SPACE_SEARCH_H_
