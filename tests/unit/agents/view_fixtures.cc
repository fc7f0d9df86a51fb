// Copyright attune authors.
#include "view_fixtures.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>

namespace attune::testing {
namespace {

void AddMove(std::vector<Move>* moves, const Recipe& r, const std::string& lever,
             const std::string& key, const std::optional<std::string>& to) {
  std::optional<std::string> from = GetValue(r, key);
  if (from == to) return;
  moves->push_back({lever, {{key, from, to}}, "", {}, {}});
}

}  // namespace

Recipe BaseRecipe() {
  Recipe r;
  r.stack = "megatron";
  r.entry = {"python3", "pretrain_gpt.py"};
  r.args = {{"--micro-batch-size", {"1"}},
            {"--global-batch-size", {"64"}},
            {"--recompute-granularity", {"selective"}},
            {"--bf16", {}}};
  r.topology = {1, 8, "H100"};
  return r;
}

std::vector<Lever> Catalog() {
  return {
      {"micro_batch_size", "", {"--micro-batch-size"}, {"memory_headroom", "launch_overhead"},
       0.08, 0.35, false},
      {"recompute", "", {"--recompute-granularity"}, {"memory_pressure", "oom"}, -0.15, -0.35,
       false, {{"--recompute-granularity", {"", "selective", "full"}}}},
      {"distributed_optimizer", "", {"--use-distributed-optimizer"},
       {"memory_pressure", "oom"}, 0.01, -0.25, false},
      {"overlap_grad_reduce", "", {"--overlap-grad-reduce"}, {"communication"}, 0.05, 0, false},
      {"attention_backend", "", {"--attention-backend"}, {"compute_bound"}, 0.04, 0, false},
  };
}

std::vector<Move> FakeMoves(const Recipe& r) {
  std::vector<Move> moves;
  for (const char* mbs : {"1", "2", "4", "8"}) {
    AddMove(&moves, r, "micro_batch_size", "--micro-batch-size", mbs);
  }
  AddMove(&moves, r, "recompute", "--recompute-granularity", std::nullopt);
  AddMove(&moves, r, "recompute", "--recompute-granularity", "selective");
  AddMove(&moves, r, "recompute", "--recompute-granularity", "full");
  AddMove(&moves, r, "distributed_optimizer", "--use-distributed-optimizer", "");
  AddMove(&moves, r, "distributed_optimizer", "--use-distributed-optimizer", std::nullopt);
  AddMove(&moves, r, "attention_backend", "--attention-backend", "flash");
  AddMove(&moves, r, "attention_backend", "--attention-backend", std::nullopt);
  return moves;
}

CampaignView MakeView(std::optional<double> peak_gib) {
  CampaignView v;
  v.campaign_id = "test";
  v.stack = "megatron";
  v.cluster.device_type = "H100";
  v.cluster.device_memory_gib = 80;
  v.cluster.devices_per_node = 8;
  v.baseline = BaseRecipe();
  v.leader = v.baseline;
  v.leader_id = "baseline";
  Measurement m;
  m.step_time_s = 1.0;
  m.peak_memory_gib = peak_gib;
  m.tokens_per_s_per_gpu = 1000;
  v.baseline_measurement = m;
  v.leader_measurement = m;
  v.levers = Catalog();
  v.legal_moves = FakeMoves(v.leader);
  v.budget_total_gpu_hours = 100;
  v.budget_left_gpu_hours = 100;
  v.job_cost_estimate_gpu_hours = 1;
  v.noise_band = 0.03;
  v.seed = 42;
  v.proposal_index = 1;
  return v;
}

void Record(CampaignView* view, const Proposal& proposal, const std::string& outcome,
            std::optional<FailureKind> failure, std::optional<double> speedup) {
  CandidateRecord r;
  r.index = static_cast<int>(view->history.size()) + 1;
  char id[16];
  std::snprintf(id, sizeof id, "c%03d", r.index);
  r.candidate_id = id;
  r.base_id = proposal.base_id.empty() ? view->leader_id : proposal.base_id;
  r.changes = proposal.changes;
  r.lever_id = proposal.lever_id;
  r.rationale = proposal.rationale;
  std::optional<Outcome> parsed = OutcomeFromName(outcome);
  REQUIRE(parsed);
  r.outcome = *parsed;
  r.agent_meta = proposal.meta;
  if (failure) {
    r.failure = Failure{};
    r.failure->kind = *failure;
    r.failure->signature = "test";
  }
  // The base as the engine would find it: the leader or a measured parent.
  const Recipe* base = nullptr;
  Measurement base_m;
  if (r.base_id == view->leader_id) {
    base = &view->leader;
    base_m = view->leader_measurement.value_or(Measurement{});
  }
  for (const ParentView& p : view->parents) {
    if (p.id == r.base_id) {
      base = &p.recipe;
      base_m = p.measurement;
    }
  }
  REQUIRE(base != nullptr);
  Recipe recipe = *base;
  for (const Change& c : proposal.changes) (void)SetValue(&recipe, c.key, c.to);
  view->history.push_back(r);
  view->proposal_index = r.index + 1;
  view->seed = 42 + static_cast<uint64_t>(r.index);
  const bool measured = outcome == "slower" || outcome == "within_noise" || outcome == "new_leader";
  if (!measured) return;
  // Measured: faster or slower than the leader by the outcome's typical amount unless given.
  const double leader_tps = view->leader_measurement ? view->leader_measurement->tokens_per_s_per_gpu : 1000;
  const double factor = speedup.value_or(outcome == "slower" ? 0.85 : outcome == "within_noise" ? 1.01 : 1.10);
  Measurement m = base_m;
  m.tokens_per_s_per_gpu = leader_tps * factor;
  view->history.back().measurement = m;
  ParentView added{r.candidate_id, recipe, m, {}, FakeMoves(recipe)};
  if (outcome == "new_leader") {
    // The old leader becomes a parent; the candidate leads.
    view->parents.push_back(ParentView{view->leader_id, view->leader,
                                       view->leader_measurement.value_or(Measurement{}), {},
                                       view->legal_moves});
    view->leader = recipe;
    view->leader_id = r.candidate_id;
    view->leader_measurement = m;
    view->legal_moves = FakeMoves(recipe);
  } else {
    view->parents.push_back(std::move(added));
  }
  std::stable_sort(view->parents.begin(), view->parents.end(), [](const ParentView& a, const ParentView& b) {
    return a.measurement.tokens_per_s_per_gpu > b.measurement.tokens_per_s_per_gpu;
  });
  if (view->parents.size() > static_cast<size_t>(kMaxParents)) view->parents.resize(kMaxParents);
}

}  // namespace attune::testing
