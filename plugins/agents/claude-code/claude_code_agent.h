// Copyright attune authors.
//
// The claude-code agent: each proposal is one `claude -p` run in the campaign directory (its hooks
// keep it inside the campaign's limits), whose final text must end with a JSON proposal.
//
// Per Propose:
//  1. If `max_budget_usd` is set and the cost recorded in the history's agent_meta reaches it,
//     answer done (with the reason) without calling the CLI.
//  2. Run the CLI with the prompt (attune/agentkit/prompt.h), resuming the last recorded session when the
//     history carries one. A failed run (non-zero exit, is_error, no JSON) is retried up to
//     `retries` times (a failed resume falls back to a fresh session). All runs share one
//     wall-clock limit, `timeout_s`: past it the process group is killed and Propose fails with
//     kDeadlineExceeded.
//  3. Parse and validate the answer (attune/agentkit/proposal.h). An invalid answer gets ONE follow-up in
//     the same session (--resume) carrying the error; a second invalid answer is a failure
//     (kInvalidArgument).
//  4. meta: agent, session_id, num_turns, total_cost_usd (summed over this proposal's runs), calls,
//     permission_denials, model.
#ifndef ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_CODE_AGENT_H_
#define ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_CODE_AGENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "attune/agent.h"
#include "claude_cli.h"

namespace attune::agents {

class ClaudeCodeAgent : public Agent {
 public:
  ClaudeCodeAgent(ClaudeCodeConfig config, std::function<void(LogLevel, const std::string&)> log);

  std::string Name() const override { return "claude-code"; }
  Result<Proposal> Propose(const CampaignView& view) override;
  // `attune claude-code guard|stop ARGS...`: the CLI's PreToolUse and Stop hooks (claude_hooks.h).
  std::vector<PluginCommand> Commands() const override;
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Attempt;

  // One CLI run within the deadline. kDeadlineExceeded when it ran out of time.
  Result<ClaudeRun> RunOnce(const ClaudeCall& call, const std::string& cwd,
                            Clock::time_point deadline);
  // Runs with retries; `call.resume_session` is dropped after a failed resume.
  Result<ClaudeRun> RunWithRetries(ClaudeCall call, const std::string& cwd,
                                   Clock::time_point deadline, Attempt* attempt);
  ClaudeCall NewCall(const std::string& prompt, const std::string& session,
                     std::optional<double> budget_left) const;
  void Log(LogLevel level, const std::string& message) const;
  void AdoptLauncherNamespace(const ClusterInfo& cluster);

  ClaudeCodeConfig config_;
  std::function<void(LogLevel, const std::string&)> log_;
  std::string skill_text_;  // loaded once; "" when the file is missing (logged)
};

// The plugin factory.
Result<std::unique_ptr<Plugin>> CreateClaudeCodeAgent(const PluginContext& context);

// The total of agent_meta.total_cost_usd over the view's history.
double RecordedCostUsd(const CampaignView& view);
// The session id of the most recent history entry that carries one ("" if none).
std::string LastSessionId(const CampaignView& view);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CLAUDE_CODE_CLAUDE_CODE_AGENT_H_
