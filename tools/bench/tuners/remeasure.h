// Copyright attune authors.
//
// Side-by-side re-measurement. On a real launcher each recipe of the reference search and each
// campaign's leader was run once, so "the grid's best" and "the shipped leader" both carry one
// run's noise, and the best of many noisy runs is biased upwards (the winner's curse). This runs
// the baseline, the reference's fastest recipes and every campaign's final leader again, `rounds`
// times each, one of each per round in an order that rotates from round to round (so a drift of
// the machine's speed is shared out), and compares medians.
#ifndef ATTUNE_TOOLS_BENCH_TUNERS_REMEASURE_H_
#define ATTUNE_TOOLS_BENCH_TUNERS_REMEASURE_H_

#include <ostream>
#include <string>
#include <vector>

#include "bench_types.h"
#include "space_search.h"

namespace attune::bench {

struct RemeasuredRecipe {
  std::string label;             // "baseline", "grid #2", "heuristic s1 leader c014", ...
  std::string change;            // its difference from the baseline
  bool in_reference = false;     // one of the reference's top recipes
  std::vector<double> runs;      // tokens/s/GPU of the successful runs
  int failed = 0;
  double median = 0;             // 0 when no run succeeded
  double cv = 0;                 // standard deviation / mean of the runs
};

struct RemeasureResult {
  std::vector<RemeasuredRecipe> recipes;
  double baseline_median = 0;
  double best_reference_median = 0;
  std::string best_reference_label;
};

// Runs the re-measurement for one scenario and fills each outcome's remeasured_* fields.
RemeasureResult Remeasure(Evaluator* evaluator, const Recipe& baseline, const SpaceResult& space,
                          int rounds, int top, std::vector<CampaignOutcome>* outcomes);

void PrintRemeasure(const std::string& scenario, const RemeasureResult& r, int rounds,
                    std::ostream& out);

}  // namespace attune::bench

#endif  // ATTUNE_TOOLS_BENCH_TUNERS_REMEASURE_H_
