// `tune`: one candidate at a time. For the newest candidate the step finds what is missing
// (verdict, runs, rank) and does it; when every candidate is ranked it asks the agent for the
// next one. Each answer and result is recorded before the next decision depends on it.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "campaign/events.h"
#include "gate/static_gate.h"
#include "measure/measure.h"
#include "steps/job_driver.h"
#include "steps/step_kinds.h"
#include "steps/steps.h"

namespace attune {
namespace {

using nlohmann::json;


json VerdictData(const std::string& id, const GateVerdict& v) {
  return json{{"candidate", id}, {"pass", v.pass}, {"rule_id", v.rule_id}, {"reason", v.reason},
              {"tolerance", v.loss_rel_tolerance}};
}

// The gate's verdict on `c`, from what the campaign knows about it.
GateVerdict Judge(const RunContext& ctx, const CandidateRecordState& c) {
  const CampaignState& s = ctx.state;
  CandidateGateInput in;
  in.base_id = c.base_id;
  in.base = s.RecipeOf(c.base_id);
  in.candidate = c.recipe ? &*c.recipe : nullptr;
  in.apply_error = c.apply_error;
  for (const auto& other : s.candidates) {
    if (other.id == c.id || !other.recipe) continue;
    in.earlier.push_back({other.id, RecipeId(*other.recipe), OutcomeName(other.outcome)});
  }
  return CandidateGateCheck(*ctx.stack, s.baseline, s.cluster, in);
}

// What ranking `c` rests on: its runs' median against the leader's, with the noise band.
OutcomeInput RankInput(const CampaignState& s, const CandidateRecordState& c, bool skipped) {
  OutcomeInput in;
  in.gate_pass = c.gate_pass;
  in.skipped = skipped;
  std::vector<Measurement> runs = s.MeasurementsOf(c.id);
  // A run that failed for the recipe decides; one that failed for the infrastructure only when no
  // retry measured (the retries ran out, or the budget did).
  std::optional<Failure> infrastructure;
  InfrastructureBlame blame;
  for (const auto& name : c.jobs) {
    const JobRecord* j = s.FindJob(name);
    if (!j || !j->Counts() || !j->failure) continue;
    const bool blamed = blame(*j);
    if (!blamed && !in.failure) in.failure = j->failure;
    if (blamed) infrastructure = j->failure;
  }
  if (!in.failure && runs.empty() && infrastructure) in.failure = infrastructure;
  std::optional<double> tps;
  if (!runs.empty()) {
    std::vector<double> v;
    for (const auto& m : runs) v.push_back(m.tokens_per_s_per_gpu);
    tps = Median(v);
  }
  in.candidate_tps = tps;
  auto leader = s.MeasurementOf(s.leader_id);
  if (leader) in.leader_tps = leader->tokens_per_s_per_gpu;
  // The leader's own repeats show its noise; a leader measured once borrows the baseline's.
  std::vector<Measurement> leader_runs = s.MeasurementsOf(s.leader_id);
  if (leader_runs.size() < 2) leader_runs = s.MeasurementsOf(events::kBaselineId);
  in.band = NoiseBand(s.settings.noise_band, leader_runs);
  return in;
}

Status Rank(RunContext& ctx, const CandidateRecordState& c, bool skipped) {
  const CampaignState& s = ctx.state;
  const OutcomeInput in = RankInput(s, c, skipped);
  const std::optional<double> tps = in.candidate_tps;
  auto base = s.MeasurementOf(events::kBaselineId);
  Outcome outcome = RankOutcome(in);
  json ranked{{"candidate", c.id}, {"outcome", OutcomeName(outcome)}, {"leader", s.leader_id}, {"noise_band", in.band},
              {"tokens_per_s_per_gpu", tps ? json(*tps) : json()},
              {"speedup_vs_leader", tps && in.leader_tps ? json(*tps / *in.leader_tps) : json()},
              {"speedup_vs_baseline", tps && base ? json(*tps / base->tokens_per_s_per_gpu) : json()}};
  std::vector<NewEvent> batch;
  if (outcome == Outcome::kNewLeader) {
    // Never lead with a different model: the paired-loss check decides before the leader moves.
    json paired = PairedLossData(s, c.id);
    batch.push_back(NewEvent{events::kPairedLossChecked, paired});
    if (!paired.at("pass").get<bool>()) {
      outcome = Outcome::kPairedLossMismatch;
      ranked["outcome"] = OutcomeName(outcome);
    }
  }
  batch.insert(batch.begin(), NewEvent{events::kCandidateRanked, ranked});
  if (outcome == Outcome::kNewLeader) {
    batch.push_back(NewEvent{events::kLeaderChanged,
                             json{{"from", s.leader_id}, {"to", c.id}, {"reason", "faster"}}});
  }
  return ctx.Append(std::move(batch));
}

// Advances the newest, unranked candidate by one action. Sets *stop_step when the budget ends it.
Status AdvanceCandidate(RunContext& ctx, const StepDecl& step, const CandidateRecordState& c,
                        bool* budget_out) {
  if (!c.gated) {
    GateVerdict v = Judge(ctx, c);
    std::vector<NewEvent> batch{NewEvent{events::kGateVerdict, VerdictData(c.id, v)}};
    if (!v.pass) {
      // A refusal costs no GPU time; the agent sees it in the history.
      batch.push_back(NewEvent{events::kCandidateRanked,
                               json{{"candidate", c.id}, {"outcome", OutcomeName(Outcome::kRefused)}}});
    }
    return ctx.Append(std::move(batch));
  }
  if (!c.gate_pass) {
    return ctx.Append({NewEvent{events::kCandidateRanked,
                                json{{"candidate", c.id}, {"outcome", OutcomeName(Outcome::kRefused)}}}});
  }
  int runs = 0, infrastructure_failures = 0;
  bool failed = false;
  InfrastructureBlame blame;
  for (const auto& name : c.jobs) {
    const JobRecord* j = ctx.state.FindJob(name);
    if (j && j->InFlight()) return DriveJob(ctx, name);
    if (!j || !j->Counts()) continue;
    if (blame(*j)) {
      ++infrastructure_failures;
    } else {
      ++runs;
      failed = failed || j->failure.has_value();
    }
  }
  ATTUNE_ASSIGN_OR_RETURN(const int infra_retries, StepIntOption(step, "infra_retries"));
  const int repeats = ctx.state.settings.repeats;
  // A candidate whose runs say it would lead runs again (measure.confirm) while it still would:
  // the leader is the reference every later candidate is judged against, so one lucky run must
  // not make it. Decided from the recorded runs alone, so a replay decides the same.
  bool confirming = false;
  if (!failed && infrastructure_failures <= infra_retries && runs >= repeats &&
      runs < repeats + ctx.state.settings.confirm) {
    const OutcomeInput in = RankInput(ctx.state, c, false);
    if (RankOutcome(in) == Outcome::kNewLeader) {
      confirming = true;
      ctx.Say(fmt::format("{}: {:+.1f}% against the leader {} on {} run(s); confirming it (run {} of at most {})",
                          c.id, 100 * (*in.candidate_tps / *in.leader_tps - 1), ctx.state.leader_id,
                          runs, runs + 1, repeats + ctx.state.settings.confirm));
    }
  }
  if (!confirming &&
      (failed || runs >= repeats || infrastructure_failures > infra_retries)) {
    return Rank(ctx, c, false);
  }
  if (infrastructure_failures > 0 && runs == 0) {
    ctx.Say(c.id + ": its last run failed for the infrastructure, not its recipe; running it again (" +
            std::to_string(infrastructure_failures) + " of " + std::to_string(infra_retries) + " retries)");
  }
  ATTUNE_ASSIGN_OR_RETURN(std::optional<std::string> name,
                          TryRequestJob(ctx, JobAsk{c.id, JobPurpose::kCandidate, 0, step.id}));
  if (!name) {
    *budget_out = true;
    // A candidate the budget cannot confirm is ranked on the runs it has.
    return Rank(ctx, c, !confirming);
  }
  return DriveJob(ctx, *name);
}

// Asks the agent and records its answer (or its failure) before anything acts on it.
Status AskAgent(RunContext& ctx, int max_candidates) {
  CampaignView view = BuildCampaignView(ctx, max_candidates);
  auto proposal = ctx.agent->Propose(view);
  if (!proposal.ok()) {
    return ctx.Append({NewEvent{events::kAgentFailed,
                                json{{"index", view.proposal_index}, {"error", proposal.status().ToString()}}}});
  }
  if (proposal->done) {
    return ctx.Append({NewEvent{events::kProposalRecorded,
                                json{{"done", true}, {"index", view.proposal_index},
                                     {"rationale", proposal->rationale}, {"meta", proposal->meta}}}});
  }
  // The base is the leader unless the agent named another measured candidate; a base it cannot
  // have is recorded as the reason the changes do not apply (the gate refuses it; nothing runs).
  std::string base_id = proposal->base_id.empty() ? view.leader_id : proposal->base_id;
  Recipe recipe = view.leader;
  Status applied = Status::Ok();
  if (base_id != view.leader_id) {
    std::string refusal = ParentRefusal(ctx.state, base_id);
    if (refusal.empty()) {
      recipe = *ctx.state.RecipeOf(base_id);
    } else {
      applied = Status::InvalidArgument("proposal.base: " + refusal);
    }
  }
  if (applied.ok()) applied = ApplyChanges(&recipe, proposal->changes);
  json data{{"done", false},
            {"candidate", CampaignState::CandidateId(view.proposal_index)},
            {"index", view.proposal_index},
            {"base", base_id},
            {"changes", ChangesToJson(proposal->changes)},
            {"lever_id", proposal->lever_id},
            {"rationale", proposal->rationale},
            {"meta", proposal->meta},
            {"recipe", applied.ok() ? RecipeToJson(recipe) : json()},
            {"apply_error", applied.ok() ? "" : applied.message()}};
  return ctx.Append({NewEvent{events::kProposalRecorded, data}});
}

// Candidates that ran (a refusal costs nothing and does not count) since the last new leader.
int CandidatesWithoutGain(const CampaignState& s) {
  int n = 0;
  for (auto c = s.candidates.rbegin(); c != s.candidates.rend(); ++c) {
    if (!c->ranked) continue;
    if (c->outcome == Outcome::kNewLeader) break;
    if (c->outcome == Outcome::kRefused || c->outcome == Outcome::kSkipped) continue;
    ++n;
  }
  return n;
}

// GPU-hours of the last successful job of `id` that a verify pair would repeat (its charge: the
// devices it held × how long it ran); the worst-case reservation when it has none.
double ExpectedJobCost(const RunContext& ctx, const std::string& id) {
  const CampaignState& s = ctx.state;
  double cost = 0;
  for (const JobRecord& j : s.jobs) {
    if (j.candidate == id && j.measurement && !j.failure && j.charged_gpu_hours > 0) cost = j.charged_gpu_hours;
  }
  if (cost > 0) return cost;
  const Recipe* recipe = s.RecipeOf(id);
  return recipe ? JobReservation(ctx, *recipe) : 0;
}

// What the workflow's verify steps after `tune` will need when the leader is not the baseline:
// their side-by-side pairs of the leader and the baseline at what those jobs cost, plus room for
// the last job's worst-case reservation (the ledger reserves devices × time limit while a job
// runs). Tuning leaves it unspent, so the final measurement always happens; with the baseline
// leading, verify does not run and nothing is held back.
double VerifyReserve(const RunContext& ctx, const StepDecl& tune) {
  const CampaignState& s = ctx.state;
  if (s.leader_id == events::kBaselineId) return 0;
  const auto& steps = ctx.workflow.steps;
  auto self = std::find_if(steps.begin(), steps.end(), [&](const StepDecl& d) { return d.id == tune.id; });
  if (self == steps.end()) return 0;
  int pairs = 0;
  for (auto it = self + 1; it != steps.end(); ++it) {
    if (it->uses != "verify") continue;
    Result<int> repeats = StepIntOption(*it, "repeats");
    if (repeats.ok()) pairs += std::max(0, *repeats);
  }
  if (pairs == 0) return 0;
  const double leader = ExpectedJobCost(ctx, s.leader_id);
  const double baseline = ExpectedJobCost(ctx, events::kBaselineId);
  const Recipe* recipe = s.RecipeOf(s.leader_id);
  const double worst = recipe ? JobReservation(ctx, *recipe) : leader;
  return pairs * (leader + baseline) - std::min(leader, baseline) + std::max(worst, leader);
}

// A rival of the leader (measure.rivals): a measured candidate that never led and was ranked
// against a leader (within the noise band, or slower).
bool IsRival(const CampaignState& s, const CandidateRecordState& c) {
  return c.ranked && c.id != s.leader_id &&
         (c.outcome == Outcome::kWithinNoise || c.outcome == Outcome::kSlower);
}

// measure.rivals, the part that cannot wait, decided from the recorded runs alone: a rival whose
// latest run finished after its ranking is ranked again; a rival whose median now beats the
// leader's (the leader ran again) is ranked again, which makes it the leader after the
// paired-loss check. (A re-measurement still running when the engine stopped is driven to its end
// by DriveInFlightJobs before any step runs.) Sets *acted when it did something.
Status SettleRivals(RunContext& ctx, bool* acted) {
  const CampaignState& s = ctx.state;
  if (s.settings.rivals <= 0) return Status::Ok();
  for (const CandidateRecordState& c : s.candidates) {
    if (!IsRival(s, c)) continue;
    if (s.CountedJobsOf(c) > c.ranked_on_jobs) {
      *acted = true;
      ctx.Say(c.id + ": ranked again on the median of its " +
              std::to_string(s.MeasurementsOf(c.id).size()) + " run(s)");
      return Rank(ctx, c, false);
    }
    if (RankOutcome(RankInput(s, c, false)) == Outcome::kNewLeader) {
      *acted = true;
      ctx.Say(c.id + ": its median now beats the leader " + s.leader_id + "'s by more than the band");
      return Rank(ctx, c, false);
    }
  }
  return Status::Ok();
}

// measure.rivals: when tuning would end with budget left, the leader (when it is a candidate) and
// then its closest rival (a measured candidate that never led, whose median is within the noise
// band of the leader's) run once more each, up to repeats + rivals runs, so that neither a lucky
// leader nor an unlucky rival decides the campaign. Sets *acted when it requested a job; leaves
// it false when nothing is left to re-measure or the budget (with the verify step's reserve)
// cannot pay.
Status RunClosestRival(RunContext& ctx, const StepDecl& step, bool* acted) {
  const CampaignState& s = ctx.state;
  if (s.settings.rivals <= 0) return Status::Ok();
  const int most = s.settings.repeats + s.settings.rivals;
  // The leader first; then the rival closest to it: a rival within the noise band of the leader
  // now, measured fewer than `most` times, with no failed run.
  const CandidateRecordState* closest = s.FindCandidate(s.leader_id);
  double closest_tps = 0;
  if (closest && (!closest->recipe || s.CountedJobsOf(*closest) >= most)) closest = nullptr;
  if (closest == nullptr) {
    for (const CandidateRecordState& c : s.candidates) {
      if (!IsRival(s, c) || s.CountedJobsOf(c) >= most) continue;
      const OutcomeInput in = RankInput(s, c, false);
      if (in.failure || !in.candidate_tps || RankOutcome(in) != Outcome::kWithinNoise) continue;
      if (closest == nullptr || *in.candidate_tps > closest_tps) {
        closest = &c;
        closest_tps = *in.candidate_tps;
      }
    }
  }
  if (!closest || !closest->recipe) return Status::Ok();
  const double reserve = VerifyReserve(ctx, step);
  if (!s.ledger.Fits(JobReservation(ctx, *closest->recipe) + reserve)) return Status::Ok();
  const auto leader = s.MeasurementOf(s.leader_id);
  const std::string id = closest->id;
  if (id == s.leader_id) {
    ctx.Say(fmt::format("{}: the leader, on {} run(s); measuring it again (measure.rivals)", id,
                        s.MeasurementsOf(id).size()));
  } else {
    ctx.Say(fmt::format("{}: {:+.1f}% against the leader {}, within the noise band; measuring it "
                        "again (measure.rivals)",
                        id, leader ? 100 * (closest_tps / leader->tokens_per_s_per_gpu - 1) : 0.0,
                        s.leader_id));
  }
  ATTUNE_ASSIGN_OR_RETURN(std::optional<std::string> name,
                          TryRequestJob(ctx, JobAsk{id, JobPurpose::kCandidate, 0, step.id}));
  if (!name) return Status::Ok();
  *acted = true;
  return DriveJob(ctx, *name);
}

}  // namespace

Status RunTuneStep(RunContext& ctx, const StepDecl& step) {
  const int max_candidates = step.with.value("max_candidates", ctx.state.settings.max_candidates);
  ATTUNE_ASSIGN_OR_RETURN(const int agent_retries, StepIntOption(step, "agent_retries"));
  // The user's stop rule (validated by the schema): end after this many candidates that ran
  // without making a new leader.
  int no_gain_limit = 0;
  if (step.with.contains("stop")) no_gain_limit = step.with.at("stop").value("no_gain_candidates", 0);
  while (true) {
    if (ctx.StopRequested()) return StopStatus();
    const CampaignState& s = ctx.state;
    if (!s.candidates.empty() && !s.candidates.back().ranked) {
      bool budget_out = false;
      ATTUNE_RETURN_IF_ERROR(AdvanceCandidate(ctx, step, s.candidates.back(), &budget_out));
      if (budget_out) {
        return FinishStep(ctx, step, "budget_exhausted", "the budget left did not cover the next run");
      }
      continue;
    }
    if (!s.MeasurementOf(events::kBaselineId)) return FinishStep(ctx, step, "no_baseline");
    bool acted = false;
    ATTUNE_RETURN_IF_ERROR(SettleRivals(ctx, &acted));
    if (acted) continue;
    // The agent's "done" holds for the leader it saw; a rival that took the lead since is new to it.
    const bool agent_done = s.agent_done && s.agent_done_leader_changes == s.leader_changes.size();
    const bool at_limit = static_cast<int>(s.candidates.size()) >= max_candidates;
    if (agent_done || at_limit) {
      // Budget left and nothing new to try: the leader's closest rivals run again (measure.rivals).
      ATTUNE_RETURN_IF_ERROR(RunClosestRival(ctx, step, &acted));
      if (acted) continue;
    }
    if (agent_done) return FinishStep(ctx, step, "agent_done", "the agent: " + s.agent_done_rationale);
    if (at_limit) {
      return FinishStep(ctx, step, "max_candidates",
                        std::to_string(max_candidates) + " candidates proposed, the step's limit (max_candidates)");
    }
    if (s.consecutive_agent_failures >= agent_retries) {
      return FinishStep(ctx, step, "agent_failed",
                        std::to_string(s.consecutive_agent_failures) + " unusable answers in a row (agent_retries " +
                            std::to_string(agent_retries) + ")");
    }
    if (no_gain_limit > 0 && CandidatesWithoutGain(s) >= no_gain_limit) {
      return FinishStep(ctx, step, "stop_rule",
                        "stop rule stop.no_gain_candidates = " + std::to_string(no_gain_limit) + ": the last " +
                            std::to_string(no_gain_limit) + " candidates that ran made no new leader");
    }
    const Recipe* leader = s.RecipeOf(s.leader_id);
    // Asking the agent costs time (and, for a CLI agent, money): only when a job of the leader's
    // size could still run, and the final verify would still fit after it.
    if (!leader || !CanAfford(ctx, *leader)) {
      return FinishStep(ctx, step, "budget_exhausted",
                        "the budget left does not cover another job of the leader's size");
    }
    if (const double reserve = VerifyReserve(ctx, step);
        reserve > 0 && !s.ledger.Fits(JobReservation(ctx, *leader) + reserve)) {
      char held[96];
      std::snprintf(held, sizeof held, "%.2f GPU-hours", reserve);
      return FinishStep(ctx, step, "budget_exhausted",
                        std::string("the rest of the budget is held for the verify step's side-by-side runs (") +
                            held + ")");
    }
    ATTUNE_RETURN_IF_ERROR(AskAgent(ctx, max_candidates));
  }
}

}  // namespace attune
