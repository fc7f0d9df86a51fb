// Copyright attune authors.
#include "remeasure.h"

#include <iomanip>
#include <map>

#include "attune/metrics.h"

namespace attune::bench {

RemeasureResult Remeasure(Evaluator* evaluator, const Recipe& baseline, const SpaceResult& space,
                          int rounds, int top, std::vector<CampaignOutcome>* outcomes) {
  RemeasureResult result;
  std::vector<Recipe> recipes;
  std::map<std::string, size_t> index;  // recipe id -> position in recipes / result.recipes
  auto add = [&](const Recipe& recipe, const std::string& label, bool in_reference) -> size_t {
    std::string id = RecipeId(recipe);
    auto it = index.find(id);
    if (it != index.end()) {
      RemeasuredRecipe& known = result.recipes[it->second];
      known.label += ", " + label;
      known.in_reference = known.in_reference || in_reference;
      return it->second;
    }
    index[id] = recipes.size();
    recipes.push_back(recipe);
    RemeasuredRecipe r;
    r.label = label;
    r.in_reference = in_reference;
    std::vector<Change> diff = Diff(baseline, recipe);
    r.change = diff.empty() ? "(the baseline)" : DescribeChanges(diff);
    result.recipes.push_back(r);
    return recipes.size() - 1;
  };
  const size_t base_at = add(baseline, "baseline", true);
  int kept = 0;
  for (const auto& [tps, recipe] : space.top) {
    if (kept >= top) break;
    if (RecipeId(recipe) == RecipeId(baseline)) continue;
    add(recipe, "reference #" + std::to_string(++kept), true);
  }
  std::vector<std::optional<size_t>> leader_at(outcomes->size());
  for (size_t i = 0; i < outcomes->size(); ++i) {
    const CampaignOutcome& o = (*outcomes)[i];
    if (!o.error.empty() || !o.final_recipe) continue;
    leader_at[i] = add(*o.final_recipe, o.agent + " s" + std::to_string(o.seed) + " leader " +
                                            o.final_candidate, false);
  }
  const size_t n = recipes.size();
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < n; ++k) {
      size_t at = (k + static_cast<size_t>(round)) % n;
      std::optional<double> tps = evaluator->MeasureAgain(
          recipes[at], "again-" + std::to_string(round) + "-" + std::to_string(at));
      if (tps) {
        result.recipes[at].runs.push_back(*tps);
      } else {
        ++result.recipes[at].failed;
      }
    }
  }
  for (RemeasuredRecipe& r : result.recipes) {
    r.median = Median(r.runs);
    r.cv = CoefficientOfVariation(r.runs);
    if (r.in_reference && r.median > result.best_reference_median) {
      result.best_reference_median = r.median;
      result.best_reference_label = r.label;
    }
  }
  result.baseline_median = result.recipes[base_at].median;
  for (size_t i = 0; i < outcomes->size(); ++i) {
    if (!leader_at[i]) continue;
    double median = result.recipes[*leader_at[i]].median;
    CampaignOutcome& o = (*outcomes)[i];
    if (result.best_reference_median > 0) {
      o.remeasured_fraction_of_best = median / result.best_reference_median;
    }
    if (result.baseline_median > 0) o.remeasured_speedup = median / result.baseline_median;
  }
  return result;
}

void PrintRemeasure(const std::string& scenario, const RemeasureResult& r, int rounds,
                    std::ostream& out) {
  out << "\n### " << scenario << ": side by side, " << rounds
      << " rounds (median tokens/s/GPU; every recipe once per round, rotating order)\n\n"
      << "| recipe | change from the baseline | runs | failed | median | CV | vs baseline "
         "| vs best reference |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
  out << std::fixed;
  for (const RemeasuredRecipe& x : r.recipes) {
    out << "| " << x.label << " | " << x.change << " | " << x.runs.size() << " | " << x.failed
        << " | " << std::setprecision(1) << x.median << " | " << std::setprecision(1)
        << 100 * x.cv << "% | ";
    if (r.baseline_median > 0) {
      out << std::setprecision(3) << x.median / r.baseline_median << "x";
    }
    out << " | ";
    if (r.best_reference_median > 0) {
      out << std::setprecision(1) << 100 * x.median / r.best_reference_median << "%";
    }
    out << " |\n";
  }
  out << "\nBest reference recipe on re-measurement: " << r.best_reference_label << " ("
      << std::setprecision(1) << r.best_reference_median << " tokens/s/GPU).\n";
  out.unsetf(std::ios::floatfield);
}

}  // namespace attune::bench
