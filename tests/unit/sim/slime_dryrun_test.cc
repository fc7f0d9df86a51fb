// A slime recipe through the sim launcher: the slime stack maps it (the training side through its
// Megatron stack, the rollout phase from slime's flags), the launcher models generation, training
// and weight update, the stack renders slime's Ray driver log, and the stack's own parser,
// measurement and triage read that log back.
#include <catch2/catch.hpp>

#include <cmath>

#include "attune/recipe.h"
#include "hardware.h"
#include "job_sim.h"
#include "memory_model.h"
#include "rollout_model.h"
#include "sim_test_util.h"

namespace attune::sim {
namespace {

const Stack& Slime() { return *testing::SlimeStackForSim(); }

using Changes = std::initializer_list<std::pair<std::string, std::optional<std::string>>>;

// The shipped Qwen3-4B GRPO recipe (4 GPUs train, 4 generate in two TP-2 engines), 5 rollouts.
Recipe Qwen3(Changes changes = {}) {
  auto r = LoadRecipeFile(std::string(ATTUNE_SOURCE_DIR) + "/workflows/examples/recipes/slime-qwen3-4b.yaml");
  REQUIRE(r.ok());
  REQUIRE(SetValue(&*r, "--num-rollout", "5").ok());
  for (const auto& [key, value] : changes) REQUIRE(SetValue(&*r, key, value).ok());
  return *r;
}

// The same model on all 8 GPUs, generation and training taking turns.
Recipe Qwen3Colocated(Changes changes = {}) {
  Recipe r = Qwen3({{"--colocate", ""}, {"--rollout-num-gpus", std::nullopt},
                    {"--actor-num-gpus-per-node", "8"}, {"--sglang-mem-fraction-static", "0.7"}});
  r.topology = {1, 8, "H100"};
  for (const auto& [key, value] : changes) REQUIRE(SetValue(&r, key, value).ok());
  return r;
}

ClusterSpec Cluster(double noise_cv = 0) {
  auto c = ParseClusterConfig({{"gpu", "H100"}, {"noise_cv", noise_cv}}, 3);
  REQUIRE(c.ok());
  return *c;
}

ParallelPlan PlanOf(const Recipe& r) {
  auto plan = Slime().SimulationPlan(r, ToClusterInfo(Cluster()), Slime().Devices(r));
  REQUIRE(plan.ok());
  return *plan;
}

JobOutcome Simulate(const Recipe& r, const std::string& name, const ClusterSpec& cluster = Cluster()) {
  auto outcome = SimulateJob(testing::Spec(name, r, "/nonexistent"), cluster, 0);
  INFO((outcome.ok() ? std::string() : outcome.status().ToString()));
  REQUIRE(outcome.ok());
  return *outcome;
}

double Extra(const IterationSample& s, const std::string& key) {
  auto it = s.extra.find(key);
  return it == s.extra.end() ? -1 : it->second;
}

std::vector<const IterationSample*> Rollouts(const LogParse& parse) {
  std::vector<const IterationSample*> out;
  for (const auto& s : parse.iterations) {
    if (!s.extra.count("slime/train_step")) out.push_back(&s);
  }
  return out;
}

TEST_CASE("a slime recipe maps to Megatron training on its actors plus a rollout phase", "[sim][slime]") {
  ParallelPlan p = PlanOf(Qwen3());
  CHECK_FALSE(p.refusal.has_value());
  CHECK(p.par.world == 4);  // the actors; the 4 rollout GPUs are the engines'
  CHECK((p.par.tp == 2 && p.par.dp == 2));
  CHECK(p.feat.sequence_parallel);
  CHECK(p.feat.recompute == Recompute::kFull);
  CHECK(p.par.global_batch == 256);  // samples per optimizer step
  CHECK(p.model.seq_length == 256 + 4096);  // assumed mean prompt + half the response cap
  // Dynamic batching: 9216 tokens per GPU hold two 4352-token samples.
  CHECK(p.par.micro_batch == 2);
  const RolloutPlan& r = p.rollout;
  CHECK((r.prompts == 32 && r.samples_per_prompt == 8 && r.Samples() == 256));
  CHECK((r.gpus == 4 && r.gpus_per_engine == 2));
  CHECK(r.mem_fraction == Approx(0.7));
  CHECK(r.max_concurrency == 512);
  CHECK((r.max_response_tokens == 8192 && r.response_tokens == 4096 && r.prompt_tokens == 256));
  CHECK((!r.colocated && !r.overlapped && r.train_steps == 1));
  CHECK(p.run.IterationsToRun() == 5);

  ParallelPlan steps = PlanOf(Qwen3({{"--global-batch-size", std::nullopt}, {"--num-steps-per-rollout", "4"}}));
  CHECK((steps.par.global_batch == 64 && steps.rollout.train_steps == 4));
  ParallelPlan colocated = PlanOf(Qwen3Colocated());
  CHECK((colocated.rollout.colocated && colocated.rollout.gpus == 8 && colocated.par.world == 8));
  Recipe async_recipe = Qwen3();
  async_recipe.entry = {"python3", "train_async.py"};
  CHECK(PlanOf(async_recipe).rollout.overlapped);
}

TEST_CASE("slime's objective key ignores placement and speed levers and follows the RL objective", "[sim][slime]") {
  const std::string base = PlanOf(Qwen3()).objective_key;
  CHECK(base.find("--rollout-batch-size=32") != std::string::npos);
  for (const Recipe& lever : {Qwen3Colocated(), Qwen3({{"--rollout-num-gpus-per-engine", "4"}}),
                              Qwen3({{"--sglang-mem-fraction-static", "0.8"}}),
                              Qwen3({{"--tensor-model-parallel-size", "1"}, {"--sequence-parallel", std::nullopt}}),
                              Qwen3({{"--max-tokens-per-gpu", "16384"}}),
                              Qwen3({{"--sglang-server-concurrency", "64"}})}) {
    CHECK(PlanOf(lever).objective_key == base);
  }
  CHECK(PlanOf(Qwen3({{"--rollout-batch-size", "64"}})).objective_key != base);
  CHECK(PlanOf(Qwen3({{"--n-samples-per-prompt", "16"}})).objective_key != base);
  CHECK(PlanOf(Qwen3({{"--lr", "2e-6"}})).objective_key != base);
  CHECK(PlanOf(Qwen3({{"--eps-clip-high", "0.3"}})).objective_key != base);
  Recipe async = Qwen3();
  async.entry = {"python3", "train_async.py"};
  CHECK(PlanOf(async).objective_key != base);  // one-step-off-policy samples
}

TEST_CASE("slime's parser and Measure read the simulated log as the model timed it", "[sim][slime]") {
  const Recipe r = Qwen3();
  JobOutcome o = Simulate(r, "slime-1");
  INFO(o.log.substr(0, 4000));
  REQUIRE(o.state == JobState::kSucceeded);
  LogParse parse = Slime().ParseLog(o.log);
  auto rollouts = Rollouts(parse);
  REQUIRE(rollouts.size() == 5);
  CHECK(parse.iterations.size() == 10);  // 5 rollout records + 5 train steps (one per rollout)
  auto m = Slime().Measure(parse, r);
  REQUIRE(m.ok());
  CHECK(m->iterations_used == 4);  // the first rollout is dropped
  // Without noise, a steady rollout is the model's iteration to within rounding of the log.
  CHECK(m->step_time_s == Approx(o.step_time_s).epsilon(0.005));
  // Trained tokens (256 samples of 4352) per step per GPU of the job (4 + 4).
  CHECK(m->tokens_per_s_per_gpu == Approx(256.0 * 4352 / o.step_time_s / 8).epsilon(0.005));
  REQUIRE(m->tflops_per_gpu.has_value());
  CHECK(*m->tflops_per_gpu > 50);
  CHECK(*m->tflops_per_gpu < 989);
  // The split: generation dominates a disaggregated 4-engine-GPU run of 8k-token responses.
  const IterationSample& third = *rollouts[2];
  double rollout = Extra(third, "perf/train_wait_time"), train = Extra(third, "perf/train_time");
  double update = Extra(third, "perf/update_weights_time");
  CHECK(rollout > train);
  CHECK(update > 0);
  CHECK(rollout + train + update == Approx(o.step_time_s).epsilon(0.005));
  // The trainer's `train` timer holds the reference model's log-prob pass (--use-kl-loss) and the
  // optimizer step.
  CHECK(train == Approx(Extra(third, "perf/ref_log_probs_time") + Extra(third, "perf/actor_train_time")).epsilon(0.001));
  CHECK(Extra(third, "perf/rollout_time") == Approx(rollout));
  CHECK(Extra(third, "perf/wait_time_ratio") == Approx(rollout / (rollout + train)));
  CHECK(m->first_losses.size() == 5);
  // A lever leaves the losses as they were; an objective change moves them.
  LogParse engines = Slime().ParseLog(Simulate(Qwen3({{"--rollout-num-gpus-per-engine", "4"}}), "slime-2").log);
  LogParse lr = Slime().ParseLog(Simulate(Qwen3({{"--lr", "3e-6"}}), "slime-3").log);
  auto m_engines = Slime().Measure(engines, r);
  auto m_lr = Slime().Measure(lr, r);
  REQUIRE((m_engines.ok() && m_lr.ok()));
  CHECK(m_engines->first_losses == m->first_losses);
  CHECK(m_lr->first_losses != m->first_losses);
}

TEST_CASE("the log-probability passes slime makes before training are planned and timed", "[sim][slime]") {
  // --use-kl-loss: the reference model's pass. One step per rollout with the policy loss and no KL
  // reward term: the loss reuses its own forward's log-probs, so no old-policy pass.
  RolloutPlan base = PlanOf(Qwen3()).rollout;
  CHECK((base.reference_logprobs && !base.actor_logprobs && base.LogProbPasses() == 1));
  // Four steps per rollout: the old policy's log-probs must be taken before the first changes it.
  Changes four_steps = {{"--global-batch-size", std::nullopt}, {"--num-steps-per-rollout", "4"}};
  CHECK(PlanOf(Qwen3(four_steps)).rollout.LogProbPasses() == 2);
  // ... unless the rollout engine's log-probs stand in, and then again when compared with them.
  Recipe engine = Qwen3(four_steps);
  REQUIRE(SetValue(&engine, "--use-rollout-logprobs", "").ok());
  CHECK_FALSE(PlanOf(engine).rollout.actor_logprobs);
  REQUIRE(SetValue(&engine, "--get-mismatch-metrics", "").ok());
  CHECK(PlanOf(engine).rollout.actor_logprobs);
  // No KL at all: no reference model; a KL reward term (--kl-coef) brings it back and rules out
  // the reuse.
  RolloutPlan none = PlanOf(Qwen3({{"--use-kl-loss", std::nullopt}})).rollout;
  CHECK(none.LogProbPasses() == 0);
  RolloutPlan reward_kl = PlanOf(Qwen3({{"--use-kl-loss", std::nullopt}, {"--kl-coef", "0.05"}})).rollout;
  CHECK((reward_kl.reference_logprobs && reward_kl.actor_logprobs));
  CHECK(PlanOf(Qwen3({{"--advantage-estimator", "gspo"}})).rollout.actor_logprobs);

  // Each pass is a forward over the step's samples: about a third of the step's compute.
  JobOutcome two = Simulate(Qwen3(four_steps), "slime-logprobs");
  JobOutcome zero = Simulate(Qwen3({{"--use-kl-loss", std::nullopt}, {"--global-batch-size", std::nullopt},
                                    {"--num-steps-per-rollout", "4"}, {"--use-rollout-logprobs", ""}}),
                             "slime-no-logprobs");
  REQUIRE((two.state == JobState::kSucceeded && zero.state == JobState::kSucceeded));
  IterationSample a = *Rollouts(Slime().ParseLog(two.log))[2];
  IterationSample b = *Rollouts(Slime().ParseLog(zero.log))[2];
  const double pass = Extra(a, "perf/log_probs_time"), actor_train = Extra(a, "perf/actor_train_time");
  CHECK(Extra(a, "perf/ref_log_probs_time") == Approx(pass));
  CHECK(pass > 0.15 * actor_train);
  CHECK(pass < 0.5 * actor_train);
  CHECK(Extra(a, "perf/train_time") == Approx(2 * pass + actor_train).epsilon(0.001));
  CHECK(Extra(b, "perf/log_probs_time") == -1);  // not reported: no pass ran
  CHECK(Extra(b, "perf/train_time") == Approx(Extra(b, "perf/actor_train_time")).epsilon(0.001));
  CHECK(two.step_time_s > zero.step_time_s);
}

TEST_CASE("the weight update's bucket is slime's --update-weight-buffer-size", "[sim][slime]") {
  CHECK(PlanOf(Qwen3()).rollout.update_buffer_bytes == Approx(512.0 * 1024 * 1024));
  ParallelPlan small = PlanOf(Qwen3({{"--update-weight-buffer-size", "268435456"}}));
  ParallelPlan large = PlanOf(Qwen3({{"--update-weight-buffer-size", "2147483648"}}));
  CHECK(large.rollout.update_buffer_bytes == Approx(2147483648.0));
  ClusterSpec c = Cluster();
  // Fewer, larger buckets: fewer gathers and hand-offs for the same bytes.
  CHECK(EstimateRollout(large, c, 4e9, 10e9).weight_update_s < EstimateRollout(small, c, 4e9, 10e9).weight_update_s);
  // The buffer is a throughput lever: the objective stays.
  CHECK(large.objective_key == small.objective_key);
}

TEST_CASE("colocated generation hands the GPUs over; disaggregated generation broadcasts", "[sim][slime]") {
  JobOutcome split = Simulate(Qwen3(), "slime-split");
  JobOutcome shared = Simulate(Qwen3Colocated(), "slime-colocated");
  REQUIRE((split.state == JobState::kSucceeded && shared.state == JobState::kSucceeded));
  auto third = [](const JobOutcome& o) { return *Rollouts(Slime().ParseLog(o.log))[2]; };
  IterationSample a = third(split), b = third(shared);
  // The colocated update offloads and onloads the training state besides copying the weights.
  CHECK(Extra(b, "perf/update_weights_time") > 2 * Extra(a, "perf/update_weights_time"));
  // Twice the engines generate the same rollout faster; twice the actors train it faster.
  CHECK(Extra(b, "perf/train_wait_time") < Extra(a, "perf/train_wait_time"));
  CHECK(Extra(b, "perf/actor_train_time") < Extra(a, "perf/actor_train_time"));

  // The model itself: what the training side keeps resident shrinks a colocated engine's KV cache.
  ParallelPlan p = PlanOf(Qwen3Colocated());
  ClusterSpec c = Cluster();
  RolloutEstimate with = EstimateRollout(p, c, 4e9, 10e9);
  p.rollout.colocated = false;
  RolloutEstimate without = EstimateRollout(p, c, 4e9, 10e9);
  CHECK(with.engine.kv_cache_tokens < without.engine.kv_cache_tokens);
  CHECK(with.weight_update_s > without.weight_update_s);
}

TEST_CASE("an engine's all-reduces cost more with more peers and more bytes", "[sim][slime]") {
  const ClusterSpec c = Cluster();
  CHECK(EngineAllReduceS(c, 1, 1e6) == 0);
  const double small = 4096 * 2.0;  // one token's hidden state
  CHECK(EngineAllReduceS(c, 8, small) > EngineAllReduceS(c, 2, small));
  // A batch of 512 requests moves 512x the bytes: the bus bandwidth, not the latency, decides.
  const double batch = 512 * small;
  CHECK(EngineAllReduceS(c, 8, batch) > 2 * EngineAllReduceS(c, 8, small));
  CHECK(EngineAllReduceS(c, 8, 2 * batch) - EngineAllReduceS(c, 8, batch) ==
        Approx(2.0 * 7 / 8 * batch / c.NvlinkBusBytesPerS()));
  // Through the rollout: a TP-4 engine's decode step carries its two all-reduces per layer.
  ParallelPlan p = PlanOf(Qwen3());
  p.rollout.gpus = 4;
  p.rollout.gpus_per_engine = 1;
  const RolloutEstimate tp1 = EstimateRollout(p, c, 0, 0);
  p.rollout.gpus_per_engine = 4;
  const RolloutEstimate tp4 = EstimateRollout(p, c, 0, 0);
  REQUIRE((tp1.engine.fits && tp4.engine.fits));
  const double layers = static_cast<double>(p.model.layers);
  // A single request's step on one GPU has no all-reduce; on four it has two per layer.
  CHECK(tp4.tail_step_s > 2 * layers * EngineAllReduceS(c, 4, p.model.hidden * 2.0) + 1e-3);
}

TEST_CASE("train_async.py hides generation behind training", "[sim][slime]") {
  Recipe async = Qwen3();
  async.entry = {"python3", "train_async.py"};
  JobOutcome sync = Simulate(Qwen3(), "slime-sync");
  JobOutcome overlapped = Simulate(async, "slime-async");
  REQUIRE(overlapped.state == JobState::kSucceeded);
  CHECK(overlapped.step_time_s < sync.step_time_s);
  IterationSample third = *Rollouts(Slime().ParseLog(overlapped.log))[2];
  IterationSample sync_third = *Rollouts(Slime().ParseLog(sync.log))[2];
  CHECK(Extra(third, "perf/wait_time_ratio") < Extra(sync_third, "perf/wait_time_ratio"));
}

TEST_CASE("slime's refusals fail the job with slime's text and triage as configuration errors", "[sim][slime]") {
  Recipe async = Qwen3Colocated();
  async.entry = {"python3", "train_async.py"};
  JobOutcome refused = Simulate(async, "slime-bad-1");
  CHECK(refused.state == JobState::kFailed);
  CHECK(refused.log.find("AssertionError: Colocation is not supported for async training.") != std::string::npos);
  Failure f = Slime().Triage(refused.log, {1, "failed", 20});
  CHECK(f.kind == FailureKind::kConfigError);

  JobOutcome dynamic = Simulate(Qwen3({{"--max-tokens-per-gpu", std::nullopt}}), "slime-bad-2");
  CHECK(dynamic.log.find("max_tokens_per_gpu must be set when use_dynamic_batch_size is set") != std::string::npos);
  CHECK(Slime().Triage(dynamic.log, {1, "failed", 20}).kind == FailureKind::kConfigError);

  // Megatron's own checks still refuse the training side (world 4 over TP 3).
  JobOutcome megatron = Simulate(Qwen3({{"--tensor-model-parallel-size", "3"}}), "slime-bad-3");
  CHECK(megatron.state == JobState::kFailed);
  CHECK(Slime().Triage(megatron.log, {1, "failed", 20}).kind == FailureKind::kConfigError);

  // The static micro-batch path needs the step to split over DP x micro-batch.
  JobOutcome statics = Simulate(Qwen3({{"--use-dynamic-batch-size", std::nullopt}, {"--global-batch-size", "255"},
                                       {"--rollout-batch-size", "255"}, {"--n-samples-per-prompt", "1"}}),
                                "slime-bad-4");
  CHECK(statics.log.find("static path: num_mbs (255)") != std::string::npos);
  CHECK(Slime().Triage(statics.log, {1, "failed", 20}).kind == FailureKind::kConfigError);
}

TEST_CASE("a rollout engine that cannot hold its weights and a KV cache triages as out of memory", "[sim][slime]") {
  // 4B parameters in BF16 over a TP-2 engine are 4 GB per GPU; 4% of 80 GB is less.
  JobOutcome o = Simulate(Qwen3({{"--sglang-mem-fraction-static", "0.04"}}), "slime-oom-1");
  CHECK(o.state == JobState::kFailed);
  CHECK(o.log.find("Not enough memory. Please try to increase --mem-fraction-static") != std::string::npos);
  Failure f = Slime().Triage(o.log, {1, "failed", 60});
  CHECK(f.kind == FailureKind::kOom);
  CHECK(f.signature == "sglang_not_enough_memory");
  // 8% fits the weights and a small KV cache: it runs, with fewer requests in flight.
  JobOutcome small = Simulate(Qwen3({{"--sglang-mem-fraction-static", "0.08"}}), "slime-small-kv");
  CHECK(small.state == JobState::kSucceeded);
  CHECK(small.step_time_s > Simulate(Qwen3(), "slime-base").step_time_s);
}

TEST_CASE("the workflow's sim options replace slime's assumed prompt and response lengths", "[sim][slime]") {
  auto c = ParseClusterConfig({{"gpu", "H100"}, {"noise_cv", 0}, {"rollout", {{"response_tokens", 1024}}}}, 3);
  REQUIRE(c.ok());
  JobOutcome shorter = Simulate(Qwen3(), "slime-short", *c);
  JobOutcome base = Simulate(Qwen3(), "slime-long");
  REQUIRE(shorter.state == JobState::kSucceeded);
  CHECK(shorter.step_time_s < base.step_time_s);
  auto m = Slime().Measure(Slime().ParseLog(shorter.log), Qwen3());
  REQUIRE(m.ok());
  CHECK(m->tokens_per_s_per_gpu == Approx(256.0 * (256 + 1024) / shorter.step_time_s / 8).epsilon(0.005));
  CHECK_FALSE(ParseClusterConfig({{"rollout", {{"prompt", 3}}}}, 3).ok());
}

TEST_CASE("the slime example's recipe is its launch script, imported", "[sim][slime]") {
  const std::string dir = std::string(ATTUNE_SOURCE_DIR) + "/workflows/examples/recipes/";
  std::vector<std::string> unknown;
  auto imported = Slime().ImportLaunch(testing::ReadText(dir + "slime-qwen3-4b-colocated-h100x8.sh"), &unknown);
  INFO((imported.ok() ? std::string() : imported.status().ToString()));
  REQUIRE(imported.ok());
  auto recipe = LoadRecipeFile(dir + "slime-qwen3-4b-colocated-h100x8.yaml");
  REQUIRE(recipe.ok());
  CHECK(DescribeChanges(Diff(*recipe, *imported)) == DescribeChanges({}));
  CHECK(imported->topology.WorldSize() == 8);
}

}  // namespace
}  // namespace attune::sim
