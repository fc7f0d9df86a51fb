// Copyright attune authors.
#include "campaign_runs.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "yaml_json.h"

namespace attune::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json KeptSteps(const json& steps) {
  json kept = json::array();
  for (const auto& s : steps) {
    std::string uses = s.value("uses", "");
    if (uses == "benchmark" || uses == "tune") kept.push_back(s);
  }
  if (kept.empty()) {
    kept = json::array({json{{"id", "baseline"}, {"uses", "benchmark"}},
                        json{{"id", "tune"}, {"uses", "tune"}}});
  }
  return kept;
}

int RunShell(const std::string& command) {
  int rc = std::system(command.c_str());
  if (rc == -1) return -1;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

std::vector<json> ReadNdjson(const std::string& path, std::string* error) {
  std::vector<json> events;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      *error = path + ": a line is not JSON: " + line.substr(0, 80);
      continue;
    }
    events.push_back(std::move(j));
  }
  return events;
}

// Tracks the leader's noise-free throughput and when it first reached 90% of the best.
struct Trajectory {
  double charged = 0;
  std::string leader = "baseline";
  double leader_tps = 0;

  std::vector<std::pair<double, double>> steps;  // (GPU-h charged, leader throughput)

  void Observe(double tps, double best, CampaignOutcome* out) {
    leader_tps = tps;
    steps.emplace_back(charged, tps);
    if (!out->gpu_hours_to_90 && best > 0 && tps >= 0.9 * best) out->gpu_hours_to_90 = charged;
  }
};

}  // namespace

Result<std::string> WriteWorkflowVariant(const CampaignRequest& r) {
  ATTUNE_ASSIGN_OR_RETURN(json wf, LoadYamlFileAsJson(r.scenario->path));
  wf["recipe"] = r.scenario->recipe_path;
  wf["agent"] = r.agent_with.empty() ? json(r.agent) : json{{"name", r.agent}, {"with", r.agent_with}};
  wf["seed"] = r.seed;
  if (!wf.contains("budget") || !wf["budget"].is_object()) wf["budget"] = json::object();
  wf["budget"]["gpu_hours"] = r.budget_gpu_hours;
  wf["budget"]["max_candidates"] = 500;
  wf["steps"] = KeptSteps(wf.value("steps", json::array()));
  wf["name"] = wf.value("name", std::string("scenario")) + "-" + r.agent + "-s" +
               std::to_string(r.seed);
  std::error_code ec;
  fs::create_directories(r.dir, ec);
  std::string path = r.dir + "/workflow.yaml";
  YAML::Emitter emitter;
  emitter << JsonToYaml(wf);
  std::ofstream out(path);
  out << emitter.c_str() << "\n";
  if (!out) return Status::IoError(path + ": cannot write the workflow variant");
  return path;
}

CampaignOutcome ReadOutcome(const std::vector<json>& events, const Recipe& baseline,
                            const SpaceResult& space, Evaluator* evaluator, double budget_gpu_hours) {
  CampaignOutcome out;
  std::map<std::string, Recipe> recipes{{"baseline", baseline}};
  std::map<std::string, std::string> job_candidate;
  Trajectory t;
  bool baseline_seen = false;
  std::set<std::string> measured;  // candidates whose first job has finished
  for (const json& e : events) {
    std::string type = e.value("type", "");
    const json d = e.value("data", json::object());
    if (type == "ProposalRecorded" && !d.value("done", false) && d.contains("recipe")) {
      Result<Recipe> r = RecipeFromJson(d["recipe"]);
      if (r.ok()) recipes[d.value("candidate", "")] = *r;
      ++out.candidates;
    } else if (type == "GateVerdict" && !d.value("pass", true)) {
      ++out.refused;
    } else if (type == "JobRequested") {
      job_candidate[d.value("job", "")] = d.value("candidate", "");
    } else if (type == "JobFinished") {
      t.charged += d.value("charged_gpu_hours", 0.0);
      ++out.jobs;
      bool failed = d.contains("failure") && d["failure"].is_object() &&
                    d["failure"].value("kind", "none") != "none";
      std::string state = d.value("status", json::object()).value("state", "");
      if (failed || (state != "succeeded" && !state.empty())) ++out.failed_jobs;
      if (failed && !d["failure"].value("infrastructure", false)) ++out.recipe_failures;
      const std::string& candidate = job_candidate[d.value("job", "")];
      if (!candidate.empty() && candidate != "baseline" && measured.insert(candidate).second) {
        out.gpu_hours_after_candidates.push_back(t.charged);
      }
      if (!baseline_seen && candidate == "baseline") {
        baseline_seen = true;
        t.Observe(space.baseline_tps, space.best_tps, &out);
      }
    } else if (type == "LeaderChanged") {
      t.leader = d.value("to", "baseline");
      auto it = recipes.find(t.leader);
      std::optional<double> tps =
          it == recipes.end() ? std::nullopt : evaluator->TokensPerS(it->second);
      t.Observe(tps.value_or(0), space.best_tps, &out);
    }
  }
  if (!baseline_seen) t.leader_tps = space.baseline_tps;
  for (int i = 0; i < 3; ++i) {
    // The leader at that point of the budget: the last one made with no more charged.
    double at = kBudgetCheckpoints[i] * budget_gpu_hours, tps = space.baseline_tps;
    for (const auto& [charged, leader] : t.steps) {
      if (charged <= at + 1e-9 || kBudgetCheckpoints[i] >= 1.0) tps = leader;
    }
    out.speedup_at_budget[i] = space.baseline_tps > 0 ? tps / space.baseline_tps : 0;
  }
  out.gpu_hours_charged = t.charged;
  out.final_tps = t.leader_tps;
  out.final_speedup = space.baseline_tps > 0 ? t.leader_tps / space.baseline_tps : 0;
  out.fraction_of_best = space.best_tps > 0 ? t.leader_tps / space.best_tps : 0;
  out.trajectory = t.steps;
  out.final_candidate = t.leader;
  if (auto it = recipes.find(t.leader); it != recipes.end()) out.final_recipe = it->second;
  return out;
}

void RaiseBestToLeaders(SpaceResult* space, std::vector<CampaignOutcome>* outcomes) {
  space->searched_best_tps = space->best_tps;
  for (const CampaignOutcome& o : *outcomes) {
    if (o.error.empty() && o.final_tps > space->best_tps) {
      space->best_tps = o.final_tps;
      space->raised_by = o.agent;
      if (o.final_recipe) space->best_recipe = *o.final_recipe;
    }
  }
  for (CampaignOutcome& o : *outcomes) {
    o.fraction_of_best = space->best_tps > 0 ? o.final_tps / space->best_tps : 0;
    o.gpu_hours_to_90.reset();
    for (const auto& [charged, tps] : o.trajectory) {
      if (space->best_tps > 0 && tps >= 0.9 * space->best_tps) {
        o.gpu_hours_to_90 = charged;
        break;
      }
    }
  }
}

CampaignOutcome RunCampaign(const BenchOptions& o, const CampaignRequest& r,
                            const SpaceResult& space, Evaluator* evaluator) {
  CampaignOutcome failed;
  failed.workflow = fs::path(r.scenario->path).stem().string();
  failed.agent = r.agent;
  failed.seed = r.seed;
  Result<std::string> wf = WriteWorkflowVariant(r);
  if (!wf.ok()) {
    failed.error = wf.status().message();
    return failed;
  }
  std::string campaign = r.dir + "/campaign";
  std::vector<std::string> argv{"timeout", std::to_string(o.campaign_timeout_s), o.attune_bin,
                                "run", *wf, "--dir", campaign, "--json"};
  for (const std::string& p : o.plugin_paths) {
    argv.push_back("--plugin-path");
    argv.push_back(p);
  }
  std::vector<std::pair<std::string, std::string>> env{{"ATTUNE_DATA_DIR", o.data_dir}};
  int rc = RunShell(ShellCommand(env, argv) + " >" + ShellQuote(r.dir + "/run.out") + " 2>" +
                    ShellQuote(r.dir + "/run.err"));
  std::string events_path = r.dir + "/events.ndjson";
  RunShell(ShellCommand(env, {o.attune_bin, "events", campaign, "--json"}) + " >" +
           ShellQuote(events_path) + " 2>>" + ShellQuote(r.dir + "/run.err"));
  std::string error;
  std::vector<json> events = ReadNdjson(events_path, &error);
  CampaignOutcome out = ReadOutcome(events, r.scenario->recipe, space, evaluator, r.budget_gpu_hours);
  out.workflow = failed.workflow;
  out.agent = r.agent;
  out.seed = r.seed;
  out.exit_code = rc;
  out.error = error;
  if (rc != 0) {
    out.error += (out.error.empty() ? "" : "; ") + std::string("attune run exited ") +
                 std::to_string(rc) + " (see " + r.dir + "/run.err)";
  }
  if (events.empty()) out.error += "; no events read from " + campaign;
  if (out.error.empty() && !o.keep_runs) {
    std::error_code ec;
    fs::remove_all(campaign, ec);
  }
  return out;
}

}  // namespace attune::bench
