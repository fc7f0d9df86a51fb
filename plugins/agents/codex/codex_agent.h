// Copyright attune authors.
//
// The codex agent: each proposal is one `codex exec --json` run (or `codex exec resume <id>`) in
// the campaign's Codex work folder, under a CODEX_HOME the plugin writes (codex_cli.h); its hooks
// and sandbox keep it inside the campaign's limits, and its final message must end with a JSON
// proposal.
//
// Per Propose:
//  1. Prepare the folders, config.toml and the skill (every call: the namespace may have changed).
//  2. Run the CLI with the prompt (attune/agentkit/prompt.h), resuming the last session recorded
//     by this agent in the history (so a restarted attune resumes too). A failed run (non-zero
//     exit, turn.failed, no message) is retried up to `retries` times; a failed resume falls back
//     to a fresh session. All runs share one wall-clock limit, `timeout_s`: past it the process
//     group is killed and Propose fails with kDeadlineExceeded.
//  3. Parse and validate the answer (attune/agentkit/proposal.h). An invalid answer gets ONE
//     follow-up in the same session carrying the error; a second invalid answer is a failure
//     (kInvalidArgument) whose message keeps the raw answer.
//  4. meta: agent, session_id, turns, input_tokens, cached_input_tokens, output_tokens (used by
//     this proposal), session_input_tokens, session_cached_input_tokens, session_output_tokens
//     (the session's running totals as Codex reports them, so that the next proposal, after a
//     restart too, can tell what it used), calls, commands, model, resumed_session. Codex reports
//     no cost, so there is none.
#ifndef ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_AGENT_H_
#define ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_AGENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attune/agent.h"
#include "codex_cli.h"
#include "codex_events.h"

namespace attune::agents {

class CodexAgent : public Agent {
 public:
  CodexAgent(CodexConfig config, std::function<void(LogLevel, const std::string&)> log);

  std::string Name() const override { return "codex"; }
  Result<Proposal> Propose(const CampaignView& view) override;
  // `attune codex guard|stop ARGS...`: the CLI's PreToolUse and Stop hooks (codex_hooks.h).
  std::vector<PluginCommand> Commands() const override;
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Attempt;

  // One CLI run within the deadline. kDeadlineExceeded when it ran out of time.
  Result<CodexRun> RunOnce(const CodexCall& call, const CodexFolders& folders,
                           Clock::time_point deadline);
  // Runs with retries; `call.resume_session` is dropped after a failed run.
  Result<CodexRun> RunWithRetries(CodexCall call, const CodexFolders& folders,
                                  Clock::time_point deadline, Attempt* attempt);
  void Log(LogLevel level, const std::string& message) const;
  void AdoptLauncherNamespace(const ClusterInfo& cluster);

  CodexConfig config_;
  std::function<void(LogLevel, const std::string&)> log_;
  bool gaps_logged_ = false;  // EnforcementGaps said (first Propose)
};

// The running token totals recorded for `session` by the latest history entry of that session
// (zeros when none).
CodexUsage RecordedSessionUsage(const CampaignView& view, const std::string& session);

// The plugin factory.
Result<std::unique_ptr<Plugin>> CreateCodexAgent(const PluginContext& context);

// The session id of the most recent history entry whose meta names this agent and carries one
// ("" if none).
std::string LastCodexSession(const CampaignView& view);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_AGENT_H_
