// Copyright attune authors.
//
// Stack: everything attune knows about one training stack (Megatron-LM, NeMo AutoModel, ...).
// A stack plugin owns recipes of its kind: it imports them from what users have, validates them
// for a topology, lists the legal one-lever moves, says which changes alter the training
// objective, renders a launch, parses logs and classifies failures. Its knowledge lives as data in
// stacks/<name>/ (levers.yaml, objective.yaml, triage.yaml), which PluginContext::data_dir locates.
//
// All methods are const and deterministic: the same inputs give the same outputs (the engine
// relies on this for replay). None may throw.
#ifndef ATTUNE_STACK_H_
#define ATTUNE_STACK_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/cluster.h"
#include "attune/metrics.h"
#include "attune/plugin.h"
#include "attune/recipe.h"
#include "attune/sim_plan.h"
#include "attune/status.h"

namespace attune {

// A lever of the catalog (stacks/<stack>/levers.yaml).
struct Lever {
  std::string id;                       // "micro_batch_size"
  std::string description;
  std::vector<std::string> keys;        // the recipe keys it touches
  std::vector<std::string> addresses;   // diagnosis kinds it helps (see metrics.h)
  double expected_speed = 0;            // prior: relative speed change when it helps (+0.1 = 10%)
  double expected_memory = 0;           // prior: relative memory change (-0.3 = saves 30%)
  bool changes_rng = false;             // changes RNG streams: the paired-loss check widens
  // For keys whose values are categories with a direction: the values from least to most of the
  // feature ("" stands for the key absent), so that an agent reads a move along them as forward
  // (up the list, the direction expected_speed and expected_memory describe) or back:
  // --recompute-granularity {"", selective, full}. Numbers and switches need no entry.
  std::map<std::string, std::vector<std::string>> order = {};
};

// One legal step from a recipe: one lever, usually one key (a lever may move several keys
// together, e.g. TP with sequence parallel).
struct Move {
  std::string lever_id;
  std::vector<Change> changes;
  std::string summary;  // "micro-batch size 1 -> 2 (gradient accumulation 8 -> 4)"
  // What an absent key means where the stack knows it (key -> value): a change from "absent" to a
  // value is then a move up or down from that value, not an unknown one. Megatron's
  // --expert-tensor-parallel-size absent means the recipe's TP size, for example.
  std::map<std::string, std::string> defaults;
  // The moves of other levers that this move makes legal: levers of which the stack offers no move
  // from the recipe this move was offered from, and does offer from the recipe after it (the move
  // meets a prerequisite, as Megatron's alltoall dispatcher does for its expert-parallel overlap).
  // Their changes are relative to the recipe after this move. Filled by the engine for the leader's
  // legal moves (CampaignView::legal_moves, FindUnlocks); empty elsewhere, and never nested.
  std::vector<Move> unlocks = {};
};

// The static gate's answer for a candidate against the baseline.
struct GateVerdict {
  bool pass = false;
  std::string rule_id;  // the rule that decided: "obj.lr", "fail_closed.unknown_key", "ok"
  std::string reason;   // names the key, both values and why
  double loss_rel_tolerance = 0;  // for the paired-loss check, when pass
};

// How a job ended, as the launcher reported it, for triage.
struct JobEnd {
  int exit_code = 0;          // -1 when unknown
  std::string launcher_state; // "failed", "timed_out", "cancelled", "node_failure", ...
  double ran_seconds = 0;
};

// The argv and environment to run, with the directory to run it in.
struct LaunchSpec {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::string workdir;  // empty: the launcher's default
};

class Stack : public Plugin {
 public:
  // The lever catalog.
  virtual const std::vector<Lever>& Levers() const = 0;

  // Reads a launch script or command line as users have it (`torchrun ... pretrain_gpt.py --x 1`,
  // exported env vars, ...) into a recipe. Tokens it cannot place go to `unknown` (reported to
  // the user, never silently dropped).
  virtual Result<Recipe> ImportLaunch(std::string_view script, std::vector<std::string>* unknown)
      const = 0;

  // Checks a recipe against the stack's combination rules for its topology and cluster. A
  // violation names the rule, the values and the fix.
  virtual Status Validate(const Recipe& recipe, const ClusterInfo& cluster) const = 0;

  // The legal single-lever moves from `recipe`: each one validates and passes the static gate
  // against `recipe`. Deterministic order.
  virtual std::vector<Move> LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const = 0;

  // The static correctness gate: may `candidate` be compared with `baseline` as the same training
  // objective? Fails closed on keys in neither the lever catalog nor the objective list.
  virtual GateVerdict CheckObjective(const Recipe& baseline, const Recipe& candidate) const = 0;

  // The launch for the recipe's topology.
  virtual Result<LaunchSpec> RenderLaunch(const Recipe& recipe) const = 0;

  // The recipe as a benchmark job runs it: only run-control settings (the objective rules'
  // `neutral.run_control`: how long it trains, checkpointing, evaluation, logging cadence) may
  // differ, so that a production-length recipe is measured in minutes instead of running until the
  // job's time limit. The engine renders benchmark jobs from this form; what it records, compares
  // and ships is always the recipe itself. The default runs the recipe as it is.
  virtual Result<Recipe> BenchmarkForm(const Recipe& recipe) const { return recipe; }

  // Does `form` (BenchmarkForm's answer) train the same model as `recipe` for as long as the job
  // measures? The engine refuses a form this does not pass. Stricter than a candidate's gate on
  // purpose where a stack cannot stop early without shortening training (AutoModel has no
  // exit-interval: a form may lower max_steps when the LR schedule is pinned, which a candidate
  // may never do). The default is CheckObjective.
  virtual GateVerdict CheckBenchmarkForm(const Recipe& recipe, const Recipe& form) const {
    return CheckObjective(recipe, form);
  }

  // `form` (BenchmarkForm's answer) with the stack's profiler on: the same run, writing one
  // PyTorch-profiler (chrome-trace JSON) trace per profiled rank into `trace_dir`, an absolute
  // path the job can write (docs/profile.md "In a campaign"). Only profiling and logging settings
  // may change; the engine checks the result like a benchmark form. Unimplemented by default: the
  // stack cannot profile, and the campaign's profile step says so.
  virtual Result<Recipe> ProfileForm(const Recipe& form, const std::string& trace_dir) const {
    (void)form;
    (void)trace_dir;
    return Status::Unimplemented("the " + Name() + " stack has no profiled form of a recipe");
  }

  // How many records (iterations, steps, rollouts: what ParseLog returns one IterationSample for)
  // a job of `form` (BenchmarkForm's answer) logs when nothing stops it early; std::nullopt when the
  // stack cannot tell (a length that follows from the dataset's size). An upper bound is fine. The
  // engine projects a job it stopped early (measure.early_stop) to its full length with it.
  virtual std::optional<int64_t> BenchmarkLength(const Recipe& form) const {
    (void)form;
    return std::nullopt;
  }

  // The devices a job of `recipe` occupies and is charged for: its topology's world size, plus what
  // the stack runs beside the training ranks (slime's rollout engines when they are not
  // colocated). The engine requests, reserves and charges this many; launchers place them on
  // max(topology nodes, ceil(devices ÷ GPUs per node)) nodes.
  virtual int Devices(const Recipe& recipe) const { return recipe.topology.WorldSize(); }

  // Dry runs (attune/sim_plan.h, docs/sim.md): the recipe as the parallel plan the simulated
  // cluster models, for a job of `world` devices on `cluster`. A recipe the framework would refuse
  // is a plan with its refusal set; an error means the recipe cannot be simulated at all (the job
  // is not started). Unimplemented by default: the stack has no dry runs.
  virtual Result<sim::ParallelPlan> SimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                                   int world) const {
    (void)recipe;
    (void)cluster;
    (void)world;
    return Status::Unimplemented("the " + Name() + " stack has no simulation mapping (dry runs)");
  }

  // The log text of a simulated job of `recipe` (run.plan is SimulationPlan's answer), in the
  // stack's own format, so that ParseLog, Measure and Triage read it as they read a real job.
  virtual Result<std::string> RenderSimulatedLog(const Recipe& recipe,
                                                 const sim::SimulatedRun& run) const {
    (void)recipe;
    (void)run;
    return Status::Unimplemented("the " + Name() + " stack has no simulated log");
  }

  // Parses a (possibly partial) log. Tolerant of prefixes, timestamps, ANSI codes, CRLF.
  virtual LogParse ParseLog(std::string_view log) const = 0;

  // The steady-state measurement of a parsed log for this recipe (drops the records the stack
  // knows to be contaminated by warm-up). Fails when too few records remain.
  virtual Result<Measurement> Measure(const LogParse& parse, const Recipe& recipe) const = 0;

  // Classifies why a job failed (kind kNone when the log shows no failure).
  virtual Failure Triage(std::string_view log, const JobEnd& end) const = 0;

  // What limits this run.
  virtual std::vector<Diagnosis> Diagnose(const Recipe& recipe, const Measurement& measurement,
                                          const LogParse& parse,
                                          const ClusterInfo& cluster) const = 0;

  // Everything for `attune stack show`: levers, objective rules, constraints (stable JSON).
  virtual nlohmann::json Describe() const = 0;
};

}  // namespace attune

#endif  // ATTUNE_STACK_H_
