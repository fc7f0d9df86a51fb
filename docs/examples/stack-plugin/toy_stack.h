// The toy stack: a complete, minimal attune::Stack, built out of tree against an installed attune
// (docs/plugins.md "Building a plugin out of tree"). Its recipes run toy_train.py, a stand-in for
// a training script whose only throughput lever is the micro-batch size.
//
// A recipe:
//   stack: toy
//   entry: [python3, toy_train.py]
//   args: [[--steps, "20"], [--global-batch, "16"], [--micro-batch, "1"], [--seq-length, "128"],
//          [--lr, "0.1"], [--seed, "1"]]
//   topology: {nodes: 1, gpus_per_node: 1, gpu_type: cpu}
//
// What it knows (an in-tree stack keeps this as data in stacks/<name>/*.yaml; a small one may
// keep it in code, as here):
//   lever     --micro-batch   1, 2, 4, 8 (up to the option max_micro_batch), dividing the batch
//   objective --global-batch, --seq-length, --lr, --seed   (changing one changes the training)
//   neutral   --steps                                      (run control: how long it runs)
//   anything else is refused by the gate (fail closed).
//
// Like every stack, all methods are const, deterministic and never throw.
#ifndef TOY_STACK_H_
#define TOY_STACK_H_

#include <string>
#include <vector>

#include "attune/stack.h"

namespace toy {

class ToyStack : public attune::Stack {
 public:
  // max_micro_batch: the largest micro-batch size the lever may propose (>= 1).
  explicit ToyStack(int max_micro_batch);

  std::string Name() const override { return "toy"; }
  const std::vector<attune::Lever>& Levers() const override { return levers_; }
  attune::Result<attune::Recipe> ImportLaunch(std::string_view script,
                                              std::vector<std::string>* unknown) const override;
  attune::Status Validate(const attune::Recipe& recipe,
                          const attune::ClusterInfo& cluster) const override;
  std::vector<attune::Move> LegalMoves(const attune::Recipe& recipe,
                                       const attune::ClusterInfo& cluster) const override;
  attune::GateVerdict CheckObjective(const attune::Recipe& baseline,
                                     const attune::Recipe& candidate) const override;
  attune::Result<attune::LaunchSpec> RenderLaunch(const attune::Recipe& recipe) const override;
  std::optional<int64_t> BenchmarkLength(const attune::Recipe& form) const override;
  attune::LogParse ParseLog(std::string_view log) const override;
  attune::Result<attune::Measurement> Measure(const attune::LogParse& parse,
                                              const attune::Recipe& recipe) const override;
  attune::Failure Triage(std::string_view log, const attune::JobEnd& end) const override;
  std::vector<attune::Diagnosis> Diagnose(const attune::Recipe& recipe,
                                          const attune::Measurement& measurement,
                                          const attune::LogParse& parse,
                                          const attune::ClusterInfo& cluster) const override;
  nlohmann::json Describe() const override;

 private:
  std::vector<std::string> MicroBatchValues() const;

  int max_micro_batch_;
  std::vector<attune::Lever> levers_;
};

}  // namespace toy

#endif  // TOY_STACK_H_
