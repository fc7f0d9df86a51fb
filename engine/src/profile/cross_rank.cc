// Across ranks: do the clocks agree, and which rank holds the others back.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "profile/parts.h"

namespace attune::profile {
namespace {

std::string RankName(const RankProfile& p) {
  return p.rank ? "rank " + std::to_string(*p.rank) : p.file;
}

std::string Millis(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f ms", ns / 1e6);
  return buf;
}

// Step numbers with work on every measured rank.
std::set<int64_t> CommonSteps(const std::vector<const RankProfile*>& ranks) {
  std::set<int64_t> common;
  bool first = true;
  for (const RankProfile* p : ranks) {
    std::set<int64_t> mine;
    for (const StepSummary& s : p->steps) {
      if (s.activities > 0) mine.insert(s.number);
    }
    if (first) {
      common = mine;
      first = false;
      continue;
    }
    std::set<int64_t> both;
    std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(),
                          std::inserter(both, both.begin()));
    common = std::move(both);
  }
  return common;
}

// The same ProfilerStep should start at about the same time on every rank (the ranks step in
// lock-step through their collectives). Offsets beyond half a step mean the clocks disagree.
void CheckAlignment(const std::vector<const RankProfile*>& ranks, CrossRank* out) {
  std::set<int64_t> common = CommonSteps(ranks);
  if (common.empty()) {
    for (size_t i = 1; i < ranks.size(); ++i) {
      const Figures& a = ranks[0]->figures;
      const Figures& b = ranks[i]->figures;
      if (a.window_ns > 0 && b.window_ns > 0 && (b.first_ns > a.last_ns || a.first_ns > b.last_ns)) {
        out->aligned = false;
        out->notes.push_back("clock skew: the windows of " + RankName(*ranks[0]) + " and " +
                             RankName(*ranks[i]) + " do not overlap (" +
                             Millis(static_cast<double>(b.first_ns - a.first_ns)) +
                             " apart): the ranks' clocks disagree or the traces come from "
                             "different runs; per-rank figures stand, times are not compared");
        return;
      }
    }
    return;
  }
  std::vector<double> step_ns;
  int64_t worst = 0;
  std::string worst_pair;
  for (int64_t number : common) {
    std::vector<std::pair<int64_t, const RankProfile*>> starts;
    for (const RankProfile* p : ranks) {
      for (const StepSummary& s : p->steps) {
        if (s.number != number) continue;
        starts.emplace_back(s.figures.first_ns, p);
        step_ns.push_back(static_cast<double>(s.cpu_ns));
      }
    }
    auto [lo, hi] = std::minmax_element(starts.begin(), starts.end());
    if (hi->first - lo->first > worst) {
      worst = hi->first - lo->first;
      worst_pair = "ProfilerStep#" + std::to_string(number) + " on " + RankName(*lo->second) +
                   " and " + RankName(*hi->second);
    }
  }
  out->max_step_offset_ns = worst;
  double typical = Median(step_ns);
  if (static_cast<double>(worst) > 0.5 * typical) {
    out->aligned = false;
    out->notes.push_back("clock skew: " + worst_pair + " start " + Millis(static_cast<double>(worst)) +
                         " apart, more than half a step (" + Millis(typical) +
                         "): the ranks' clocks disagree; per-rank figures stand, times across "
                         "ranks are not compared");
  }
}

double MeanOver(const RankProfile& p, const std::set<int64_t>& steps, int64_t Figures::*field) {
  double total = 0;
  int n = 0;
  for (const StepSummary& s : p.steps) {
    if (!steps.count(s.number)) continue;
    total += static_cast<double>(s.figures.*field);
    ++n;
  }
  return n > 0 ? total / n : 0;
}

// The straggler is the rank with the most compute; the others spend the difference waiting
// inside collectives, so their communication time exceeds the straggler's.
std::optional<StragglerReport> FindStraggler(const std::vector<RankProfile>& all,
                                             const std::vector<const RankProfile*>& ranks) {
  if (ranks.size() < 2) return std::nullopt;
  std::set<int64_t> common = CommonSteps(ranks);
  StragglerReport s;
  s.per = common.empty() ? "trace" : "step";
  std::vector<double> compute, comm;
  for (const RankProfile* p : ranks) {
    compute.push_back(common.empty() ? static_cast<double>(p->figures.compute_ns)
                                     : MeanOver(*p, common, &Figures::compute_ns));
    comm.push_back(common.empty() ? static_cast<double>(p->figures.communication_ns)
                                  : MeanOver(*p, common, &Figures::communication_ns));
  }
  size_t worst = std::max_element(compute.begin(), compute.end()) - compute.begin();
  std::vector<double> others;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i != worst) others.push_back(compute[i]);
  }
  s.straggler_index = static_cast<int>(ranks[worst] - all.data());
  s.compute_ns = compute[worst];
  s.median_compute_ns = Median(others);
  s.imbalance = s.median_compute_ns > 0 ? (s.compute_ns - s.median_compute_ns) / s.median_compute_ns : 0;
  s.collective_wait_ns.assign(all.size(), 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    size_t index = ranks[i] - all.data();
    s.collective_wait_ns[index] = std::max(0.0, comm[i] - comm[worst]);
  }
  return s;
}

}  // namespace

CrossRank CompareRanks(const std::vector<RankProfile>& all) {
  CrossRank out;
  std::vector<const RankProfile*> measured;
  for (const RankProfile& p : all) {
    if (p.basis != Basis::kNone) measured.push_back(&p);
  }
  std::set<std::string> bases;
  std::set<int> worlds;
  for (const RankProfile* p : measured) {
    bases.insert(BasisName(p->basis));
    if (p->world_size) worlds.insert(*p->world_size);
  }
  if (worlds.size() > 1) {
    out.notes.push_back("the traces disagree on the world size (distributedInfo): they may come "
                        "from different runs");
  }
  if (bases.size() > 1) {
    out.notes.push_back("some ranks have GPU kernels and some only CPU operators: ranks are not "
                        "compared");
    return out;
  }
  if (measured.size() < 2) return out;
  CheckAlignment(measured, &out);
  out.straggler = FindStraggler(all, measured);
  return out;
}

}  // namespace attune::profile
