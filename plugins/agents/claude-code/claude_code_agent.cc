// Copyright attune authors.
#include "claude_code_agent.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include "attune/agentkit/prompt.h"
#include "attune/agentkit/proposal.h"
#include "claude_hooks.h"

namespace attune::agents {
namespace {

std::string ReadSkill(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream f(path);
  if (!f) return "";
  std::stringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  // Drop the YAML frontmatter: the CLI gets the body as instructions.
  if (text.rfind("---", 0) == 0) {
    auto end = text.find("\n---", 3);
    if (end != std::string::npos) text = text.substr(text.find('\n', end + 1) + 1);
  }
  return text;
}

std::string Money(double usd) {
  std::ostringstream s;
  s.precision(4);
  s << usd;
  return s.str();
}

// The answer when the agent's USD budget is used up: done, saying why.
Proposal BudgetSpent(double spent, double limit) {
  Proposal done;
  done.done = true;
  done.rationale = "claude-code: the agent's budget is spent ($" + Money(spent) +
                   " of max_budget_usd $" + Money(limit) + "); no more proposals";
  done.meta = {{"agent", "claude-code"}, {"budget_exhausted", true}, {"recorded_cost_usd", spent}};
  return done;
}

// The proposal in `text` when it parses and is legal for `view`; otherwise the error for the model.
Result<Proposal> UsableAnswer(const CampaignView& view, const std::string& text) {
  ATTUNE_ASSIGN_OR_RETURN(Proposal p, agentkit::ParseAnswer(text));
  ATTUNE_RETURN_IF_ERROR(agentkit::ValidateProposal(view, &p));
  return p;
}

}  // namespace

struct ClaudeCodeAgent::Attempt {
  int calls = 0;
  int num_turns = 0;
  double cost_usd = 0;
  int permission_denials = 0;
  void Add(const ClaudeRun& r) {
    ++calls;
    num_turns += r.num_turns;
    cost_usd += r.total_cost_usd;
    permission_denials += r.permission_denials;
  }
};

double RecordedCostUsd(const CampaignView& view) {
  double total = 0;
  for (const auto& c : view.history) {
    if (c.agent_meta.is_object() && c.agent_meta.contains("total_cost_usd") &&
        c.agent_meta["total_cost_usd"].is_number()) {
      total += c.agent_meta["total_cost_usd"].get<double>();
    }
  }
  return total;
}

std::string LastSessionId(const CampaignView& view) {
  for (auto it = view.history.rbegin(); it != view.history.rend(); ++it) {
    if (it->agent_meta.is_object() && it->agent_meta.contains("session_id") &&
        it->agent_meta["session_id"].is_string()) {
      return it->agent_meta["session_id"].get<std::string>();
    }
  }
  return "";
}

ClaudeCodeAgent::ClaudeCodeAgent(ClaudeCodeConfig config,
                                 std::function<void(LogLevel, const std::string&)> log)
    : config_(std::move(config)), log_(std::move(log)) {
  skill_text_ = ReadSkill(config_.skill_path);
  if (skill_text_.empty() && !config_.skill_path.empty()) {
    Log(LogLevel::kWarn, "claude-code: skill file " + config_.skill_path +
                             " is missing or empty; the agent runs without it");
  }
}

void ClaudeCodeAgent::Log(LogLevel level, const std::string& message) const {
  if (log_) log_(level, message);
}

ClaudeCall ClaudeCodeAgent::NewCall(const std::string& prompt, const std::string& session,
                                    std::optional<double> budget_left) const {
  ClaudeCall call;
  call.prompt = prompt;
  call.resume_session = session;
  call.append_system_prompt = skill_text_;
  call.max_budget_usd = budget_left;
  return call;
}

Result<ClaudeRun> ClaudeCodeAgent::RunOnce(const ClaudeCall& call, const std::string& cwd,
                                           Clock::time_point deadline) {
  double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  if (left <= 0) {
    return Status::DeadlineExceeded(
        "claude-code: no time left of timeout_s=" + std::to_string(config_.timeout_s) + " s");
  }
  support::ProcessOptions options;
  options.env = ChildEnvironment(config_);
  options.cwd = cwd;
  options.timeout_s = left;
  options.max_output = 64u << 20;  // per stream; a CLI's answer is far smaller
  options.kill_leftovers = true;   // background processes of the agent's tools end with it
  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult p,
                          support::RunProcess(BuildArgv(config_, call), options));
  if (p.timed_out) {
    return Status::DeadlineExceeded(
        "claude-code: the CLI did not answer within timeout_s=" +
        std::to_string(config_.timeout_s) +
        " s; its process group was killed (raise `timeout_s:` or check the model endpoint)");
  }
  return ReadRun(p);
}

Result<ClaudeRun> ClaudeCodeAgent::RunWithRetries(ClaudeCall call, const std::string& cwd,
                                                  Clock::time_point deadline, Attempt* attempt) {
  std::string last_error;
  for (int i = 0; i <= config_.retries; ++i) {
    ATTUNE_ASSIGN_OR_RETURN(ClaudeRun run, RunOnce(call, cwd, deadline));
    attempt->Add(run);
    if (run.ok) return run;
    last_error = run.error;
    Log(LogLevel::kWarn, "claude-code: attempt " + std::to_string(i + 1) + " failed: " + run.error);
    // The recorded session may be gone (another machine, a cleaned HOME): start afresh.
    call.resume_session.clear();
  }
  return Status::Unavailable("claude-code: " + std::to_string(config_.retries + 1) +
                             " CLI run(s) failed; last: " + last_error);
}

// Without `namespace:` of its own, the guard confines kubectl to the namespace the launcher's jobs
// run in (the KubeRay launcher's), said once. Explicit options win: a user may want the agent to
// look at another namespace, and the guard then allows exactly that one.
void ClaudeCodeAgent::AdoptLauncherNamespace(const ClusterInfo& cluster) {
  if (!config_.k8s_namespace.empty() || cluster.k8s_namespace.empty()) return;
  config_.k8s_namespace = cluster.k8s_namespace;
  Log(LogLevel::kInfo, "claude-code: the guard confines kubectl and helm to namespace '" +
                           cluster.k8s_namespace + "', the launcher's");
}

Result<Proposal> ClaudeCodeAgent::Propose(const CampaignView& view) {
  std::optional<double> budget_left;
  if (config_.max_budget_usd) {
    double spent = RecordedCostUsd(view);
    if (spent >= *config_.max_budget_usd) return BudgetSpent(spent, *config_.max_budget_usd);
    budget_left = *config_.max_budget_usd - spent;
  }
  if (config_.hooks && config_.attune_binary.empty()) {
    return Status::FailedPrecondition(
        "claude-code: the hooks need the attune binary's path "
        "(PluginContext::attune_binary is empty); run under `attune`");
  }
  AdoptLauncherNamespace(view.cluster);
  std::string cwd = view.campaign_dir.empty() ? config_.campaign_dir : view.campaign_dir;
  if (config_.campaign_dir.empty()) config_.campaign_dir = cwd;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(config_.timeout_s));
  Attempt attempt;
  std::string session = config_.resume ? LastSessionId(view) : "";
  ClaudeCall ask = NewCall(agentkit::BuildProposalPrompt(view), session, budget_left);
  ATTUNE_ASSIGN_OR_RETURN(ClaudeRun run, RunWithRetries(ask, cwd, deadline, &attempt));
  auto proposal = UsableAnswer(view, run.result);
  if (!proposal.ok()) {
    std::string first = proposal.status().message();
    Log(LogLevel::kWarn, "claude-code: invalid answer, asking once more: " + first);
    ClaudeCall retry = NewCall(agentkit::BuildRetryPrompt(first), run.session_id, budget_left);
    ATTUNE_ASSIGN_OR_RETURN(run, RunWithRetries(retry, cwd, deadline, &attempt));
    proposal = UsableAnswer(view, run.result);
    if (!proposal.ok()) {
      return Status::InvalidArgument("claude-code: the answer was invalid twice (session " +
                                     run.session_id + "); first: " + first +
                                     "; then: " + proposal.status().message());
    }
  }
  proposal->meta = {
      {"agent", "claude-code"},         {"session_id", run.session_id},
      {"num_turns", attempt.num_turns}, {"total_cost_usd", attempt.cost_usd},
      {"calls", attempt.calls},         {"permission_denials", attempt.permission_denials},
      {"model", config_.model},         {"resumed_session", !session.empty()}};
  return proposal;
}

std::vector<PluginCommand> ClaudeCodeAgent::Commands() const {
  return {{"guard", "the PreToolUse hook: judges one tool call against the campaign's guard policy"},
          {"stop", "the Stop hook: keeps the agent working while the campaign has budget left"}};
}

int ClaudeCodeAgent::RunCommand(const std::string& command, const std::vector<std::string>& args,
                                std::ostream& out, std::ostream& err) {
  if (command != "guard" && command != "stop") return Agent::RunCommand(command, args, out, err);
  return RunClaudeHook(command, args, std::cin, out, err);
}

Result<std::unique_ptr<Plugin>> CreateClaudeCodeAgent(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(ClaudeCodeConfig config, ParseConfig(context));
  return std::unique_ptr<Plugin>(new ClaudeCodeAgent(std::move(config), context.log));
}

}  // namespace attune::agents
