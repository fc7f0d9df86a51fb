// Copyright attune authors.
//
// The NeMo AutoModel stack: recipes are an AutoModel YAML config plus dotted command-line
// overrides; levers, objective rules and triage come from stacks/automodel/*.yaml.
#ifndef ATTUNE_PLUGINS_STACKS_AUTOMODEL_AUTOMODEL_STACK_H_
#define ATTUNE_PLUGINS_STACKS_AUTOMODEL_AUTOMODEL_STACK_H_

#include <memory>
#include <string>
#include <vector>

#include "attune/stack.h"
#include "knowledge.h"

namespace attune::automodel {

class AutoModelStack : public Stack {
 public:
  // Loads the knowledge files from `data_dir`/stacks/automodel.
  // Loads stacks/automodel from `data_dir`; `options` are the workflow's stack.with
  // (options_schema.cc: extra_sections).
  static Result<std::unique_ptr<AutoModelStack>> Create(const std::string& data_dir,
                                                        const nlohmann::json& options = nullptr);

  std::string Name() const override { return "automodel"; }
  const std::vector<Lever>& Levers() const override { return levers_; }
  Result<Recipe> ImportLaunch(std::string_view script,
                              std::vector<std::string>* unknown) const override;
  Status Validate(const Recipe& recipe, const ClusterInfo& cluster) const override;
  std::vector<Move> LegalMoves(const Recipe& recipe, const ClusterInfo& cluster) const override;
  GateVerdict CheckObjective(const Recipe& baseline, const Recipe& candidate) const override;
  Result<Recipe> BenchmarkForm(const Recipe& recipe) const override;
  // Refused: AutoModel has no setting that writes PyTorch-profiler traces (automodel_stack.cc).
  Result<Recipe> ProfileForm(const Recipe& form, const std::string& trace_dir) const override;
  std::optional<int64_t> BenchmarkLength(const Recipe& form) const override;
  // Dry runs (dry_run.h): the checkpoint's shape, the mesh, batch and switches as a plan.
  Result<sim::ParallelPlan> SimulationPlan(const Recipe& recipe, const ClusterInfo& cluster,
                                           int world) const override;
  Result<std::string> RenderSimulatedLog(const Recipe& recipe,
                                         const sim::SimulatedRun& run) const override;
  GateVerdict CheckBenchmarkForm(const Recipe& recipe, const Recipe& form) const override;
  Result<LaunchSpec> RenderLaunch(const Recipe& recipe) const override;
  LogParse ParseLog(std::string_view log) const override;
  Result<Measurement> Measure(const LogParse& parse, const Recipe& recipe) const override;
  Failure Triage(std::string_view log, const JobEnd& end) const override;
  std::vector<Diagnosis> Diagnose(const Recipe& recipe, const Measurement& measurement,
                                  const LogParse& parse, const ClusterInfo& cluster) const override;
  nlohmann::json Describe() const override;

  const Knowledge& knowledge() const { return knowledge_; }

 private:
  explicit AutoModelStack(Knowledge knowledge);
  // The verdict for one changed key, or std::nullopt when it is a known lever or neutral.
  std::optional<GateVerdict> CheckKey(const Recipe& baseline, const Change& change,
                                      double* tolerance) const;
  bool MoveMakesSense(const LeverSpec& spec, const Recipe& recipe) const;

  Knowledge knowledge_;
  std::vector<Lever> levers_;
};

}  // namespace attune::automodel

#endif  // ATTUNE_PLUGINS_STACKS_AUTOMODEL_AUTOMODEL_STACK_H_
