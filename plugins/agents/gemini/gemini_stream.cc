// Copyright attune authors.
#include "gemini_stream.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "gemini_cli.h"

namespace attune::agents {
namespace {

using nlohmann::json;

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

std::string Str(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
}

long long Count(const json& stats, const char* key) {
  return stats.contains(key) && stats.at(key).is_number_integer() ? stats.at(key).get<long long>()
                                                                  : 0;
}

bool IsContinuationWarning(const std::string& message) {
  return message.rfind("Agent execution blocked", 0) == 0;
}

class StreamReader {
 public:
  void Line(const json& e) {
    std::string type = Str(e, "type");
    bool assistant_output =
        (type == "message" && Str(e, "role") == "assistant") || type == "tool_use";
    if (assistant_output && !in_turn_) {
      ++run_.turns;
      if (!run_.text.empty() && run_.text.back() != '\n') run_.text += '\n';
    }
    in_turn_ = assistant_output;
    if (type == "init") {
      run_.session_id = Str(e, "session_id");
      run_.model = Str(e, "model");
    } else if (type == "message" && Str(e, "role") == "assistant") {
      run_.text += Str(e, "content");
    } else if (type == "tool_use") {
      ++run_.tool_calls;
    } else if (type == "tool_result" && Str(e, "status") == "error") {
      ++run_.tool_errors;
    } else if (type == "error") {
      Error(e);
    } else if (type == "result") {
      Result(e);
    }
  }
  // The run read so far; `error` holds the error events and the result's error, if any.
  GeminiRun Take() {
    run_.error = std::move(errors_);
    return std::move(run_);
  }

 private:
  void Error(const json& e) {
    std::string message = Str(e, "message");
    if (IsContinuationWarning(message)) {
      ++run_.continuations;
      return;
    }
    errors_ += (errors_.empty() ? "" : "; ") + Str(e, "severity") + ": " + message;
  }
  void Result(const json& e) {
    run_.has_result = true;
    run_.status = Str(e, "status");
    if (e.contains("error")) errors_ += (errors_.empty() ? "" : "; ") + e.at("error").dump();
    if (!e.contains("stats") || !e.at("stats").is_object()) return;
    const json& s = e.at("stats");
    run_.input_tokens = Count(s, "input_tokens");
    run_.output_tokens = Count(s, "output_tokens");
    run_.cached_tokens = Count(s, "cached");
    run_.total_tokens = Count(s, "total_tokens");
  }

  GeminiRun run_;
  std::string errors_;
  bool in_turn_ = false;
};

}  // namespace

GeminiRun ParseStreamJson(const std::string& stdout_text) {
  StreamReader reader;
  std::istringstream lines(stdout_text);
  std::string line;
  while (std::getline(lines, line)) {
    json e = json::parse(line, nullptr, false);
    if (e.is_object()) reader.Line(e);
  }
  return reader.Take();
}

GeminiRun ReadRun(const support::ProcessResult& p) {
  GeminiRun r = ParseStreamJson(p.out);
  r.exit_code = p.exit_code;
  std::string events = r.error;
  r.ok = p.exit_code == 0 && r.has_result && r.status == "success" && !r.text.empty();
  if (r.ok) {
    r.error.clear();
    return r;
  }
  std::string exit =
      p.signal ? "signal " + std::to_string(p.signal)
               : "exit code " + std::to_string(p.exit_code) + ": " + ExitCodeMeaning(p.exit_code);
  std::string what = !r.has_result           ? "the CLI printed no result event"
                     : r.status != "success" ? "the CLI reported status " + r.status
                     : p.exit_code != 0      ? "the CLI failed"
                                             : "the CLI's answer has no text";
  r.error = what + " (" + exit + ")" + (events.empty() ? "" : "; events: " + Tail(events, 600)) +
            "; stderr: " + Tail(p.err, 600) + (r.has_result ? "" : "; stdout: " + Tail(p.out, 300));
  return r;
}

}  // namespace attune::agents
