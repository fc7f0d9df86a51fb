// Copyright attune authors.
//
// Agent: proposes the next change of a campaign from a read-only view of it. Agents range from a
// built-in heuristic (instant, free) to coding-agent CLIs (minutes per answer, money per answer).
//
// The engine records every proposal as an event before acting on it, so an agent is never asked
// twice for the same proposal, and replay never calls it. An agent may keep its own state (a
// session id) but must be able to continue from the view alone after a restart (the view carries
// the metadata of its earlier proposals).
//
// The engine's gate checks every proposal; an agent cannot bypass it.
#ifndef ATTUNE_AGENT_H_
#define ATTUNE_AGENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/cluster.h"
#include "attune/metrics.h"
#include "attune/plugin.h"
#include "attune/recipe.h"
#include "attune/stack.h"
#include "attune/status.h"

namespace attune {

// How a candidate ended. The event log records it by name (OutcomeName).
enum class Outcome {
  kPending,             // "pending": proposed, not ranked yet
  kRefused,             // "refused": the gate refused it (rule_id says which rule)
  kFailed,              // "failed": its job failed (see CandidateRecord::failure)
  kSlower,              // "slower": slower than the leader beyond the noise band
  kWithinNoise,         // "within_noise": within the noise band of the leader
  kNewLeader,           // "new_leader": faster beyond the noise band; it became the leader
  kPairedLossMismatch,  // "paired_loss_mismatch": faster, but its first losses differ
  kSkipped,             // "skipped": did not fit the budget
};
const char* OutcomeName(Outcome outcome);
std::optional<Outcome> OutcomeFromName(const std::string& name);

// One candidate the campaign tried (or refused), as the agent sees it.
struct CandidateRecord {
  int index = 0;                    // 1-based proposal order
  std::string candidate_id;         // "c003"
  std::string base_id;              // the candidate (or "baseline") it changed
  std::vector<Change> changes;      // relative to base
  std::string lever_id;
  std::string rationale;
  Outcome outcome = Outcome::kPending;
  std::string rule_id;              // the gate rule when refused
  std::optional<Measurement> measurement;
  std::optional<Failure> failure;
  std::optional<double> speedup_vs_baseline;
  nlohmann::json agent_meta;        // what the agent attached to its proposal (session id, ...)
};

// A measured candidate other than the leader that a proposal may start from (Proposal::base_id).
struct ParentView {
  std::string id;                   // "baseline" or a candidate id
  Recipe recipe;
  Measurement measurement;          // median of its runs
  std::vector<Diagnosis> diagnosis;
  std::vector<Move> legal_moves;    // from this recipe, already validated and statically gated
};

struct CampaignView {
  std::string campaign_id;
  std::string campaign_dir;
  std::string stack;
  ClusterInfo cluster;
  Recipe baseline;
  std::optional<Measurement> baseline_measurement;
  Recipe leader;
  std::string leader_id;            // "baseline" or a candidate id
  std::optional<Measurement> leader_measurement;
  std::vector<Diagnosis> diagnosis; // of the leader
  std::vector<CandidateRecord> history;
  std::vector<Lever> levers;
  std::vector<Move> legal_moves;    // from the leader, already validated and statically gated
  // The fastest measured candidates besides the leader (the baseline among them), fastest first,
  // at most kMaxParents, then the kRecentParents measured last when they are not among those
  // (what an agent just measured, a saver measured alone for the change it makes room for, is
  // its natural next base however it ranks): a proposal may change one of them instead of the
  // leader.
  std::vector<ParentView> parents;
  double budget_total_gpu_hours = 0;
  double budget_left_gpu_hours = 0;
  double job_cost_estimate_gpu_hours = 0;  // what one more job is expected to cost
  double noise_band = 0.03;
  int candidates_left = 0;          // the workflow's candidate limit minus proposals so far
  std::string lessons;              // past campaigns' lessons (skill/past_tuning_projects), text
  uint64_t seed = 0;                // deterministic per proposal (campaign seed + index)
  int proposal_index = 0;           // 1-based index of the proposal being asked for
};

inline constexpr int kMaxParents = 8;
inline constexpr int kRecentParents = 2;

struct Proposal {
  bool done = false;                // nothing promising left
  // The candidate the changes apply to: empty (or view.leader_id) for the leader, otherwise the
  // id of a measured candidate (one of view.parents). The candidate is still ranked against the
  // leader; a base that is not measured makes the proposal refused (engine.changes_do_not_apply).
  std::string base_id;
  std::vector<Change> changes;      // relative to the base (view.leader unless base_id says)
  std::string lever_id;
  std::string rationale;            // shown in the report
  nlohmann::json meta = nlohmann::json::object();  // session id, turns, cost_usd, ...
};

nlohmann::json ProposalToJson(const Proposal& p);
Result<Proposal> ProposalFromJson(const nlohmann::json& j);

class Agent : public Plugin {
 public:
  // The next proposal. A non-OK Status is an agent failure (recorded; the campaign decides
  // whether to retry or stop). May take minutes; must respect its own configured timeout.
  virtual Result<Proposal> Propose(const CampaignView& view) = 0;
};

}  // namespace attune

#endif  // ATTUNE_AGENT_H_
