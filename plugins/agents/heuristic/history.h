// Copyright attune authors.
//
// What a campaign has already tried, read from a CampaignView alone, for the built-in agents
// (heuristic, random, grid). Agents use it so that they never propose a recipe twice and never
// repeat a change the gate refused or a job failed on.
//
// Rules (shared by every built-in agent):
//  - Every candidate's full recipe is rebuilt from the baseline by following base_id links and
//    applying its changes. The baseline, the leader and every candidate recipe count as tried,
//    whatever the outcome (a pending or skipped candidate too: proposing it again would loop; the
//    engine also refuses a repeated recipe as `engine.duplicate`, even after an infrastructure
//    failure, so retrying those is the engine's business, not the agent's).
//  - A change (key, to) is banned for the rest of the campaign when a candidate containing it was
//    refused by the gate, failed for a reason that is the recipe's fault (not infrastructure), or
//    failed the paired-loss check. Only the changes on the candidate's lever's own keys are
//    blamed (all of them when the lever is unknown): a companion change such as
//    env:CUDA_DEVICE_MAX_CONNECTIONS=1 that came along with a failed TP move stays usable. A
//    proposal of two levers together (agent_meta.levers has two entries) bans nothing: the
//    combination is judged, not its parts.
//  - A change whose job ran out of device memory is banned only in that memory context: when
//    the base it ran on had a measured peak, the change is open again from a recipe whose
//    measured peak is at least kOomRetryMargin lower (a saver freed memory since: EP 1 that did
//    not fit beside EP-sized experts may fit once ETP shards them). Callers that do not pass the
//    base's peak keep it banned. A proposal that recorded its predicted memory change
//    (agent_meta.memory) also reopens it where the same change is predicted to need at least
//    kOomRetryMargin less than it was then (recompute none after context parallelism halved the
//    activations: the base's peak barely moved, what the change adds did).
//
// Pure functions of the view; deterministic. Thread-compatible.
#ifndef ATTUNE_PLUGINS_AGENTS_HISTORY_H_
#define ATTUNE_PLUGINS_AGENTS_HISTORY_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attune/agent.h"

namespace attune::agents {

// "(absent)" for std::nullopt, the value otherwise; used to key banned changes.
std::string ValueText(const std::optional<std::string>& value);

struct TriedSet {
  std::set<std::string> recipe_ids;                          // RecipeId of every tried recipe
  std::set<std::pair<std::string, std::string>> banned;      // (key, ValueText(to))
  std::map<std::string, Recipe> recipes_by_candidate;        // "baseline" and each candidate id
  // Changes banned only for running out of device memory: (key, ValueText(to)) -> the measured
  // peak (GiB) of the base they ran out of memory on, the lowest when it happened more than once.
  std::map<std::pair<std::string, std::string>, double> oom_at_peak_gib;
  // For those made by a proposal that said its memory change (agent_meta.memory, relative to
  // its base's peak): the peak it was predicted to reach, base peak × (1 + memory), the lowest.
  std::map<std::pair<std::string, std::string>, double> oom_predicted_peak_gib;
};

// How much lower (relative) a base's measured peak must be than the one a change ran out of
// memory on before the change is tried again from it.
inline constexpr double kOomRetryMargin = 0.10;

TriedSet CollectTried(const CampaignView& view);

// The recipe `changes` produce from `base`; std::nullopt when a key is malformed.
std::optional<Recipe> Apply(const Recipe& base, const std::vector<Change>& changes);

// True when applying `changes` to `leader` gives a tried recipe, or a change is banned, or the
// changes are empty or do nothing.
// `base_peak_gib`: the measured peak memory of the recipe the changes apply to, when known.
bool AlreadyTried(const TriedSet& tried, const Recipe& leader, const std::vector<Change>& changes,
                  std::optional<double> base_peak_gib = std::nullopt);

// True when one of `changes` is banned (an out-of-memory ban: unless `base_peak_gib` is at least
// kOomRetryMargin below the peak it ran out of memory on, or `predicted_peak_gib`, what the
// memory model now expects with the change, is kOomRetryMargin below what it expected then: the
// model misjudged that recipe by as much, so the change fits if the new recipe needs that much
// less).
bool TouchesBanned(const TriedSet& tried, const std::vector<Change>& changes,
                   std::optional<double> base_peak_gib = std::nullopt,
                   std::optional<double> predicted_peak_gib = std::nullopt);

// True when `changes` from `base` give an untried recipe and touch no ban but an out-of-memory
// one: whether they may be tried again is the memory model's call (TouchesBanned's
// `predicted_peak_gib`).
bool BlockedOnlyByOutOfMemory(const TriedSet& tried, const Recipe& base, const std::vector<Change>& changes);

// The changes of `record` that a ban applies to (see the file comment).
std::vector<Change> BlamedChanges(const CampaignView& view, const CandidateRecord& record);

// A "failed" candidate whose failure the stack marked as infrastructure.
bool IsInfrastructureFailure(const CandidateRecord& record);

// The outcomes that ban their changes (see the file comment).
bool BansItsChanges(const CandidateRecord& record);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_HISTORY_H_
