// Copyright attune authors.
//
// tuner_bench: heuristic vs random vs grid vs optuna (TPE) on the simulated scenarios, at equal GPU-hour budgets
// and several seeds. Not a test: it prints a markdown table (and writes outcomes.json).
//
//   tuner_bench --attune build/bin/attune [--workflow workflows/examples/sim-x.yaml ...]
//               [--agents heuristic,random,grid,optuna] [--seeds 3] [--budget GPUH] [--depth 4]
//               [--beam 40] [--max-states 6000] [--grid-space JSON] [--out DIR] [--plugin-path DIR]
//               [--exhaustive-only] [--remeasure ROUNDS] [--remeasure-top K] [--keep-runs]
//               [--reference DIR/reference.json ...]
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "campaign_runs.h"
#include "remeasure.h"
#include "report_table.h"
#include "space_search.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace attune;
using namespace attune::bench;

namespace {

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<std::string> DefaultWorkflows(const std::string& data_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(data_dir) / "workflows/examples", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("sim-", 0) == 0 && e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Returns 0 to go on, otherwise the exit code.
int ParseOptions(int argc, char** argv, BenchOptions* o, bool* exhaustive_only) {
  po::options_description desc("tuner_bench options");
  desc.add_options()("help,h", "this help")(
      "attune", po::value<std::string>(), "the attune CLI binary (required unless --exhaustive-only)")(
      "workflow", po::value<std::vector<std::string>>(), "a sim scenario (repeatable)")(
      "agents", po::value<std::string>()->default_value("heuristic,random,grid,optuna"),
      "agents (optuna: TPE with its defaults)")(
      "seeds", po::value<int>()->default_value(3), "seeds per agent")(
      "budget", po::value<double>(), "GPU-hours per campaign (default: the workflow's)")(
      "depth", po::value<int>()->default_value(4), "reference search depth (moves)")(
      "beam", po::value<int>()->default_value(40), "reference search: recipes expanded per level")(
      "max-states", po::value<int>()->default_value(6000), "reference search: recipes at most")(
      "grid-space", po::value<std::string>(), "JSON {key: [values]} for the grid agent")(
      "out", po::value<std::string>()->default_value("/tmp/attune-tuner-bench"), "work dir")(
      "plugin-path", po::value<std::vector<std::string>>(), "plugin directory (repeatable)")(
      "data-dir", po::value<std::string>(), "root with stacks/, workflows/ (default: source)")(
      "timeout", po::value<int>()->default_value(900), "seconds per campaign")(
      "reference", po::value<std::vector<std::string>>(),
      "an earlier run's reference.json (repeatable): each scenario's best recipe there is "
      "evaluated again and climbed from, so the reference best carries over from run to run "
      "(default: DATA_DIR/tools/bench/tuners/reference.json when it exists; 'none': no file)")(
      "keep-runs",
      "keep every campaign's directory and every reference job's (by default a campaign's goes "
      "once its events are read into events.ndjson, and a reference job's once measured; what "
      "failed is always kept)")(
      "exhaustive-only", "only the exhaustive search (no campaigns)")(
      "remeasure", po::value<int>()->default_value(0),
      "after the campaigns, run the baseline, the reference's top recipes and every final leader "
      "again this many rounds each, side by side, and compare medians (for real launchers)")(
      "remeasure-top", po::value<int>()->default_value(3),
      "how many of the reference's fastest recipes --remeasure runs again (at most 10)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "tuner_bench: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 1;
  }
  *exhaustive_only = vm.count("exhaustive-only") > 0;
  if (!*exhaustive_only && !vm.count("attune")) {
    std::cerr << "tuner_bench: --attune BIN is required (the built attune CLI, e.g. "
                 "build/bin/attune)\n";
    return 2;
  }
  if (vm.count("attune")) o->attune_bin = fs::absolute(vm["attune"].as<std::string>());
  o->data_dir = vm.count("data-dir") ? vm["data-dir"].as<std::string>() : DefaultDataDir();
  o->workflows = vm.count("workflow") ? vm["workflow"].as<std::vector<std::string>>()
                                      : DefaultWorkflows(o->data_dir);
  o->agents = SplitComma(vm["agents"].as<std::string>());
  o->seeds = vm["seeds"].as<int>();
  if (vm.count("budget")) o->budget_gpu_hours = vm["budget"].as<double>();
  o->depth = vm["depth"].as<int>();
  o->max_states = vm["max-states"].as<int>();
  o->beam = vm["beam"].as<int>();
  o->out_dir = vm["out"].as<std::string>();
  o->campaign_timeout_s = vm["timeout"].as<int>();
  o->keep_runs = vm.count("keep-runs") > 0;
  o->remeasure_rounds = vm["remeasure"].as<int>();
  o->remeasure_top = vm["remeasure-top"].as<int>();
  if (o->remeasure_rounds < 0 || o->remeasure_rounds > 50 || o->remeasure_top < 1 ||
      o->remeasure_top > kTopKept) {
    std::cerr << "tuner_bench: --remeasure takes 0 to 50 rounds and --remeasure-top 1 to "
              << kTopKept << " recipes\n";
    return 2;
  }
  if (vm.count("reference")) {
    for (const std::string& file : vm["reference"].as<std::vector<std::string>>()) {
      if (file != "none") o->reference_files.push_back(file);
    }
  } else if (const fs::path known = fs::path(o->data_dir) / "tools/bench/tuners/reference.json";
             fs::exists(known)) {
    o->reference_files.push_back(known.string());  // the best recipes the project knows
  }
  if (vm.count("plugin-path")) o->plugin_paths = vm["plugin-path"].as<std::vector<std::string>>();
  if (vm.count("grid-space")) {
    o->grid_space = nlohmann::json::parse(vm["grid-space"].as<std::string>(), nullptr, false);
    if (o->grid_space.is_discarded() || !o->grid_space.is_object()) {
      std::cerr << "tuner_bench: --grid-space must be a JSON object {key: [values]}\n";
      return 2;
    }
  }
  if (o->workflows.empty()) {
    std::cerr << "tuner_bench: no scenarios: pass --workflow or add workflows/examples/sim-*.yaml"
              << " under " << o->data_dir << "\n";
    return 2;
  }
  return 0;
}

std::vector<CampaignOutcome> RunScenario(const BenchOptions& o, const ScenarioFile& scenario,
                                         const SpaceResult& space, Evaluator* evaluator) {
  std::vector<CampaignOutcome> outcomes;
  std::string stem = fs::path(scenario.path).stem().string();
  double budget = o.budget_gpu_hours.value_or(scenario.budget_gpu_hours);
  nlohmann::json grid = o.grid_space.is_object()
                            ? o.grid_space
                            : DefaultGridSpace(*evaluator, scenario.recipe);
  for (const std::string& agent : o.agents) {
    for (int seed = 1; seed <= o.seeds; ++seed) {
      CampaignRequest r;
      r.scenario = &scenario;
      r.agent = agent;
      if (agent == "grid") r.agent_with = {{"space", grid}};
      r.seed = seed;
      r.budget_gpu_hours = budget;
      r.dir = o.out_dir + "/" + stem + "/" + agent + "-s" + std::to_string(seed);
      std::error_code ec;
      fs::remove_all(r.dir, ec);
      CampaignOutcome out = RunCampaign(o, r, space, evaluator);
      std::cerr << stem << " " << agent << " seed " << seed << ": "
                << out.final_speedup << "x, " << out.gpu_hours_charged << " GPU-h"
                << (out.error.empty() ? "" : " [" + out.error + "]") << "\n";
      outcomes.push_back(out);
    }
  }
  return outcomes;
}

// reference.json: {"scenarios": {stem: {"baseline_tps", "best_tps", "best_change", "recipe"}}},
// the earlier files' entries merged, a later file's winning where both name a scenario.
Result<nlohmann::json> ReadReferences(const std::vector<std::string>& files) {
  nlohmann::json merged = nlohmann::json::object();
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) return Status::IoError("--reference " + file + ": cannot read it");
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("scenarios") || !j["scenarios"].is_object()) {
      return Status::InvalidArgument("--reference " + file +
                                     ": expected a reference.json that tuner_bench wrote ({\"scenarios\": {...}})");
    }
    for (const auto& [stem, entry] : j["scenarios"].items()) {
      if (!entry.contains("recipe") || !RecipeFromJson(entry["recipe"]).ok()) {
        return Status::InvalidArgument("--reference " + file + ": scenario " + stem +
                                       ": its recipe is missing or not a recipe");
      }
      merged[stem] = entry;
    }
  }
  return merged;
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
  bool exhaustive_only = false;
  if (int rc = ParseOptions(argc, argv, &o, &exhaustive_only); rc != 0) return rc == 1 ? 0 : rc;
  Result<nlohmann::json> references = ReadReferences(o.reference_files);
  if (!references.ok()) {
    std::cerr << "tuner_bench: " << references.status().message() << "\n";
    return 2;
  }
  PluginHost host(PluginHost::DefaultSearchPath(o.plugin_paths));
  if (Status st = host.DiscoverAll(); !st.ok()) {
    std::cerr << "tuner_bench: " << st.message() << "\n";
    return 1;
  }
  std::map<std::string, SpaceResult> spaces;
  std::vector<CampaignOutcome> outcomes;
  std::vector<std::pair<std::string, RemeasureResult>> remeasured;
  double budget_note = o.budget_gpu_hours.value_or(0);
  for (const std::string& wf : o.workflows) {
    Result<ScenarioFile> scenario = ReadScenario(wf);
    if (!scenario.ok()) {
      std::cerr << "tuner_bench: " << scenario.status().message() << "\n";
      return 1;
    }
    std::string stem = fs::path(wf).stem().string();
    auto evaluator = Evaluator::Create(&host, *scenario, o.data_dir, o.out_dir + "/" + stem + "/ref",
                                       o.keep_runs);
    if (!evaluator.ok()) {
      std::cerr << "tuner_bench: " << wf << ": " << evaluator.status().message() << "\n";
      return 1;
    }
    SpaceResult space = SearchSpace(evaluator->get(), scenario->recipe, o.depth, o.max_states, o.beam);
    space.beam_best_tps = space.best_tps;
    std::cerr << stem << ": level search best " << space.best_tps << " vs baseline "
              << space.baseline_tps << " tok/s/GPU over " << space.evaluated << " recipes ("
              << space.best_change << ")\n";
    // Past the beam's horizon: climb from the search's fastest recipes, then (below) from every
    // agent's final leader, so that "best" is not merely the best the beam saw.
    std::vector<Recipe> starts;
    for (size_t i = 0; i < space.top.size() && i < 3; ++i) starts.push_back(space.top[i].second);
    ClimbFromStarts(evaluator->get(), scenario->recipe, starts, o.max_states, &space);
    if (references->contains(stem)) {
      // Evaluated here again, not taken on trust: the simulator or the scenario may have changed.
      const double before = space.best_tps;
      ClimbFromStarts(evaluator->get(), scenario->recipe,
                      {*RecipeFromJson((*references)[stem]["recipe"])}, o.max_states, &space);
      space.carried = space.best_tps > before;
      if (space.carried) {
        std::cerr << stem << ": the recipe carried from --reference raised the best to "
                  << space.best_tps << " tok/s/GPU (" << space.best_change << ")\n";
      }
    }
    spaces[stem] = space;
    if (exhaustive_only) continue;
    auto some = RunScenario(o, *scenario, space, evaluator->get());
    starts.clear();
    for (const auto& outcome : some) {
      if (outcome.error.empty() && outcome.final_recipe) starts.push_back(*outcome.final_recipe);
    }
    ClimbFromStarts(evaluator->get(), scenario->recipe, starts, o.max_states, &space);
    if (space.climbed) {
      std::cerr << stem << ": climbing past the beam raised the best to " << space.best_tps
                << " tok/s/GPU (a climb of " << space.climb_steps << " moves; " << space.climb_evaluated
                << " neighbours evaluated; " << space.best_change << ")\n";
    }
    RaiseBestToLeaders(&space, &some);
    if (!space.raised_by.empty()) {
      std::cerr << stem << ": " << space.raised_by << "'s leader (" << space.best_tps
                << " tok/s/GPU) beat the search's best; runs are scored against it\n";
    }
    spaces[stem] = space;
    if (o.remeasure_rounds > 0) {
      std::cerr << stem << ": re-measuring side by side, " << o.remeasure_rounds << " rounds\n";
      remeasured.emplace_back(stem, Remeasure(evaluator->get(), scenario->recipe, space,
                                              o.remeasure_rounds, o.remeasure_top, &some));
    }
    outcomes.insert(outcomes.end(), some.begin(), some.end());
  }
  std::vector<AgentRow> rows = Aggregate(outcomes, spaces);
  PrintTable(spaces, rows, budget_note, std::cout);
  std::cout << "\n";
  PrintTargets(spaces, rows, std::cout);
  for (const auto& [stem, r] : remeasured) PrintRemeasure(stem, r, o.remeasure_rounds, std::cout);
  std::ofstream(o.out_dir + "/outcomes.json") << OutcomesToJson(outcomes).dump(2) << "\n";
  nlohmann::json reference = *references;
  for (const auto& [stem, space] : spaces) {
    if (!space.best_recipe) continue;
    reference[stem] = {{"baseline_tps", space.baseline_tps},
                       {"best_tps", space.best_tps},
                       {"best_change", space.best_change},
                       {"recipe", RecipeToJson(*space.best_recipe)}};
  }
  std::ofstream(o.out_dir + "/reference.json") << nlohmann::json{{"scenarios", reference}}.dump(2) << "\n";
  return 0;
}
