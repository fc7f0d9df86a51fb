// Copyright attune authors.
//
// The entry points the CLI calls to run and inspect campaigns. Implemented by the steps layer.
#ifndef ATTUNE_ENGINE_STEPS_CAMPAIGN_RUNNER_H_
#define ATTUNE_ENGINE_STEPS_CAMPAIGN_RUNNER_H_

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"
#include "workflow/workflow.h"

namespace attune {

enum class OnStop { kLeaveRunning, kCancel };

struct RunOptions {
  std::string workflow_path;        // required for a new campaign; compared on resume
  std::string amend_workflow_path;  // --amend-workflow: an explicit, recorded amendment
  std::string campaign_dir;         // created when missing
  std::string campaign_id;          // --campaign-id: a new campaign's id; must match on resume
  std::vector<std::string> plugin_paths;  // --plugin-path
  OnStop on_stop = OnStop::kLeaveRunning;
  bool json = false;                // machine-readable progress (NDJSON) instead of human text
  std::ostream* out = nullptr;      // progress/human output (required)
  std::ostream* err = nullptr;      // errors (required)
  // Set by the CLI's SIGINT/SIGTERM handler; the campaign pauses cleanly (recorded) when set.
  const std::atomic<bool>* stop_requested = nullptr;
  // Crash-suite side channel: when non-empty, each acknowledged seq is appended to this file.
  std::string ack_file;
  std::string attune_binary;        // for plugins that re-invoke attune (local launcher wrapper)
};

// Exit codes of `attune run` (docs/cli.md):
//   0 finished (all steps done), 3 paused by a signal, 1 failed (error printed),
//   2 usage / invalid workflow, 4 the campaign directory is locked or corrupt.
int RunCampaign(const RunOptions& options);


// `attune status DIR`: the folded state as JSON (read-only; no lock).
Result<nlohmann::json> CampaignStatusJson(const std::string& campaign_dir);
// Human-readable status.
void PrintCampaignStatus(const nlohmann::json& status, std::ostream& out);

}  // namespace attune

#endif  // ATTUNE_ENGINE_STEPS_CAMPAIGN_RUNNER_H_
