// Copyright attune authors.
#include "hooks/stop_hook.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <system_error>

#include "hooks/run_capture.h"

namespace attune::hooks {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kStatusTimeoutS = 20;

std::optional<double> NumberAt(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->contains(key)) return std::nullopt;
    cur = &cur->at(key);
  }
  if (!cur->is_number()) return std::nullopt;
  return cur->get<double>();
}

std::optional<double> FirstNumber(const json& j,
                                  std::initializer_list<std::initializer_list<const char*>> paths) {
  for (auto path : paths) {
    if (auto v = NumberAt(j, path)) return v;
  }
  return std::nullopt;
}

bool StateSaysDone(const json& status) {
  for (const char* key : {"state", "phase", "status"}) {
    if (!status.contains(key) || !status.at(key).is_string()) continue;
    std::string s = status.at(key).get<std::string>();
    if (s == "finished" || s == "done" || s == "stopped" || s == "failed" || s == "exhausted" ||
        s == "completed") {
      return true;
    }
  }
  return status.value("done", false) == true || status.value("finished", false) == true;
}

// End of the JSON value that starts with '{' at `open`, or npos (strings and escapes respected).
size_t MatchingBrace(const std::string& text, size_t open) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return i;
  }
  return std::string::npos;
}

struct StopState {
  std::string session_id;
  int blocks = 0;
};

fs::path StatePath(const std::string& campaign_dir) {
  return fs::path(campaign_dir) / "agent" / "stop_hook.json";
}

StopState LoadState(const std::string& campaign_dir) {
  std::ifstream f(StatePath(campaign_dir));
  json j = json::parse(f, nullptr, false);
  StopState s;
  if (j.is_object()) {
    s.session_id = j.value("session_id", "");
    s.blocks = j.value("blocks", 0);
  }
  return s;
}

void SaveState(const std::string& campaign_dir, const StopState& s, std::ostream& err) {
  std::error_code ec;
  fs::create_directories(StatePath(campaign_dir).parent_path(), ec);
  fs::path tmp = StatePath(campaign_dir).string() + ".tmp";
  {
    std::ofstream f(tmp);
    f << json{{"session_id", s.session_id}, {"blocks", s.blocks}}.dump() << "\n";
  }
  fs::rename(tmp, StatePath(campaign_dir), ec);
  if (ec)
    err << "attune hook stop: cannot save " << StatePath(campaign_dir) << ": " << ec.message()
        << "\n";
}

CampaignProgress ReadProgress(const StopConfig& config) {
  std::string binary = config.attune_binary.empty() ? "/proc/self/exe" : config.attune_binary;
  auto out = RunCapture({binary, "status", config.campaign_dir, "--json"}, kStatusTimeoutS);
  if (!out.ok()) {
    CampaignProgress p;
    p.error = out.status().message();
    return p;
  }
  json j = json::parse(*out, nullptr, false);
  if (!j.is_object()) {
    CampaignProgress p;
    p.error = "'attune status --json' did not print a JSON object";
    return p;
  }
  return ProgressFromStatusJson(j);
}

std::string FormatHours(double h) {
  std::ostringstream s;
  s.precision(3);
  s << h;
  return s.str();
}

std::string BlockReason(const CampaignProgress& p, int block, int cap) {
  std::string left = FormatHours(*p.budget_left_gpu_hours) + " GPU-hours";
  if (p.budget_total_gpu_hours) left += " of " + FormatHours(*p.budget_total_gpu_hours);
  std::string reason = "attune: the campaign is not done and has budget left (" + left + " left";
  if (p.candidates_left) reason += ", " + std::to_string(*p.candidates_left) + " candidates left";
  reason +=
      "). Do not stop yet: inspect the campaign if needed (attune status, attune events), "
      "then end your turn with your answer as one JSON object: "
      "{\"changes\":[{\"key\":...,\"from\":...,\"to\":...}],\"lever_id\":...,\"rationale\":...} "
      "or {\"done\":true,\"rationale\":...}. (Reminder " +
      std::to_string(block) + " of at most " + std::to_string(cap) + ".)";
  return reason;
}

}  // namespace

CampaignProgress ProgressFromStatusJson(const json& status) {
  CampaignProgress p;
  p.readable = true;
  p.done = StateSaysDone(status);
  p.budget_left_gpu_hours = FirstNumber(status, {{"budget_left_gpu_hours"},
                                                 {"budget", "left_gpu_hours"},
                                                 {"budget", "remaining_gpu_hours"},
                                                 {"budget", "left"}});
  p.budget_total_gpu_hours = FirstNumber(
      status, {{"budget_total_gpu_hours"}, {"budget", "total_gpu_hours"}, {"budget", "total"}});
  if (auto c = FirstNumber(status, {{"candidates_left"}, {"budget", "candidates_left"}})) {
    p.candidates_left = static_cast<int>(*c);
  }
  return p;
}

bool CarriesAnswer(const std::string& text) {
  for (size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    size_t close = MatchingBrace(text, open);
    if (close == std::string::npos) continue;
    json j = json::parse(text.substr(open, close - open + 1), nullptr, false);
    if (!j.is_object()) continue;
    if ((j.contains("changes") && j.at("changes").is_array()) || j.value("done", false) == true) {
      return true;
    }
  }
  return false;
}

int RunStopHook(const StopConfig& config, std::istream& in, std::ostream& out, std::ostream& err) {
  json input = json::parse(in, nullptr, false);
  if (!input.is_object()) {
    err << "attune hook stop: stdin is not the Stop hook's JSON object; letting the agent stop\n";
    return 0;
  }
  if (input.contains("last_assistant_message") && input.at("last_assistant_message").is_string() &&
      CarriesAnswer(input.at("last_assistant_message").get<std::string>())) {
    return 0;
  }
  CampaignProgress p = ReadProgress(config);
  if (!p.readable) {
    err << "attune hook stop: cannot read the campaign status (" << p.error
        << "); letting the agent stop\n";
    return 0;
  }
  bool budget_left = p.budget_left_gpu_hours && *p.budget_left_gpu_hours > 0 &&
                     (!p.candidates_left || *p.candidates_left > 0);
  if (p.done || !budget_left) return 0;
  StopState state = LoadState(config.campaign_dir);
  std::string session = input.value("session_id", "");
  if (state.session_id != session || !input.value("stop_hook_active", false)) {
    state = StopState{session, 0};
  }
  if (state.blocks >= config.cap) {
    err << "attune hook stop: blocked " << state.blocks << " times already (cap " << config.cap
        << "); letting the agent stop\n";
    return 0;
  }
  ++state.blocks;
  SaveState(config.campaign_dir, state, err);
  out << json{{"decision", "block"}, {"reason", BlockReason(p, state.blocks, config.cap)}}.dump()
      << "\n";
  return 0;
}

}  // namespace attune::hooks
