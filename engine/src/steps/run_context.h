// Copyright attune authors.
//
// RunContext: what the built-in steps share while a campaign runs: the open log, the folded
// state (kept in step with the log by Append), the workflow and the plugin objects.
//
// The one rule every step follows: read the state, decide, and record the decision (or the
// non-deterministic result it is about to depend on) with Append before acting on it. A step may
// then be interrupted anywhere and re-run from the state alone.
//
// Not thread-safe; one engine thread owns it.
#ifndef ATTUNE_ENGINE_STEPS_RUN_CONTEXT_H_
#define ATTUNE_ENGINE_STEPS_RUN_CONTEXT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/agent.h"
#include "attune/launcher.h"
#include "attune/stack.h"
#include "campaign/campaign_state.h"
#include "log/event_log.h"
#include "steps/campaign_runner.h"
#include "workflow/workflow.h"

namespace attune {

struct RunContext {
  const RunOptions* options = nullptr;
  std::unique_ptr<EventLog> log;
  CampaignState state;
  Workflow workflow;
  std::unique_ptr<Stack> stack;
  std::unique_ptr<Launcher> launcher;
  std::unique_ptr<Agent> agent;
  std::string data_dir;
  // FindUnlocks' answers for the leader's legal moves, by the leader recipe's JSON: the stack's
  // answers are deterministic, and the leader stays the same for many proposals while finding the
  // unlocks asks the stack for the legal moves after each move. Never recorded (replay asks the
  // agent nothing); a handful of entries, cleared when it grows.
  mutable std::map<std::string, std::vector<std::vector<Move>>> unlocks_by_leader;

  // Appends the events in one synced batch, folds them into `state` and prints progress.
  Status Append(std::vector<NewEvent> events);
  // True once the CLI asked the campaign to stop.
  bool StopRequested() const;
  // Sleeps up to `seconds` in short slices, returning early when a stop is requested.
  void SleepUnlessStopped(double seconds) const;
  // A human progress line (suppressed in --json mode, where events are the progress).
  void Say(const std::string& line) const;
};

// The status steps return when they stop because a stop was requested (the runner then records
// CampaignPaused and exits 3).
Status StopStatus();
bool IsStop(const Status& s);

// A one-line human summary of an event, for progress output.
std::string SummarizeEvent(const std::string& type, const nlohmann::json& data);

}  // namespace attune

#endif  // ATTUNE_ENGINE_STEPS_RUN_CONTEXT_H_
