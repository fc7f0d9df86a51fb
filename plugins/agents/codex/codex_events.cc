// Copyright attune authors.
#include "codex_events.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace attune::agents {
namespace {

using nlohmann::json;

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>()
                                                                   : "";
}

int64_t Count(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_number_integer()
             ? j.at(key).get<int64_t>()
             : 0;
}

void ReadItem(const json& item, CodexRun* r) {
  std::string type = Str(item, "type");
  if (type == "agent_message") r->result = Str(item, "text");
  if (type == "command_execution") ++r->commands;
}

void ReadEvent(const json& e, CodexRun* r, bool* failed) {
  std::string type = Str(e, "type");
  if (type == "thread.started") {
    r->session_id = Str(e, "thread_id");
  } else if (type == "item.completed" && e.contains("item")) {
    ReadItem(e.at("item"), r);
  } else if (type == "turn.completed") {
    ++r->turns;
    const json usage = e.value("usage", json::object());
    r->session_usage = {Count(usage, "input_tokens"), Count(usage, "cached_input_tokens"),
                        Count(usage, "output_tokens")};
  } else if (type == "turn.failed") {
    *failed = true;
    r->errors.push_back(Str(e.value("error", json::object()), "message"));
  } else if (type == "error") {
    r->errors.push_back(Str(e, "message"));
  }
}

}  // namespace

CodexRun ReadRun(const support::ProcessResult& p) {
  CodexRun r;
  bool failed = false;
  int events = 0;
  std::istringstream lines(p.out);
  std::string line;
  while (std::getline(lines, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object()) continue;
    ++events;
    ReadEvent(e, &r, &failed);
  }
  r.ok = p.exit_code == 0 && r.turns > 0 && !failed && !r.result.empty();
  if (r.ok) return r;
  std::string why = events == 0    ? "the CLI printed no JSON events"
                    : failed       ? "the turn failed"
                    : r.turns == 0 ? "no turn completed"
                                   : "the turn ended without a message";
  std::string errors;
  for (const auto& m : r.errors) errors += (errors.empty() ? "" : "; ") + m;
  r.error = why + " (exit code " + std::to_string(p.exit_code) +
            (p.signal ? ", signal " + std::to_string(p.signal) : "") + ")" +
            (errors.empty() ? "" : ": " + Tail(errors, 600)) +
            (p.err.empty() ? "" : "; stderr: " + Tail(p.err, 400));
  return r;
}

}  // namespace attune::agents
