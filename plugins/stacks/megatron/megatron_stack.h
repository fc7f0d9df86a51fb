// Copyright attune authors.
//
// MegatronStack: the Stack plugin for Megatron-LM (and launch forms slime uses). Its knowledge is
// data under <data_dir>/stacks/megatron/, loaded once at creation; all methods are const,
// deterministic and never throw.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_MEGATRON_STACK_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_MEGATRON_STACK_H_

#include <memory>
#include <string>

#include "attune/plugin.h"
#include "attune/stack.h"
#include "knowledge.h"

namespace attune::megatron {

class MegatronStack final : public Stack {
 public:
  explicit MegatronStack(Knowledge knowledge);

  // Loads the knowledge from `data_dir`/stacks/megatron; `options` are the stack's `with:`
  // (kOptionsSchema, already validated).
  static Result<std::unique_ptr<MegatronStack>> Open(
      const std::string& data_dir, const nlohmann::json& options = nlohmann::json::object());

  std::string Name() const override { return "megatron"; }
  const std::vector<Lever>& Levers() const override { return levers_; }
  Result<Recipe> ImportLaunch(std::string_view script, std::vector<std::string>* unknown) const override;
  Status Validate(const Recipe& recipe, const ClusterInfo& cluster) const override;
  std::vector<Move> LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const override;
  GateVerdict CheckObjective(const Recipe& baseline, const Recipe& candidate) const override;
  Result<LaunchSpec> RenderLaunch(const Recipe& recipe) const override;
  Result<Recipe> BenchmarkForm(const Recipe& recipe) const override;
  GateVerdict CheckBenchmarkForm(const Recipe& recipe, const Recipe& form) const override;
  std::optional<int64_t> BenchmarkLength(const Recipe& form) const override;
  Result<Recipe> ProfileForm(const Recipe& form, const std::string& trace_dir) const override;
  Result<sim::ParallelPlan> SimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                           int world) const override;
  Result<std::string> RenderSimulatedLog(const Recipe& recipe,
                                         const sim::SimulatedRun& run) const override;
  LogParse ParseLog(std::string_view log) const override;
  Result<Measurement> Measure(const LogParse& parse, const Recipe& recipe) const override;
  Failure Triage(std::string_view log, const JobEnd& end) const override;
  std::vector<Diagnosis> Diagnose(const Recipe& recipe, const Measurement& measurement,
                                  const LogParse& parse, const ClusterInfo& cluster) const override;
  nlohmann::json Describe() const override;
  std::vector<PluginCommand> Commands() const override;
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override;

  const Knowledge& knowledge() const { return knowledge_; }

 private:
  Knowledge knowledge_;
  std::vector<Lever> levers_;
};

// The plugin factory: reads PluginContext::data_dir (falls back to ATTUNE_DATA_DIR).
Result<std::unique_ptr<Plugin>> Create(const PluginContext& context);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_MEGATRON_STACK_H_
