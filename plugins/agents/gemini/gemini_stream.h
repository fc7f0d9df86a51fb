// Copyright attune authors.
//
// Reading `gemini -p ... --output-format stream-json` (0.61): one JSON object per line,
//   {"type":"init","session_id","model"}
//   {"type":"message","role":"user"|"assistant","content","delta"?}
//   {"type":"tool_use","tool_name","tool_id","parameters"}
//   {"type":"tool_result","tool_id","status":"success"|"error","output"?,"error"?{"type","message"}}
//   {"type":"error","severity":"warning"|"error","message"}   (an AfterAgent continuation is a
//                                                            warning "Agent execution blocked: …")
//   {"type":"result","status":"success"|"error","error"?,"stats"{total_tokens,input_tokens,
//    output_tokens,cached,input,duration_ms,tool_calls,models{}}}
// Lines that are not JSON objects (stray output) are skipped; unknown types are ignored.
#ifndef ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_STREAM_H_
#define ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_STREAM_H_

#include <string>

#include "attune/support/process.h"

namespace attune::agents {

// What one invocation produced.
struct GeminiRun {
  bool ok = false;         // exit 0, a result event with status success, and assistant text
  std::string text;        // the assistant's text, each turn's deltas joined, turns on new lines
  std::string session_id;  // from init
  std::string model;       // from init
  int turns = 0;           // model turns: runs of assistant output between other events
  int tool_calls = 0;      // tool_use events
  int tool_errors = 0;     // tool_result events with status error (guard denials among them)
  int continuations = 0;   // AfterAgent continuations (warnings "Agent execution blocked")
  long long input_tokens = 0;
  long long output_tokens = 0;
  long long cached_tokens = 0;
  long long total_tokens = 0;
  bool has_result = false;  // a result event was read
  int exit_code = -1;       // the process's (ReadRun)
  bool resumed = false;     // the run was asked to resume a session (set by the caller)
  std::string status;       // the result's status
  std::string error;        // why not ok: exit code and meaning, error events, stderr tail
};

// Parses the event lines; does not judge the exit code (ReadRun does).
GeminiRun ParseStreamJson(const std::string& stdout_text);

// ParseStreamJson plus the process's exit: fills ok and error.
GeminiRun ReadRun(const support::ProcessResult& process);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_GEMINI_GEMINI_STREAM_H_
