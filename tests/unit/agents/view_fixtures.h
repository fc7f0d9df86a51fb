// Copyright attune authors.
//
// Hand-built campaign views for the agent tests: a Megatron-like recipe on one node of 8 H100s,
// a five-lever catalog, and a tiny move generator standing in for Stack::LegalMoves.
#ifndef ATTUNE_TESTS_UNIT_AGENTS_VIEW_FIXTURES_H_
#define ATTUNE_TESTS_UNIT_AGENTS_VIEW_FIXTURES_H_

#include <optional>
#include <string>
#include <vector>

#include "attune/agent.h"

namespace attune::testing {

// --micro-batch-size 1, --global-batch-size 64, --recompute-granularity selective.
Recipe BaseRecipe();

// micro_batch_size (+8% speed, +35% memory), recompute (-15%, -35%), distributed_optimizer
// (+1%, -25%), overlap_grad_reduce (+5%, addresses communication), attention_backend (+4%,
// compute_bound).
std::vector<Lever> Catalog();

// Single-lever moves from `recipe` over: micro-batch 1/2/4/8, recompute absent/selective/full,
// distributed optimizer on/off, attention backend absent/flash.
std::vector<Move> FakeMoves(const Recipe& recipe);

// A view whose leader is the baseline, measured at `peak_gib` of 80 GiB.
CampaignView MakeView(std::optional<double> peak_gib);

// Appends the outcome of `proposal` (from its base_id, the leader when empty) to the view's
// history as the engine would. A measured outcome gets a throughput of `speedup` × the leader's
// (default: slower 0.85, within_noise 1.01, new_leader 1.10) and joins view.parents; "new_leader"
// makes it the leader (the old leader joins the parents) and regenerates the legal moves.
void Record(CampaignView* view, const Proposal& proposal, const std::string& outcome,
            std::optional<FailureKind> failure = std::nullopt,
            std::optional<double> speedup = std::nullopt);

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_UNIT_AGENTS_VIEW_FIXTURES_H_
