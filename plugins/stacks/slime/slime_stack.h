// Copyright attune authors.
//
// SlimeStack: the Stack plugin for slime (THUDM/slime, RL post-training on Megatron + SGLang).
// It is composed with the Megatron stack rather than copied from it: a MegatronStack (knowledge
// from stacks/megatron/) decides the Megatron flags of a slime recipe (validation, levers, gate,
// CUDA OOM / NCCL signatures), and slime's own knowledge (stacks/slime/, same file schema, loaded
// with the Megatron loader) decides slime's flags, its log lines and its failures.
#ifndef ATTUNE_PLUGINS_STACKS_SLIME_SLIME_STACK_H_
#define ATTUNE_PLUGINS_STACKS_SLIME_SLIME_STACK_H_

#include <memory>
#include <string>

#include "arguments.h"
#include "attune/plugin.h"
#include "attune/stack.h"
#include "knowledge.h"
#include "megatron_stack.h"

namespace attune::slime {

class SlimeStack final : public Stack {
 public:
  SlimeStack(megatron::Knowledge slime, std::unique_ptr<megatron::MegatronStack> megatron);

  // Loads stacks/slime and stacks/megatron from `data_dir`; `options` are the workflow's
  // stack.with (options_schema.cc: extra_arguments).
  static Result<std::unique_ptr<SlimeStack>> Open(const std::string& data_dir,
                                                  const nlohmann::json& options = nullptr);

  std::string Name() const override { return "slime"; }
  const std::vector<Lever>& Levers() const override { return levers_; }
  Result<Recipe> ImportLaunch(std::string_view script, std::vector<std::string>* unknown) const override;
  Status Validate(const Recipe& recipe, const ClusterInfo& cluster) const override;
  std::vector<Move> LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const override;
  GateVerdict CheckObjective(const Recipe& baseline, const Recipe& candidate) const override;
  Result<Recipe> BenchmarkForm(const Recipe& recipe) const override;
  // slime's own torch.profiler, driven by Megatron's profiling flags (slime_stack.cc).
  Result<Recipe> ProfileForm(const Recipe& form, const std::string& trace_dir) const override;
  std::optional<int64_t> BenchmarkLength(const Recipe& form) const override;
  int Devices(const Recipe& recipe) const override;
  GateVerdict CheckBenchmarkForm(const Recipe& recipe, const Recipe& form) const override;
  Result<LaunchSpec> RenderLaunch(const Recipe& recipe) const override;
  // Dry runs (dry_run.h): the training side through the Megatron stack's mapping, slime's
  // rollout phase, and slime's own log.
  Result<sim::ParallelPlan> SimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                           int world) const override;
  Result<std::string> RenderSimulatedLog(const Recipe& recipe, const sim::SimulatedRun& run) const override;
  LogParse ParseLog(std::string_view log) const override;
  Result<Measurement> Measure(const LogParse& parse, const Recipe& recipe) const override;
  Failure Triage(std::string_view log, const JobEnd& end) const override;
  std::vector<Diagnosis> Diagnose(const Recipe& recipe, const Measurement& measurement,
                                  const LogParse& parse, const ClusterInfo& cluster) const override;
  nlohmann::json Describe() const override;

  const megatron::Knowledge& knowledge() const { return slime_; }

  // The recipe's flags that neither slime's train.py (stacks/slime/arguments.txt) nor Megatron-LM
  // (stacks/megatron/arguments.txt) defines, nor the workflow declares: slime parses with
  // ignore_unknown_args=True, so such a flag is dropped without a word (rule "args.known" of
  // Validate). None for a program other than train.py or train_async.py.
  std::vector<megatron::UnknownArgument> UnknownArguments(const Recipe& recipe) const;

 private:
  megatron::Knowledge slime_;
  std::unique_ptr<megatron::MegatronStack> megatron_;
  megatron::TriageSpec triage_;  // slime's, Megatron's, slime's "late.", Megatron's "late." ones
  std::vector<Lever> levers_;    // slime's, then Megatron's levers on keys slime does not own
  // slime's list, its families and extra flags, with Megatron-LM's flags: what train.py accepts.
  megatron::KnownArguments known_;
};

Result<std::unique_ptr<Plugin>> Create(const PluginContext& context);

}  // namespace attune::slime

#endif  // ATTUNE_PLUGINS_STACKS_SLIME_SLIME_STACK_H_
