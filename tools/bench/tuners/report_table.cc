// Copyright attune authors.
#include "report_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace attune::bench {
namespace {

std::string F(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

const AgentRow* Find(const std::vector<AgentRow>& rows, const std::string& wf,
                     const std::string& agent) {
  for (const AgentRow& r : rows) {
    if (r.workflow == wf && r.agent == agent) return &r;
  }
  return nullptr;
}

}  // namespace

std::vector<AgentRow> Aggregate(const std::vector<CampaignOutcome>& outcomes,
                                const std::map<std::string, SpaceResult>& spaces) {
  std::map<std::pair<std::string, std::string>, std::vector<const CampaignOutcome*>> groups;
  for (const CampaignOutcome& o : outcomes) groups[{o.workflow, o.agent}].push_back(&o);
  std::vector<AgentRow> rows;
  for (const auto& [key, list] : groups) {
    AgentRow row{key.first, key.second};
    // The fewest candidates any agent needs for a leader at 90% of the best (at least one: a
    // best raised past the search by an agent's leader has no path the search saw).
    auto space = spaces.find(key.first);
    const int moves = space == spaces.end() ? -1 : space->second.MovesTo90();
    row.floor_candidates = std::max(1, moves);
    std::vector<double> to90, floors;
    int jobs = 0, failed = 0, recipe_failed = 0;
    for (const CampaignOutcome* o : list) {
      ++row.runs;
      if (!o->error.empty()) ++row.errors;
      row.mean_speedup += o->final_speedup / list.size();
      row.mean_fraction += o->fraction_of_best / list.size();
      row.mean_gpuh_spent += o->gpu_hours_charged / list.size();
      row.mean_candidates += static_cast<double>(o->candidates) / list.size();
      for (int i = 0; i < 3; ++i) row.mean_speedup_at_budget[i] += o->speedup_at_budget[i] / list.size();
      jobs += o->jobs;
      failed += o->failed_jobs;
      recipe_failed += o->recipe_failures;
      if (static_cast<int>(o->gpu_hours_after_candidates.size()) >= row.floor_candidates) {
        floors.push_back(o->gpu_hours_after_candidates[row.floor_candidates - 1]);
      }
      if (o->gpu_hours_to_90) ++row.reached;
      to90.push_back(o->gpu_hours_to_90.value_or(std::numeric_limits<double>::infinity()));
    }
    std::sort(to90.begin(), to90.end());
    double median = to90.empty() ? -1 : to90[(to90.size() - 1) / 2];
    row.median_gpuh_to_90 = std::isinf(median) ? -1 : median;
    std::sort(floors.begin(), floors.end());
    if (!floors.empty()) row.median_gpuh_floor = floors[(floors.size() - 1) / 2];
    row.failed_share = jobs > 0 ? static_cast<double>(failed) / jobs : 0;
    row.recipe_failed_share = jobs > 0 ? static_cast<double>(recipe_failed) / jobs : 0;
    rows.push_back(row);
  }
  return rows;
}

void PrintTable(const std::map<std::string, SpaceResult>& spaces,
                const std::vector<AgentRow>& rows, double budget_note, std::ostream& out) {
  out << "| scenario | reference best (depth, states) | agent | final speedup | of best | "
         "GPU-h to 90% (reached) | GPU-h spent | candidates | failed jobs (recipe-caused) |\n"
      << "|---|---|---|---|---|---|---|---|---|\n";
  for (const AgentRow& r : rows) {
    auto s = spaces.find(r.workflow);
    std::string best = "?";
    if (s != spaces.end() && s->second.baseline_tps > 0) {
      best = F("%.3fx", s->second.best_tps / s->second.baseline_tps) + " (" +
             std::to_string(s->second.depth) + ", " + std::to_string(s->second.evaluated) +
             (s->second.truncated ? ", truncated" : "") + (s->second.beamed ? ", beam" : "") +
             (s->second.climbed ? "; beam " + F("%.3fx", s->second.beam_best_tps / s->second.baseline_tps) +
                                      ", climbed " + std::to_string(s->second.climb_steps) + " moves"
                                : std::string()) +
             (s->second.carried ? ", carried from --reference" : "") +
             (s->second.raised_by.empty()
                  ? std::string()
                  : "; search " + F("%.3fx", s->second.searched_best_tps / s->second.baseline_tps) +
                        ", raised by " + s->second.raised_by) +
             ")";
    }
    out << "| " << r.workflow << " | " << best << " | " << r.agent << " | "
        << F("%.3fx", r.mean_speedup) << " | " << F("%.1f%%", 100 * r.mean_fraction) << " | "
        << (r.median_gpuh_to_90 < 0 ? std::string("—") : F("%.2f", r.median_gpuh_to_90)) << " ("
        << r.reached << "/" << r.runs << ") | " << F("%.2f", r.mean_gpuh_spent) << " | "
        << F("%.1f", r.mean_candidates) << " | " << F("%.1f%%", 100 * r.failed_share) << " ("
        << F("%.1f%%", 100 * r.recipe_failed_share) << ")"
        << (r.errors ? " (" + std::to_string(r.errors) + " runs with errors)" : "") << " |\n";
  }
  if (budget_note > 0) out << "\nBudget per campaign: " << budget_note << " GPU-hours.\n";
  out << "\nSpeedup reached after 25%, 50% and 100% of each campaign's budget (mean over seeds):\n\n"
      << "| scenario | agent | 25% | 50% | 100% |\n|---|---|---|---|---|\n";
  for (const AgentRow& r : rows) {
    out << "| " << r.workflow << " | " << r.agent << " | " << F("%.3fx", r.mean_speedup_at_budget[0])
        << " | " << F("%.3fx", r.mean_speedup_at_budget[1]) << " | "
        << F("%.3fx", r.mean_speedup_at_budget[2]) << " |\n";
  }
}

namespace {

// Issue 23's targets against the Bayesian-optimisation baseline (the optuna agent, TPE): GPU-h to
// 90% of best at most half of its, and a final speedup at least its at equal budget.
// Where the fewest candidates that can reach 90% of the best come too late for the ratio target
// (the baseline's runs, paid by every agent, and one job per move of the shortest path to 90%),
// the line says so.
std::string Floor(const AgentRow& h, const AgentRow& other, double target) {
  if (h.median_gpuh_floor <= 0 || other.median_gpuh_to_90 <= 0) return "";
  double floor = h.median_gpuh_floor / other.median_gpuh_to_90;
  if (floor <= target) return "";
  const std::string jobs = h.floor_candidates == 1
                               ? std::string("one candidate's job")
                               : "the first " + std::to_string(h.floor_candidates) +
                                     " candidates' jobs (the fewest one-lever moves to 90% of the "
                                     "best)";
  return ", out of reach: the baseline's runs and " + jobs + " already cost " +
         F("%.0f%%", floor * 100);
}

std::string VersusOptuna(const AgentRow& h, const AgentRow* tpe, bool baseline_at_90) {
  if (tpe == nullptr) return "";
  std::string cost;
  if (baseline_at_90) {
    cost = "n/a (the baseline is at 90%)";
  } else if (h.median_gpuh_to_90 < 0) {
    cost = "FAIL (heuristic never reached 90%)";
  } else if (tpe->median_gpuh_to_90 < 0) {
    cost = "PASS (optuna never reached 90% within the budget)";
  } else {
    double ratio = tpe->median_gpuh_to_90 > 0 ? h.median_gpuh_to_90 / tpe->median_gpuh_to_90 : 1.0;
    cost = std::string(ratio <= 0.5 ? "PASS" : "FAIL") + " (" + F("%.0f%%", ratio * 100) +
           " of optuna's GPU-h" + Floor(h, *tpe, 0.5) + ")";
  }
  bool speed_ok = h.mean_speedup >= tpe->mean_speedup;
  return "; GPU-h to 90% vs optuna TPE " + cost + "; speedup vs optuna TPE " +
         (speed_ok ? "PASS" : "FAIL") + " (" + F("%.3fx", h.mean_speedup) + " vs " +
         F("%.3fx", tpe->mean_speedup) + ")";
}

}  // namespace

void PrintTargets(const std::map<std::string, SpaceResult>& spaces, const std::vector<AgentRow>& rows,
                  std::ostream& out) {
  for (const AgentRow& h : rows) {
    if (h.agent != "heuristic") continue;
    const AgentRow* rnd = Find(rows, h.workflow, "random");
    bool best_ok = h.mean_fraction >= 0.95;
    bool fail_ok = h.recipe_failed_share < 0.10;
    auto space = spaces.find(h.workflow);
    // A baseline already at 90% of the best is reached by every agent with its first job: the
    // GPU-hour ratios then compare the same job with itself and say nothing of the agents.
    const bool baseline_at_90 = space != spaces.end() && space->second.best_tps > 0 &&
                                space->second.baseline_tps >= 0.9 * space->second.best_tps;
    std::string cost = "n/a (no random row)";
    if (baseline_at_90) {
      cost = "n/a (the baseline is already at " +
             F("%.1f%%", 100 * space->second.baseline_tps / space->second.best_tps) +
             " of the best: every agent reaches 90% with the baseline's job)";
    } else if (rnd) {
      if (h.median_gpuh_to_90 < 0) {
        cost = "FAIL (heuristic never reached 90%)";
      } else if (rnd->median_gpuh_to_90 < 0) {
        cost = "PASS (random never reached 90% within the budget)";
      } else {
        double ratio = rnd->median_gpuh_to_90 > 0 ? h.median_gpuh_to_90 / rnd->median_gpuh_to_90
                                                  : 1.0;
        cost = std::string(ratio <= 0.25 ? "PASS" : "FAIL") + " (" + F("%.0f%%", ratio * 100) +
               " of random's GPU-h" + Floor(h, *rnd, 0.25) + ")";
      }
    }
    out << h.workflow << ": >=95% of best " << (best_ok ? "PASS" : "FAIL") << " ("
        << F("%.1f%%", 100 * h.mean_fraction) << "); GPU-h to 90% vs random " << cost
        << VersusOptuna(h, Find(rows, h.workflow, "optuna"), baseline_at_90)
        << "; recipe-caused failed launches " << (fail_ok ? "PASS" : "FAIL") << " ("
        << F("%.1f%%", 100 * h.recipe_failed_share) << "; all failures "
        << F("%.1f%%", 100 * h.failed_share) << ")\n";
  }
}

nlohmann::json OutcomesToJson(const std::vector<CampaignOutcome>& outcomes) {
  nlohmann::json arr = nlohmann::json::array();
  for (const CampaignOutcome& o : outcomes) {
    arr.push_back({{"workflow", o.workflow},
                   {"agent", o.agent},
                   {"seed", o.seed},
                   {"exit_code", o.exit_code},
                   {"error", o.error},
                   {"final_speedup", o.final_speedup},
                   {"fraction_of_best", o.fraction_of_best},
                   {"gpu_hours_to_90", o.gpu_hours_to_90 ? nlohmann::json(*o.gpu_hours_to_90)
                                                         : nlohmann::json()},
                   {"gpu_hours_charged", o.gpu_hours_charged},
                   {"gpu_hours_after_candidates", o.gpu_hours_after_candidates},
                   {"jobs", o.jobs},
                   {"failed_jobs", o.failed_jobs},
                   {"recipe_failures", o.recipe_failures},
                   {"candidates", o.candidates},
                   {"speedup_at_budget", {{"25%", o.speedup_at_budget[0]},
                                          {"50%", o.speedup_at_budget[1]},
                                          {"100%", o.speedup_at_budget[2]}}},
                   {"refused", o.refused},
                   {"final_candidate", o.final_candidate}});
    if (o.remeasured_fraction_of_best) {
      arr.back()["remeasured_fraction_of_best"] = *o.remeasured_fraction_of_best;
    }
    if (o.remeasured_speedup) arr.back()["remeasured_speedup"] = *o.remeasured_speedup;
  }
  return arr;
}

}  // namespace attune::bench
