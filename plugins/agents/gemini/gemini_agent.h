// Copyright attune authors.
//
// The gemini agent: each proposal is one `gemini -p ... --output-format stream-json` run in the
// campaign directory, with its own HOME in the campaign's work folder (gemini_cli.h), whose
// assistant text must end with a JSON proposal.
//
// Per Propose:
//  1. Write the work folder (settings.json with the hooks, the policy, the skill).
//  2. Run the CLI with the prompt (attune/agentkit/prompt.h), resuming the last session recorded
//     in the history's agent_meta (so a restarted campaign continues it). A failed run (non-zero
//     exit, no result event, status error, no text) is retried up to `retries` times; a failed
//     resume falls back to a fresh session, at once and without spending a retry when the CLI
//     does not know the session (exit 42 before any model call). All runs share one wall-clock
//     limit, `timeout_s`: past it the process group is killed and Propose fails with
//     kDeadlineExceeded.
//  3. Parse and validate the answer (attune/agentkit/proposal.h). An invalid answer gets ONE
//     follow-up in the same session (--resume) carrying the error; a second invalid answer is a
//     failure (kInvalidArgument) whose message keeps the raw text.
//  4. meta: agent, session_id, num_turns, input_tokens, output_tokens, cached_tokens,
//     total_tokens, tool_calls, tool_errors, continuations, calls (summed over this proposal's
//     runs), model, resumed_session (whether the answering session was a resumed one). The Gemini
//     CLI reports no cost; none is recorded.
#ifndef ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_AGENT_H_
#define ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_AGENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attune/agent.h"
#include "gemini_cli.h"
#include "gemini_stream.h"

namespace attune::agents {

class GeminiAgent : public Agent {
 public:
  GeminiAgent(GeminiConfig config, std::function<void(LogLevel, const std::string&)> log);

  std::string Name() const override { return "gemini"; }
  Result<Proposal> Propose(const CampaignView& view) override;
  // `attune gemini guard|stop ARGS...`: the CLI's BeforeTool and AfterAgent hooks
  // (gemini_hooks.h).
  std::vector<PluginCommand> Commands() const override;
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Attempt;

  // One CLI run within the deadline. kDeadlineExceeded when it ran out of time.
  Result<GeminiRun> RunOnce(const GeminiCall& call, Clock::time_point deadline);
  // Runs with retries; `call.resume_session` is dropped after a failed resume.
  Result<GeminiRun> RunWithRetries(GeminiCall call, Clock::time_point deadline, Attempt* attempt);
  void Log(LogLevel level, const std::string& message) const;
  void AdoptLauncherNamespace(const ClusterInfo& cluster);
  void SayWhatIsNotEnforced();

  GeminiConfig config_;
  GeminiWorkFolder folder_;
  std::function<void(LogLevel, const std::string&)> log_;
  bool said_limits_ = false;
};

// The plugin factory.
Result<std::unique_ptr<Plugin>> CreateGeminiAgent(const PluginContext& context);

// The session id of the most recent history entry whose meta names this agent ("" if none).
std::string LastGeminiSession(const CampaignView& view);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_AGENT_H_
