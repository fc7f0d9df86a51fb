// Copyright attune authors.
#include "space_search.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "yaml_json.h"

namespace attune::bench {
namespace {

namespace fs = std::filesystem;

void ReadPluginRef(const nlohmann::json& node, std::string* name, nlohmann::json* with) {
  if (node.is_string()) {
    *name = node.get<std::string>();
  } else if (node.is_object()) {
    *name = node.value("name", "");
    if (node.contains("with") && node["with"].is_object()) *with = node["with"];
  }
}

}  // namespace

Result<ScenarioFile> ReadScenario(const std::string& workflow_path) {
  ATTUNE_ASSIGN_OR_RETURN(nlohmann::json wf, LoadYamlFileAsJson(workflow_path));
  ScenarioFile s;
  s.path = fs::absolute(workflow_path).string();
  ReadPluginRef(wf.value("stack", nlohmann::json()), &s.stack, &s.stack_with);
  ReadPluginRef(wf.value("launcher", nlohmann::json()), &s.launcher, &s.launcher_with);
  if (!wf.contains("recipe") || !wf["recipe"].is_string()) {
    return Status::InvalidArgument(workflow_path + ": recipe: expected a path to a recipe file");
  }
  fs::path recipe = wf["recipe"].get<std::string>();
  if (recipe.is_relative()) recipe = fs::path(s.path).parent_path() / recipe;
  s.recipe_path = recipe.lexically_normal().string();
  if (wf.contains("budget") && wf["budget"].is_object()) {
    s.budget_gpu_hours = wf["budget"].value("gpu_hours", 0.0);
  }
  ATTUNE_ASSIGN_OR_RETURN(s.recipe, LoadRecipeFile(s.recipe_path));
  return s;
}

Result<std::unique_ptr<Evaluator>> Evaluator::Create(PluginHost* host,
                                                     const ScenarioFile& scenario,
                                                     const std::string& data_dir,
                                                     const std::string& work_dir,
                                                     bool keep_jobs) {
  // A fresh folder, before the launcher opens it: the launcher adopts a job of the same name that
  // it finds there (as after a crash), which would hand this run an earlier run's result, or none
  // once its log was deleted.
  std::error_code ec;
  fs::remove_all(work_dir, ec);
  auto e = std::unique_ptr<Evaluator>(new Evaluator());
  PluginContext ctx;
  ctx.data_dir = data_dir;
  ctx.campaign_dir = work_dir;
  ctx.seed = 1;
  ctx.log = [](LogLevel, const std::string&) {};
  ctx.config = scenario.stack_with;
  ATTUNE_ASSIGN_OR_RETURN(e->stack_, host->CreateStack(scenario.stack, ctx));
  // On the simulated cluster the reference is the model itself: no step-time noise, no injected
  // failures. A real launcher (local) runs each recipe for real, once.
  ctx.config = scenario.launcher_with;
  if (scenario.launcher == "sim") {
    ctx.config["noise_cv"] = 0.0;
    ctx.config.erase("failures");
  }
  ATTUNE_ASSIGN_OR_RETURN(e->launcher_, host->CreateLauncher(scenario.launcher, ctx));
  e->cluster_ = e->launcher_->Cluster();
  e->work_dir_ = work_dir;
  e->keep_jobs_ = keep_jobs;
  fs::create_directories(work_dir, ec);
  return e;
}

std::optional<double> Evaluator::RunOnce(const Recipe& original, const std::string& name) {
  // As a campaign runs it: the stack's benchmark form (a production-length recipe, e.g. slime's
  // thousands of rollouts, would otherwise run into the time limit and measure nothing).
  Result<Recipe> form = stack_->BenchmarkForm(original);
  if (!form.ok()) return std::nullopt;
  const Recipe& recipe = *form;
  Result<LaunchSpec> launch = stack_->RenderLaunch(recipe);
  if (!launch.ok()) return std::nullopt;
  JobSpec spec;
  spec.name = name;
  spec.job_dir = (fs::path(work_dir_) / name).string();
  std::error_code ec;
  fs::create_directories(spec.job_dir, ec);
  spec.log_path = spec.job_dir + "/job.log";
  spec.recipe = recipe;
  spec.launch = *launch;
  spec.stack = stack_.get();
  spec.nodes = recipe.topology.nodes;
  spec.devices = recipe.topology.WorldSize();
  // Virtual time costs nothing; a real job (the local launcher) is given 15 minutes.
  spec.time_limit_s = launcher_->PollIntervalSeconds() > 0 ? 900 : 4 * 3600;
  if (Result<JobStatus> submitted = launcher_->Submit(spec); !submitted.ok()) {
    std::cerr << "tuner_bench: reference job " << name << " not submitted: "
              << submitted.status().ToString() << "\n";
    return std::nullopt;
  }
  // A launcher in virtual time finishes a job when polled; a real one (local: minigpt) is waited
  // for at its own poll interval, up to the time limit.
  Result<JobStatus> st = launcher_->Poll(name);
  const double interval = launcher_->PollIntervalSeconds();
  const int polls = interval > 0 ? static_cast<int>(spec.time_limit_s / interval) : 1000;
  for (int i = 0; i < polls && st.ok() && !IsTerminal(st->state); ++i) {
    if (interval > 0) std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    st = launcher_->Poll(name);
  }
  if (!st.ok() || st->state != JobState::kSucceeded) return std::nullopt;
  Result<std::string> log = launcher_->ReadLog(name);
  if (!log.ok()) return std::nullopt;
  Result<Measurement> m = stack_->Measure(stack_->ParseLog(*log), recipe);
  if (!m.ok() || m->tokens_per_s_per_gpu <= 0) return std::nullopt;
  if (!keep_jobs_) fs::remove_all(spec.job_dir, ec);
  return m->tokens_per_s_per_gpu;
}

bool Evaluator::real_time() const { return launcher_->PollIntervalSeconds() > 0; }

std::optional<double> Evaluator::MeasureAgain(const Recipe& recipe, const std::string& name) {
  return RunOnce(recipe, name);
}

std::optional<double> Evaluator::TokensPerS(const Recipe& recipe) {
  std::string id = RecipeId(recipe);
  auto it = cache_.find(id);
  if (it != cache_.end()) return it->second;
  std::optional<double> tps = RunOnce(recipe, "ref-" + id);
  cache_[id] = tps;
  return tps;
}

SpaceResult SearchSpace(Evaluator* evaluator, const Recipe& baseline, int depth, int max_states,
                        int beam) {
  SpaceResult r;
  std::set<std::string> seen{RecipeId(baseline)};
  std::optional<double> base = evaluator->TokensPerS(baseline);
  r.baseline_tps = base.value_or(0);
  r.best_tps = r.baseline_tps;
  r.best_recipe = baseline;
  r.evaluated = 1;
  r.feasible = base ? 1 : 0;
  r.level_best.push_back(r.baseline_tps);
  std::vector<std::pair<double, Recipe>> level{{r.baseline_tps, baseline}};
  if (base) r.top.emplace_back(*base, baseline);
  auto keep_top = [&r](double tps, const Recipe& recipe) {
    r.top.emplace_back(tps, recipe);
    std::stable_sort(r.top.begin(), r.top.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    if (static_cast<int>(r.top.size()) > kTopKept) r.top.resize(kTopKept);
  };
  for (int d = 1; d <= depth && !level.empty(); ++d) {
    std::vector<std::pair<double, Recipe>> next_level;
    r.level_best.push_back(0);
    for (const auto& [tps_from, recipe] : level) {
      for (const Move& m : evaluator->stack().LegalMoves(recipe, evaluator->cluster())) {
        Recipe next = recipe;
        if (!ApplyChanges(&next, m.changes).ok()) continue;
        if (!seen.insert(RecipeId(next)).second) continue;
        if (!evaluator->stack().CheckObjective(baseline, next).pass) continue;
        if (r.evaluated >= max_states) {
          r.truncated = true;
          return r;
        }
        ++r.evaluated;
        std::optional<double> tps = evaluator->TokensPerS(next);
        if (!tps) continue;  // a failing recipe is a dead end: moves from it are not explored
        ++r.feasible;
        keep_top(*tps, next);
        r.level_best[d] = std::max(r.level_best[d], *tps);
        if (*tps > r.best_tps) {
          r.best_tps = *tps;
          r.best_change = DescribeChanges(Diff(baseline, next));
          r.best_recipe = next;
        }
        next_level.emplace_back(*tps, next);
      }
    }
    r.depth = d;
    // Keep the `beam` fastest recipes of this level as the roots of the next one.
    std::stable_sort(next_level.begin(), next_level.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    if (static_cast<int>(next_level.size()) > beam) {
      next_level.resize(beam);
      r.beamed = true;
    }
    level = std::move(next_level);
  }
  return r;
}

void ClimbFromStarts(Evaluator* evaluator, const Recipe& baseline, const std::vector<Recipe>& starts,
                     int max_states, SpaceResult* r) {
  if (evaluator->real_time()) return;
  std::set<std::string> started;
  int evaluated = 0;
  for (const Recipe& start : starts) {
    if (!started.insert(RecipeId(start)).second) continue;
    if (!evaluator->stack().CheckObjective(baseline, start).pass) continue;
    std::optional<double> at = evaluator->TokensPerS(start);
    if (!at) continue;
    Recipe here = start;
    double tps = *at;
    int steps = 0;
    // Steepest ascent: the fastest one-move neighbour, while it is faster.
    for (;;) {
      std::optional<std::pair<double, Recipe>> best;
      for (const Move& m : evaluator->stack().LegalMoves(here, evaluator->cluster())) {
        Recipe next = here;
        if (!ApplyChanges(&next, m.changes).ok()) continue;
        if (!evaluator->stack().CheckObjective(baseline, next).pass) continue;
        if (evaluated >= max_states) {
          r->climb_truncated = true;
          break;
        }
        ++evaluated;  // the evaluator caches: a recipe seen before costs nothing, but counts
        std::optional<double> t = evaluator->TokensPerS(next);
        if (t && (!best || *t > best->first)) best.emplace(*t, std::move(next));
      }
      if (!best || best->first <= tps * (1 + 1e-9)) break;
      tps = best->first;
      here = std::move(best->second);
      ++steps;
    }
    if (tps > r->best_tps) {
      r->best_tps = tps;
      r->best_change = DescribeChanges(Diff(baseline, here));
      r->best_recipe = here;
      r->climbed = true;
      r->climb_steps = steps;
    }
    if (r->climb_truncated) break;
  }
  r->climb_evaluated += evaluated;
}

nlohmann::json DefaultGridSpace(const Evaluator& evaluator, const Recipe& baseline,
                                int max_keys) {
  std::map<std::string, std::vector<std::optional<std::string>>> values;
  std::map<std::string, int> moves_per_key;
  for (const Move& m : evaluator.stack().LegalMoves(baseline, evaluator.cluster())) {
    if (m.changes.size() != 1) continue;
    const Change& c = m.changes[0];
    auto& list = values[c.key];
    if (list.empty()) list.push_back(c.from);
    if (std::find(list.begin(), list.end(), c.to) == list.end()) list.push_back(c.to);
    ++moves_per_key[c.key];
  }
  // The classic sweep of framework grid tuners (micro-batch × parallel sizes × recompute) first,
  // then the keys with the most moves.
  static const std::vector<std::string> kPreferred = {
      "--micro-batch-size", "--tensor-model-parallel-size", "--pipeline-model-parallel-size",
      "--recompute-granularity"};
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& [key, n] : moves_per_key) {
    auto pref = std::find(kPreferred.begin(), kPreferred.end(), key);
    int rank = pref != kPreferred.end() ? static_cast<int>(pref - kPreferred.begin()) - 1000 : -n;
    ranked.emplace_back(rank, key);
  }
  std::sort(ranked.begin(), ranked.end());
  nlohmann::json space = nlohmann::json::object();
  for (int i = 0; i < std::min<int>(max_keys, static_cast<int>(ranked.size())); ++i) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : values[ranked[i].second]) list.push_back(v ? nlohmann::json(*v) : nullptr);
    space[ranked[i].second] = list;
  }
  return space;
}

}  // namespace attune::bench
