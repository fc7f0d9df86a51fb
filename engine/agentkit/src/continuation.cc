// Copyright attune authors.
#include "attune/agentkit/continuation.h"
#include "attune/agentkit/guard.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <system_error>

#include "attune/support/atomic_file.h"
#include "attune/support/json_text.h"
#include "attune/support/process.h"
#include "flags.h"

namespace attune::agentkit {
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
  json state{{"session_id", s.session_id}, {"blocks", s.blocks}};
  Status saved = support::WriteFileAtomically(StatePath(campaign_dir).string(), state.dump() + "\n",
                                              support::Durability::kCrashOnly);
  if (!saved.ok()) err << "attune: continuation count not saved: " << saved.message() << "\n";
}

// stdout of `attune status DIR --json`, or why not.
Result<std::string> StatusJsonText(const ContinuationConfig& config) {
  std::string binary = config.attune_binary.empty() ? "/proc/self/exe" : config.attune_binary;
  support::ProcessOptions o;
  o.timeout_s = kStatusTimeoutS;
  o.max_output = 16 << 20;  // a status answer is small; a runaway helper is cut, not buffered
  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult r,
                          support::RunProcess({binary, "status", config.campaign_dir, "--json"}, o));
  if (r.timed_out) {
    return Status::DeadlineExceeded("'attune status' took longer than " +
                                    std::to_string(static_cast<int>(kStatusTimeoutS)) + " s");
  }
  if (r.exit_code != 0) {
    return Status::Unavailable("'attune status' failed (exit status " +
                               std::to_string(r.exit_code) + ")");
  }
  return std::move(r.out);
}

CampaignProgress ReadProgress(const ContinuationConfig& config) {
  auto out = StatusJsonText(config);
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
  for (const json& j : support::JsonObjectsIn(text)) {
    if ((j.contains("changes") && j.at("changes").is_array()) || j.value("done", false) == true) {
      return true;
    }
  }
  return false;
}

ContinuationDecision DecideContinuation(const ContinuationConfig& config,
                                        const StopRequest& request, std::ostream& err) {
  if (CarriesAnswer(request.last_message)) return {false, "the last message carries an answer"};
  CampaignProgress p = ReadProgress(config);
  if (!p.readable) {
    err << "attune: cannot read the campaign status (" << p.error << "); letting the agent stop\n";
    return {false, "the campaign status is unreadable: " + p.error};
  }
  bool budget_left = p.budget_left_gpu_hours && *p.budget_left_gpu_hours > 0 &&
                     (!p.candidates_left || *p.candidates_left > 0);
  if (p.done) return {false, "the campaign is done"};
  if (!budget_left) return {false, "no budget or candidates left"};
  StopState state = LoadState(config.campaign_dir);
  if (state.session_id != request.session_id || !request.after_continuation) {
    state = StopState{request.session_id, 0};
  }
  if (state.blocks >= config.cap) {
    err << "attune: the agent was told to continue " << state.blocks << " times already (cap "
        << config.cap << "); letting it stop\n";
    return {false, "the continuation cap is reached"};
  }
  ++state.blocks;
  SaveState(config.campaign_dir, state, err);
  return {true, BlockReason(p, state.blocks, config.cap)};
}

Result<ContinuationConfig> ParseContinuationArgs(const std::vector<std::string>& args) {
  ATTUNE_ASSIGN_OR_RETURN(FlagMap flags, ParseFlags(args, {"campaign-dir", "cap", "attune"}));
  if (FlagValue(flags, "campaign-dir").empty()) {
    return Status::InvalidArgument("--campaign-dir is required");
  }
  ContinuationConfig config;
  config.campaign_dir = fs::absolute(FlagValue(flags, "campaign-dir")).string();
  config.attune_binary = FlagValue(flags, "attune");
  std::string cap = FlagValue(flags, "cap");
  if (!cap.empty()) {
    size_t used = 0;
    try {
      config.cap = std::stoi(cap, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != cap.size() || config.cap < 0) {
      return Status::InvalidArgument("--cap expects a number >= 0, got '" + cap + "'");
    }
  }
  return config;
}

std::vector<std::string> ContinuationArgs(const ContinuationConfig& config) {
  std::vector<std::string> args = {"--campaign-dir", config.campaign_dir};
  if (!config.attune_binary.empty()) args.insert(args.end(), {"--attune", config.attune_binary});
  args.insert(args.end(), {"--cap", std::to_string(config.cap)});
  return args;
}

std::optional<StopRequest> ReadStopRequest(std::istream& in, const char* message_field) {
  const nlohmann::json input = nlohmann::json::parse(in, nullptr, false);
  if (!input.is_object()) return std::nullopt;
  StopRequest request;
  request.session_id = HookString(input, "session_id");
  request.after_continuation = input.value("stop_hook_active", false) == true;
  request.last_message = HookString(input, message_field);
  return request;
}

}  // namespace attune::agentkit
