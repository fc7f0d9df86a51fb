// Copyright attune authors.
//
// Builders of campaign event logs for the fold, measure and report tests: each call appends one
// event as the engine would, so tests read like the campaign they describe.
#ifndef ATTUNE_TESTS_UNIT_CAMPAIGN_CAMPAIGN_FIXTURES_H_
#define ATTUNE_TESTS_UNIT_CAMPAIGN_CAMPAIGN_FIXTURES_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/launcher.h"
#include "attune/metrics.h"
#include "attune/recipe.h"
#include "campaign/campaign_state.h"
#include "campaign/events.h"
#include "log/event_log.h"

namespace attune::testing {

using nlohmann::json;

inline Recipe TestRecipe(const std::string& mbs = "1") {
  Recipe r;
  r.stack = "megatron";
  r.entry = {"python3", "pretrain_gpt.py"};
  r.args = {{"--micro-batch-size", {mbs}}, {"--lr", {"0.001"}}};
  r.topology.nodes = 1;
  r.topology.gpus_per_node = 2;
  return r;
}

inline Measurement TestMeasurement(double tps, std::vector<double> losses = {10.0, 9.5, 9.1}) {
  Measurement m;
  m.iterations_logged = 20;
  m.iterations_used = 16;
  m.step_time_s = 1000.0 / tps;
  m.tokens_per_s_per_gpu = tps;
  m.cv = 0.01;
  m.first_losses = std::move(losses);
  return m;
}

class LogBuilder {
 public:
  // budget 1 GPU-hour; job time limit 600 s, so one 2-device job reserves 1/3 GPU-hour.
  explicit LogBuilder(double budget = 1.0, double time_limit_s = 600)
      : LogBuilder([&] {
          CampaignSettings s;
          s.budget_gpu_hours = budget;
          s.job_time_limit_s = time_limit_s;
          s.noise_band = 0.03;
          return s;
        }()) {}
  explicit LogBuilder(const CampaignSettings& s) {
    Add(events::kCampaignStarted,
        json{{"campaign_id", "t"}, {"workflow", json::object()}, {"workflow_hash", "abc"},
             {"seed", 7}, {"settings", CampaignSettingsToJson(s)},
             {"plugins", json::array({PluginIdentityToJson({"stack", "megatron", "0.1.0", "aa"})})},
             {"cluster", ClusterInfoToJson(ClusterInfo{"H100", 80, 989, 8, 4, 9, true, ""})},
             {"baseline_recipe", RecipeToJson(TestRecipe())},
             {"stack", "megatron"}, {"launcher", "sim"}, {"agent", "heuristic"},
             {"steps", json::array({json{{"id", "baseline"}, {"uses", "benchmark"}},
                                    json{{"id", "tune"}, {"uses", "tune"}},
                                    json{{"id", "report"}, {"uses", "report"}}})}});
  }

  LogBuilder& Add(const std::string& type, json data) {
    EventRecord e;
    e.seq = events_.size() + 1;
    e.type = type;
    e.data = std::move(data);
    events_.push_back(std::move(e));
    return *this;
  }

  LogBuilder& Request(const std::string& job, const std::string& candidate, const std::string& purpose,
                      const Recipe& recipe = TestRecipe(), int pair = 0) {
    return Add(events::kJobRequested,
               json{{"job", job}, {"candidate", candidate}, {"purpose", purpose}, {"pair", pair},
                    {"recipe", RecipeToJson(recipe)}, {"devices", recipe.topology.WorldSize()},
                    {"time_limit_s", 600.0},
                    {"reserved_gpu_hours", recipe.topology.WorldSize() * 600.0 / 3600}});
  }

  // A job that ran `seconds` on 2 devices and measured `tps` (or failed with `failure`).
  LogBuilder& Finish(const std::string& job, double seconds, std::optional<Measurement> m,
                     std::optional<Failure> failure = std::nullopt, bool cancelled = false) {
    JobStatus st;
    st.name = job;
    st.state = failure ? JobState::kFailed : JobState::kSucceeded;
    st.start_time = 100;
    st.end_time = 100 + seconds;
    st.devices = 2;
    return Add(events::kJobFinished,
               json{{"job", job}, {"status", JobStatusToJson(st)},
                    {"charged_gpu_hours", st.DeviceHours()},
                    {"measurement", m ? MeasurementToJson(*m) : json()},
                    {"failure", failure ? FailureToJson(*failure) : json()},
                    {"diagnosis", json::array({json{{"kind", "memory_headroom"}, {"severity", 0.5},
                                                    {"evidence", "peak 20 of 80 GiB"}}})},
                    {"log_path", "/x/" + job + ".log"},
                    {"cancelled_by_engine", cancelled}});
  }

  // The adaptive stop of a job after `last_iteration` of `planned` iterations (null: unknown).
  LogBuilder& StopEarly(const std::string& job, int64_t last_iteration, json planned, int64_t log_bytes = 4096) {
    return Add(events::kJobStopRequested,
               json{{"job", job}, {"reason", "steady"}, {"log_bytes", log_bytes},
                    {"iterations_logged", last_iteration}, {"last_iteration", last_iteration},
                    {"planned_iterations", planned}, {"iterations_used", last_iteration - 2},
                    {"median_step_time_s", 1.0}, {"relative_error", 0.004}, {"target", 0.005},
                    {"drift", 0.001}});
  }

  LogBuilder& BaselineRun(int attempt, double tps) {
    const std::string job = "t-baseline-" + std::to_string(attempt);
    Request(job, "baseline", "baseline");
    return Finish(job, 360, TestMeasurement(tps));
  }

  LogBuilder& Propose(const std::string& id, int index, const std::string& mbs,
                      const std::string& base = "baseline") {
    return Add(events::kProposalRecorded,
               json{{"candidate", id}, {"index", index}, {"base", base},
                    {"changes", ChangesToJson({Change{"--micro-batch-size", "1", mbs}})},
                    {"lever_id", "micro_batch_size"}, {"rationale", "use memory headroom"},
                    {"meta", json::object()}, {"recipe", RecipeToJson(TestRecipe(mbs))}});
  }

  LogBuilder& Gate(const std::string& id, bool pass, const std::string& rule = "ok") {
    return Add(events::kGateVerdict, json{{"candidate", id}, {"pass", pass}, {"rule_id", rule},
                                           {"reason", pass ? "same objective" : "changes the lr"},
                                           {"tolerance", 0.0}});
  }

  LogBuilder& Rank(const std::string& id, const std::string& outcome, std::optional<double> tps = {},
                   std::optional<double> vs_leader = {}) {
    return Add(events::kCandidateRanked,
               json{{"candidate", id}, {"outcome", outcome},
                    {"tokens_per_s_per_gpu", tps ? json(*tps) : json()},
                    {"speedup_vs_leader", vs_leader ? json(*vs_leader) : json()},
                    {"speedup_vs_baseline", vs_leader ? json(*vs_leader) : json()}});
  }

  const std::vector<EventRecord>& events() const { return events_; }

  CampaignState Fold() const {
    auto s = CampaignState::Fold(events_);
    if (!s.ok()) throw std::runtime_error(s.status().ToString());
    return *s;
  }

 private:
  std::vector<EventRecord> events_;
};

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_UNIT_CAMPAIGN_CAMPAIGN_FIXTURES_H_
