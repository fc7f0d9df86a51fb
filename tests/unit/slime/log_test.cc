#include <catch2/catch.hpp>

#include <cmath>

#include "log_parser.h"
#include "slime_fixture.h"

using namespace attune;
using namespace attune::slime;
using namespace attune::slime::testing;

namespace {

std::vector<const IterationSample*> Steps(const LogParse& p) {
  std::vector<const IterationSample*> out;
  for (const auto& s : p.iterations) if (s.extra.count("slime/train_step")) out.push_back(&s);
  return out;
}

std::vector<const IterationSample*> Rollouts(const LogParse& p) {
  std::vector<const IterationSample*> out;
  for (const auto& s : p.iterations) if (!s.extra.count("slime/train_step")) out.push_back(&s);
  return out;
}

// A trainer perf line as slime's log_perf_data prints it, behind Ray's actor prefix.
std::string TrainerPerf(int id, double step_time, double train_time, double tok_per_s, double tflops,
                        double update = 2.0, const std::string& suffix = "") {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "(MegatronTrainRayActor pid=4121, ip=10.0.0.2) [2026-02-01 10:00:%02d] train_metric_utils.py:77 - "
                "perf %d: {'perf/train_wait_time': %.3f, 'perf/train_time': %.3f, 'perf/actor_train_time': %.3f, "
                "'perf/update_weights_time': %.3f, 'perf/actor_train_tflops': %.3f, 'perf/actor_train_tok_per_s': %.3f, "
                "'perf/step_time': %.3f, 'perf/wait_time_ratio': %.4f}%s\n",
                id % 60, id, step_time - train_time, train_time, train_time, update, tflops, tok_per_s, step_time,
                (step_time - train_time) / step_time, suffix.c_str());
  return buf;
}

}  // namespace

TEST_CASE("python dict literals as slime prints them", "[slime][log]") {
  auto d = ParsePythonDict("{'a': 1.5, \"b\": -2e-3, 'c': nan, 'd': np.float64(2.5), 'e': True, 'f': None, "
                           "'g': [1, 2, {'x': 3}], 'h': 'text, with: commas}', 'i': tensor(4.0, device='cuda:0'), "
                           "'j': -inf,}");
  REQUIRE(d.ok());
  CHECK(d->at("a") == 1.5);
  CHECK(d->at("b") == -2e-3);
  CHECK(std::isnan(d->at("c")));
  CHECK(d->at("d") == 2.5);
  CHECK(d->at("e") == 1.0);
  CHECK(d->at("i") == 4.0);
  CHECK(std::isinf(d->at("j")));
  CHECK(d->count("f") == 0);
  CHECK(d->count("g") == 0);
  CHECK(d->count("h") == 0);
  CHECK(d->size() == 7);

  auto bad = ParsePythonDict("{'a': 1.5, 'b': 2.0");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("offset") != std::string::npos);
  CHECK_FALSE(ParsePythonDict("{'a' 1}").ok());
  CHECK_FALSE(ParsePythonDict("{'a': 12abc}").ok());
}

TEST_CASE("fixture slime_perf_001: the RolloutManager's perf line", "[slime][log]") {
  auto parse = TheStack().ParseLog(SharedLog("slime_perf_001.log"));
  auto r = Rollouts(parse);
  REQUIRE(r.size() == 1);
  CHECK(r[0]->iteration == 0);
  CHECK(r[0]->extra.at("perf/rollout_time") == 371.1796889305115);
  CHECK(r[0]->extra.at("perf/tokens_per_gpu_per_sec") == 239.12643295688667);
  CHECK(r[0]->extra.at("rollout/truncated_ratio") == 0.46484375);
  CHECK(r[0]->step_time_ms == 0);  // rollout side only: no training time yet
  CHECK(Steps(parse).empty());
  CHECK(parse.warnings.empty());
}

TEST_CASE("fixture slime_perf_002: bare step lines", "[slime][log]") {
  auto parse = TheStack().ParseLog(SharedLog("slime_perf_002.log"));
  auto s = Steps(parse);
  REQUIRE(s.size() == 2);
  CHECK(s[0]->iteration == 1);
  CHECK(s[1]->iteration == 28);
  CHECK(*s[0]->loss == 0.10215942561626434);
  CHECK(*s[1]->loss == 0.1451725959777832);
  CHECK(*s[0]->grad_norm == 2955012562.8240876);
  CHECK(*s[1]->grad_norm == 2217390918.482301);
  CHECK(s[0]->extra.at("train/kl_loss") == -7.420481763775744e-12);
  CHECK(s[1]->extra.at("train/kl_loss") == 0.0007035313756205142);
  CHECK(Rollouts(parse).empty());
}

TEST_CASE("fixtures slime_perf_003 and 004: step lines with and without the Ray prefix", "[slime][log]") {
  auto p3 = TheStack().ParseLog(SharedLog("slime_perf_003.log"));
  auto s3 = Steps(p3);
  REQUIRE(s3.size() == 1);
  CHECK(s3[0]->iteration == 0);
  CHECK(*s3[0]->loss == -1.0281801223754883e-06);
  CHECK(*s3[0]->grad_norm == 15310134.6350668);
  CHECK(s3[0]->extra.at("train/train_rollout_logprob_abs_diff") == 9.247343063354492);

  auto p4 = TheStack().ParseLog(SharedLog("slime_perf_004.log"));
  auto s4 = Steps(p4);
  REQUIRE(s4.size() == 1);
  CHECK(s4[0]->iteration == 11);
  CHECK(*s4[0]->loss == -6.05359673500061e-09);
  CHECK(*s4[0]->grad_norm == 0.07986056034213801);
  CHECK(s4[0]->extra.at("train/kl_loss") == 0.002021021908149123);
  CHECK(s4[0]->line == 3);
}

TEST_CASE("fixture slime_perf_005: rollout perf and a step of an SFT run", "[slime][log]") {
  auto parse = TheStack().ParseLog(SharedLog("slime_perf_005.log"));
  auto r = Rollouts(parse);
  auto s = Steps(parse);
  REQUIRE(r.size() == 1);
  REQUIRE(s.size() == 1);
  CHECK(r[0]->iteration == 272);
  CHECK(r[0]->extra.at("perf/rollout_time") == 0.8283281326293945);
  CHECK(r[0]->extra.at("perf/longest_sample_tokens_per_sec") == 101521.36174955242);
  CHECK(s[0]->iteration == 271);
  CHECK(*s[0]->loss == 11.932056806946653);
  CHECK(*s[0]->grad_norm == 0.0);
}

TEST_CASE("trainer and rollout perf lines of one rollout merge; Ray repeats count once", "[slime][log]") {
  std::string log =
      "(RolloutManager pid=77, ip=10.0.0.1) [2026-02-01 10:00:00] rollout_metrics.py:90 - perf 0: "
      "{'perf/rollout_time': 50.0, 'perf/tokens_per_gpu_per_sec': 900.0}\n" +
      std::string("(MegatronTrainRayActor pid=4121, ip=10.0.0.2) [2026-02-01 10:00:05] model.py:918 - step 0: "
                  "{'train/loss': 0.5, 'train/grad_norm': 1.25, 'train/step': 0}\n") +
      TrainerPerf(0, 80.0, 30.0, 12000.0, 150.0) +
      TrainerPerf(0, 80.0, 30.0, 12000.0, 150.0, 2.0, " [repeated 3x across cluster]") +
      "(MegatronTrainRayActor pid=4121, ip=10.0.0.2) step 0: {'train/loss': 0.5} [repeated 7x across cluster]\r\n";
  auto parse = TheStack().ParseLog(log);
  auto r = Rollouts(parse);
  REQUIRE(r.size() == 1);
  CHECK(Steps(parse).size() == 1);
  CHECK(r[0]->extra.at("perf/rollout_time") == 50.0);
  CHECK(r[0]->extra.at("perf/actor_train_time") == 30.0);
  CHECK(*r[0]->tflops_per_gpu == 150.0);
  CHECK(r[0]->step_time_ms == Approx(82000.0));  // step_time + update_weights_time
  CHECK(parse.training_started);
}

TEST_CASE("a malformed perf dict is a warning with its line, not a record", "[slime][log]") {
  auto parse = TheStack().ParseLog("x\nperf 3: {'perf/step_time': 12.0, 'perf/train_time': oops}\n");
  CHECK(parse.iterations.empty());
  REQUIRE(parse.warnings.size() == 1);
  CHECK(parse.warnings[0].find("line 2") != std::string::npos);
  CHECK(parse.warnings[0].find("oops") != std::string::npos);
}

TEST_CASE("measurement: rollout step time and trained tokens per second per GPU", "[slime][measure]") {
  std::string log;
  log += TrainerPerf(0, 200.0, 40.0, 10000.0, 120.0);  // warm-up, dropped
  log += TrainerPerf(1, 100.0, 40.0, 10000.0, 140.0);
  log += TrainerPerf(2, 110.0, 40.0, 10000.0, 150.0);
  log += TrainerPerf(3, 120.0, 40.0, 10000.0, 160.0);
  Recipe recipe = Qwen3Recipe();  // 4 actor GPUs + 4 rollout GPUs, disaggregated
  REQUIRE(TotalGpus(recipe) == 8);
  auto m = TheStack().Measure(TheStack().ParseLog(log), recipe);
  REQUIRE(m.ok());
  CHECK(m->iterations_logged == 4);
  CHECK(m->iterations_used == 3);
  CHECK(m->step_time_s == Approx(112.0));  // median of 102, 112, 122
  // 10000 tok/s x 40 s = 400000 trained tokens per rollout, over 112 s and 8 GPUs.
  CHECK(m->tokens_per_s_per_gpu == Approx(400000.0 / 112.0 / 8.0));
  CHECK(*m->tflops_per_gpu == Approx(150.0));

  // The engine requests, reserves and charges the same GPUs (Stack::Devices).
  CHECK(TheStack().Devices(recipe) == 8);
  Recipe colocated = With(With(recipe, "--colocate", ""), "--rollout-num-gpus", std::nullopt);
  CHECK(TotalGpus(colocated) == 4);
  CHECK(TheStack().Devices(colocated) == 4);
  auto mc = TheStack().Measure(TheStack().ParseLog(log), colocated);
  REQUIRE(mc.ok());
  CHECK(mc->tokens_per_s_per_gpu == Approx(400000.0 / 112.0 / 4.0));
}

TEST_CASE("measurement fails clearly without a trainer perf line", "[slime][measure]") {
  auto m = TheStack().Measure(TheStack().ParseLog(SharedLog("slime_perf_002.log")), Qwen3Recipe());
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().message().find("perf N:") != std::string::npos);
}

TEST_CASE("a rollout-bound run is diagnosed from perf/wait_time_ratio", "[slime][diagnose]") {
  std::string log = TrainerPerf(1, 100.0, 20.0, 10000.0, 140.0) + TrainerPerf(2, 100.0, 20.0, 10000.0, 140.0);
  auto parse = TheStack().ParseLog(log);
  auto m = TheStack().Measure(parse, Qwen3Recipe());
  REQUIRE(m.ok());
  auto d = TheStack().Diagnose(Qwen3Recipe(), *m, parse, ClusterInfo{});
  REQUIRE_FALSE(d.empty());
  CHECK(d[0].kind == "compute_bound");
  CHECK(d[0].evidence.find("rollout-bound") != std::string::npos);
}
