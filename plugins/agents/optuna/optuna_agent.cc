// Copyright attune authors.
#include "optuna_agent.h"

#include <filesystem>
#include <map>
#include <vector>

#include "attune/support/json_schema.h"
#include "attune/support/module_path.h"
#include "attune/support/process.h"
#include "options_schema.h"
#include "optuna_space.h"

namespace attune::agents::optuna {
namespace {

constexpr const char kWho[] = "agent 'optuna'";
constexpr const char kHelperName[] = "optuna_helper.py";

// The end of a helper's stderr, for messages.
std::string Tail(const std::string& text) {
  constexpr size_t kKeep = 600;
  return text.size() <= kKeep ? text : "..." + text.substr(text.size() - kKeep);
}

Result<std::string> FindHelper(const nlohmann::json& with, const std::string& module_dir,
                               const std::string& data_dir) {
  std::vector<std::string> tried;
  if (with.contains("helper")) {
    tried.push_back(with["helper"].get<std::string>());
  } else {
    if (!module_dir.empty()) tried.push_back(module_dir + "/" + kHelperName);
    if (!data_dir.empty()) tried.push_back(data_dir + "/plugins/agents/optuna/" + kHelperName);
  }
  std::string list;
  for (const std::string& path : tried) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return std::filesystem::absolute(path).string();
    list += (list.empty() ? "" : ", ") + path;
  }
  return Status::NotFound(std::string(kWho) + ": its helper " + kHelperName + " is not at " +
                          (list.empty() ? "any known place" : list) +
                          " (reinstall attune, or set with.helper to the script's path)");
}

std::string Sampled(const nlohmann::json& params) {
  std::string text;
  for (const auto& [lever, value] : params.items()) {
    text += (text.empty() ? "" : ", ") + lever + "=" + value.get<std::string>();
  }
  return text;
}

Proposal Done(std::string why) {
  Proposal p;
  p.done = true;
  p.rationale = std::move(why);
  return p;
}

Proposal FromMove(const Move& move, const std::string& how, const nlohmann::json& meta) {
  Proposal p;
  p.changes = move.changes;
  p.lever_id = move.lever_id;
  p.rationale = "optuna " + meta["sampler"].get<std::string>() + " trial " +
                std::to_string(meta["trial_number"].get<int>()) + " sampled {" +
                Sampled(meta["params"]) + "}; " + how + ": " + move.lever_id + " [" +
                (move.summary.empty() ? DescribeChanges(move.changes) : move.summary) + "]";
  p.meta = meta;
  return p;
}

}  // namespace

Result<OptunaConfig> ParseOptunaConfig(const nlohmann::json& with_in, const std::string& module_dir,
                                       const std::string& data_dir) {
  nlohmann::json with = with_in.is_null() ? nlohmann::json::object() : with_in;
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(kOptionsSchema, with, kWho));
  OptunaConfig c;
  c.sampler = with.value("sampler", c.sampler);
  c.startup_trials = with.value("startup_trials", c.startup_trials);
  c.timeout_s = with.value("timeout_s", c.timeout_s);
  c.python = with.value("python", c.python);
  if (c.sampler == "cmaes" || c.sampler == "qmc") {
    return Status::InvalidArgument(
        std::string(kWho) + ": with.sampler: '" + c.sampler +
        "' samples numerical parameters only, and every lever here is a categorical parameter "
        "(Optuna 3.1 would silently fall back to random sampling); use tpe, random or nsga2");
  }
  if (support::FindExecutable(c.python).empty()) {
    return Status::NotFound(std::string(kWho) + ": with.python: '" + c.python +
                            "' is not an executable (install python3, or name another Python)");
  }
  ATTUNE_ASSIGN_OR_RETURN(c.helper, FindHelper(with, module_dir, data_dir));
  return c;
}

Result<nlohmann::json> OptunaAgent::RunHelper(const nlohmann::json& request) const {
  support::ProcessOptions options;
  options.timeout_s = config_.timeout_s;
  options.input = request.dump();
  options.env = {{"PYTHONHASHSEED", "0"}, {"PYTHONDONTWRITEBYTECODE", "1"}};
  options.max_output = 1 << 20;
  options.kill_leftovers = true;
  std::string where =
      std::string(kWho) + ": helper '" + config_.python + " " + config_.helper + "'";
  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult run,
                          support::RunProcess({config_.python, config_.helper}, options));
  if (run.timed_out) {
    return Status::DeadlineExceeded(where + " did not answer within " +
                                    std::to_string(static_cast<int>(config_.timeout_s)) +
                                    " s (raise with.timeout_s)");
  }
  nlohmann::json answer = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  if (answer.is_object() && answer.value("ok", false) && answer["points"].is_array()) return answer;
  if (answer.is_object() && answer.contains("error")) {
    return Status::FailedPrecondition(where + " failed (exit " + std::to_string(run.exit_code) +
                                      "): " + answer["error"].get<std::string>());
  }
  return Status::Internal(where + " crashed (exit " + std::to_string(run.exit_code) + ", signal " +
                          std::to_string(run.signal) +
                          ") without an answer; stderr: " + Tail(run.err) +
                          " (run it by hand with the request on stdin to see more)");
}

Result<Proposal> OptunaAgent::Propose(const CampaignView& view) {
  if (view.job_cost_estimate_gpu_hours > 0 &&
      view.budget_left_gpu_hours < view.job_cost_estimate_gpu_hours) {
    return Done("budget left is below one job's cost estimate");
  }
  std::vector<const Move*> open = OpenMoves(view);
  if (open.empty()) return Done("every legal move from the leader has been tried");
  SearchSpace space = BuildSearchSpace(view);
  if (space.choices.empty()) return Done("no lever offers a choice: the search space is empty");
  ATTUNE_ASSIGN_OR_RETURN(nlohmann::json answer,
                          RunHelper(RequestJson(space, config_.sampler, view.seed,
                                                config_.startup_trials, kAsksPerProposal)));
  nlohmann::json meta = {{"sampler", config_.sampler},
                         {"optuna", answer.value("optuna", "")},
                         {"trials_told", space.trials.size()}};
  try {
    return ProposeFrom(view, space, open, answer, meta);
  } catch (const nlohmann::json::exception& e) {  // a helper of another protocol; never thrown on
    return Status::Internal(std::string(kWho) + ": the helper's answer is malformed (" + e.what() +
                            "): " + Tail(answer.dump()) + " (is " + config_.helper +
                            " the helper of this plugin?)");
  }
}

Result<Proposal> OptunaAgent::ProposeFrom(const CampaignView& view, const SearchSpace& space,
                                          const std::vector<const Move*>& open,
                                          const nlohmann::json& answer, nlohmann::json meta) const {
  for (const nlohmann::json& point : answer["points"]) {
    std::map<std::string, std::string> params =
        point["params"].get<std::map<std::string, std::string>>();
    std::optional<MoveChoice> choice = ChooseMove(view, space, open, params);
    if (!choice) continue;
    meta["trial_number"] = point["number"].get<int>();
    meta["params"] = point["params"];
    meta["match"] = choice->exact ? "exact" : "nearest";
    return FromMove(*choice->move,
                    choice->exact ? "the legal move to that value" : "the nearest legal move",
                    meta);
  }
  // No sample moved a lever that still has an open move: the first open move keeps the campaign
  // going (recorded as a fallback, so a reader can tell it from the sampler's choice).
  const nlohmann::json& first = answer["points"].empty() ? nlohmann::json() : answer["points"][0];
  meta["trial_number"] = first.is_object() ? first["number"].get<int>() : -1;
  meta["params"] = first.is_object() ? first["params"] : nlohmann::json::object();
  meta["match"] = "fallback";
  return FromMove(*open.front(),
                  "no sample moved a lever with an open move, so the first open move", meta);
}

Result<std::unique_ptr<Plugin>> CreateOptunaAgent(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(
      OptunaConfig config,
      ParseOptunaConfig(context.config, support::ThisModuleDir(), context.data_dir));
  return std::unique_ptr<Plugin>(std::make_unique<OptunaAgent>(std::move(config)));
}

}  // namespace attune::agents::optuna
