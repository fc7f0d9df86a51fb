// Copyright attune authors.
//
// Reading `codex exec --json`: one JSON object per line on stdout. The events used, as Codex
// 0.171.0 prints them (checked by tests/integration/codex):
//   {"type":"thread.started","thread_id":"<uuid>"}          the session id (also on resume)
//   {"type":"turn.started"}
//   {"type":"item.started"|"item.completed","item":{"id","type",...}}
//      item types read: agent_message {text}, command_execution {command, exit_code, status},
//      error {message} (warnings such as unknown model metadata; not fatal)
//   {"type":"turn.completed","usage":{"input_tokens","cached_input_tokens",
//      "cache_write_input_tokens","output_tokens","reasoning_output_tokens"}}
//   {"type":"turn.failed","error":{"message"}}, {"type":"error","message"}
// There is no cost field. turn.completed's usage is the THREAD's running total, not the turn's: a
// resumed session reports what all its earlier turns used plus this one (checked on 0.171.0), so
// the agent subtracts what it recorded before. Lines that are not JSON (none seen) are ignored.
#ifndef ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_EVENTS_H_
#define ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_EVENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "attune/support/process.h"

namespace attune::agents {

// Token counts as Codex reports them.
struct CodexUsage {
  int64_t input = 0;
  int64_t cached_input = 0;
  int64_t output = 0;
};

// What one `codex exec` run produced.
struct CodexRun {
  bool ok = false;                  // exit 0, a turn completed, none failed, and a final message
  std::string result;               // the last agent_message text
  std::string session_id;           // thread.started's thread_id
  int turns = 0;                    // turn.completed events
  CodexUsage session_usage;         // the last turn.completed's usage: the session's total so far
  int commands = 0;                 // command_execution items completed
  std::vector<std::string> errors;  // turn.failed and error messages, in order
  std::string error;                // why not ok: exit code, the errors, stderr tail
};

// Reads the JSONL of stdout (and exit code and stderr for the error).
CodexRun ReadRun(const support::ProcessResult& process);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_CODEX_CODEX_EVENTS_H_
