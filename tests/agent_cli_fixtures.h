// Copyright attune authors.
//
// What the coding-agent CLI tests (claude-code, codex, gemini) share: a scratch campaign folder,
// a small campaign view with two legal moves, the proposal the scripted model gives for its first
// move and the `attune status` a hook reads when budget is left. Header-only.
#ifndef ATTUNE_TESTS_AGENT_CLI_FIXTURES_H_
#define ATTUNE_TESTS_AGENT_CLI_FIXTURES_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "attune/agent.h"

namespace attune::testing {

// The answer for the view's first legal move (micro-batch 1 -> 2).
inline nlohmann::json MbsProposal() {
  return {{"changes", {{{"key", "--micro-batch-size"}, {"from", "1"}, {"to", "2"}}}},
          {"lever_id", "micro_batch_size"},
          {"rationale", "memory headroom: 30 of 80 GiB used"}};
}

// `attune status --json` of a running campaign with budget and candidates left.
inline nlohmann::json BudgetLeft() {
  return {{"state", "running"},
          {"budget", {{"total_gpu_hours", 10.0}, {"left_gpu_hours", 4.0}}},
          {"candidates_left", 5}};
}

// A fresh folder per test under the temporary directory, with campaign/ in it; removed at the end
// unless ATTUNE_KEEP_TEST_DIRS is set.
class CliScratch {
 public:
  explicit CliScratch(const std::string& prefix) {
    static int n = 0;
    root = std::filesystem::temp_directory_path() /
           ("attune-" + prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::create_directories(root / "campaign");
  }
  ~CliScratch() {
    if (!std::getenv("ATTUNE_KEEP_TEST_DIRS")) std::filesystem::remove_all(root);
  }
  CliScratch(const CliScratch&) = delete;
  CliScratch& operator=(const CliScratch&) = delete;

  std::filesystem::path campaign() const { return root / "campaign"; }
  // What the test stand-in for `attune status` answers (the hook drivers read it).
  void SetStatus(const nlohmann::json& status) const {
    std::ofstream(campaign() / "test_status.json") << status.dump();
  }

  std::filesystem::path root;
};

// A megatron campaign at its first proposal: baseline measured with memory headroom, two levers
// and their two legal moves (micro-batch 1 -> 2, TP 2 -> 1), budget left.
inline CampaignView TwoMoveView(const std::string& campaign_id, const std::filesystem::path& campaign_dir) {
  CampaignView v;
  v.campaign_id = campaign_id;
  v.campaign_dir = campaign_dir.string();
  v.stack = "megatron";
  v.cluster.device_type = "H100";
  v.cluster.device_memory_gib = 80;
  v.cluster.devices_per_node = 8;
  v.baseline.stack = "megatron";
  v.baseline.entry = {"python3", "pretrain_gpt.py"};
  v.baseline.args = {{"--micro-batch-size", {"1"}}, {"--tensor-model-parallel-size", {"2"}}, {"--bf16", {}}};
  v.baseline.topology = {1, 8, "H100"};
  v.leader = v.baseline;
  v.leader_id = "baseline";
  Measurement m;
  m.step_time_s = 1.2;
  m.tokens_per_s_per_gpu = 3400;
  m.peak_memory_gib = 30;
  v.baseline_measurement = m;
  v.leader_measurement = m;
  v.diagnosis = {{"memory_headroom", 0.6, "peak 30 of 80 GiB"}};
  v.levers = {{"micro_batch_size", "larger micro-batches", {"--micro-batch-size"}, {"memory_headroom"},
               0.1, 0.3, false},
              {"tensor_parallel", "tensor parallel size", {"--tensor-model-parallel-size"},
               {"communication"}, 0.1, 0.5, false}};
  v.legal_moves = {
      {"micro_batch_size", {{"--micro-batch-size", "1", "2"}}, "micro-batch 1 -> 2", {}, {}},
      {"tensor_parallel", {{"--tensor-model-parallel-size", "2", "1"}}, "TP 2 -> 1", {}, {}}};
  v.budget_total_gpu_hours = 10;
  v.budget_left_gpu_hours = 4;
  v.job_cost_estimate_gpu_hours = 0.2;
  v.candidates_left = 5;
  v.proposal_index = 1;
  return v;
}

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_AGENT_CLI_FIXTURES_H_
