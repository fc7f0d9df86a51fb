// Copyright attune authors.
//
// The Stop hook: keeps a coding agent working while its campaign has budget left and is not done,
// without ever looping forever.
//
// How it reads the campaign: it runs `<attune> status <campaign_dir> --json` as a subprocess
// (20 s timeout) and reads, tolerantly, `done` (bool) or `state`/`phase` ("finished", "done",
// "stopped", "failed", "exhausted") and the GPU-hours left (`budget_left_gpu_hours`, or
// `budget.left_gpu_hours` / `budget.remaining_gpu_hours` / `budget.left`), and optionally
// `candidates_left`. A subprocess rather than linking the engine's CampaignStatusJson keeps the
// hooks free of the steps layer; the status command is read-only and takes no lock.
//
// Decision, in order:
//  1. the agent's last message carries an answer (a JSON object with "changes" or "done": true):
//     let it stop, the engine takes the answer from there;
//  2. the status cannot be read, or says done, or no budget / no candidates are left: let it stop;
//  3. the stop has already been blocked `cap` times in this session (counted in
//     <campaign_dir>/agent/stop_hook.json, reset when a new session or a new query starts, i.e.
//     stop_hook_active is false): let it stop;
//  4. otherwise block, with a reason that says what is left and what to do.
// Claude Code's own cap (8 consecutive blocks), --max-turns and the plugin's wall clock bound the
// loop as well.
#ifndef ATTUNE_ENGINE_HOOKS_STOP_HOOK_H_
#define ATTUNE_ENGINE_HOOKS_STOP_HOOK_H_

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace attune::hooks {

struct StopConfig {
  std::string campaign_dir;
  std::string attune_binary;  // runs `status DIR --json`; default /proc/self/exe
  int cap = 5;
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

// Runs the hook: reads the Stop input JSON from `in`, writes the answer to `out`. Returns the exit
// code (always 0: a hook failure must not block the agent forever; problems go to `err`).
int RunStopHook(const StopConfig& config, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace attune::hooks

#endif  // ATTUNE_ENGINE_HOOKS_STOP_HOOK_H_
