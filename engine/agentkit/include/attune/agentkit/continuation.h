// Copyright attune authors.
//
// The continuation rule: keeps a coding agent working while its campaign has budget left and is not
// done, without ever looping forever. Every agent plugin maps it onto its CLI's "the agent wants to
// stop" hook (a Stop hook, an after-agent hook) and translates the decision into that CLI's answer.
//
// How it reads the campaign: it runs `<attune> status <campaign_dir> --json` as a subprocess
// (20 s timeout) and reads, tolerantly, `done` (bool) or `state`/`phase` ("finished", "done",
// "stopped", "failed", "exhausted") and the GPU-hours left (`budget_left_gpu_hours`, or
// `budget.left_gpu_hours` / `budget.remaining_gpu_hours` / `budget.left`), and optionally
// `candidates_left`. A subprocess rather than linking the engine's status code keeps agent plugins
// free of the engine; the status command is read-only and takes no lock.
//
// Decision, in order:
//  1. the agent's last message carries an answer (a JSON object with "changes" or "done": true):
//     let it stop, the engine takes the answer from there;
//  2. the status cannot be read, or says done, or no budget / no candidates are left: let it stop;
//  3. the agent has already been told to continue `cap` times in this session (counted in
//     <campaign_dir>/agent/stop_hook.json, reset when a new session starts or when the CLI says
//     this stop was not itself caused by a continuation): let it stop;
//  4. otherwise continue, with a reason that says what is left and what to do.
// The CLI's own limits (turns, consecutive continuations) and the plugin's wall clock bound the
// loop as well.
//
// Thread-safety: one decision at a time per campaign (the CLI runs its hooks sequentially).
#ifndef ATTUNE_AGENTKIT_CONTINUATION_H_
#define ATTUNE_AGENTKIT_CONTINUATION_H_

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::agentkit {

struct ContinuationConfig {
  std::string campaign_dir;
  std::string attune_binary;  // runs `status DIR --json`; default /proc/self/exe
  int cap = 5;
};

// What the CLI's hook input says about this stop.
struct StopRequest {
  std::string session_id;
  bool after_continuation = false;  // this stop follows one of our continuations
  std::string last_message;         // the agent's last text ("" when the CLI does not give it)
};

// A stop hook's question read from stdin: `session_id` and `stop_hook_active` as all three CLIs
// name them, the agent's last text from `message_field` (Claude Code and Codex:
// last_assistant_message; the Gemini CLI's AfterAgent: prompt_response). nullopt when `in` is not
// a JSON object.
std::optional<StopRequest> ReadStopRequest(std::istream& in, const char* message_field);

struct ContinuationDecision {
  bool keep_working = false;
  std::string reason;  // for the model when keep_working; why it may stop otherwise (for logs)
};

struct CampaignProgress {
  bool readable = false;
  bool done = false;
  std::optional<double> budget_left_gpu_hours;
  std::optional<double> budget_total_gpu_hours;
  std::optional<int> candidates_left;
  std::string error;  // why it is not readable
};

// Reads the fields above from a status JSON (see the header comment for the names accepted).
CampaignProgress ProgressFromStatusJson(const nlohmann::json& status);

// True when `text` holds a JSON object with a "changes" array or "done": true.
bool CarriesAnswer(const std::string& text);

// The decision for one stop (see the header comment). Problems that let the agent stop (status
// unreadable, state file unwritable) are written to `err`.
ContinuationDecision DecideContinuation(const ContinuationConfig& config,
                                        const StopRequest& request, std::ostream& err);

// The hook command's flags, the same for every agent plugin:
//   --campaign-dir D (required) [--cap N] [--attune PATH]
Result<ContinuationConfig> ParseContinuationArgs(const std::vector<std::string>& args);
std::vector<std::string> ContinuationArgs(const ContinuationConfig& config);

}  // namespace attune::agentkit

#endif  // ATTUNE_AGENTKIT_CONTINUATION_H_
