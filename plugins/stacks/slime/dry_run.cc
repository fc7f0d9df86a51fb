// Copyright attune authors.
#include "dry_run.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include "rules.h"
#include "sim_mapping.h"

namespace attune::slime {
namespace {

bool Has(const Recipe& r, const std::string& key) { return GetValue(r, key).has_value(); }

int64_t Int(const Recipe& r, const std::string& key, int64_t fallback) {
  auto v = GetValue(r, key);
  if (!v || v->empty()) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  return end != v->c_str() && *end == '\0' ? static_cast<int64_t>(n) : fallback;
}

double Real(const Recipe& r, const std::string& key, double fallback) {
  auto v = GetValue(r, key);
  if (!v || v->empty()) return fallback;
  char* end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  return end != v->c_str() && *end == '\0' ? d : fallback;
}

std::string EntryScript(const Recipe& r) {
  if (r.entry.empty()) return "train.py";
  const std::string& s = r.entry.back();
  size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

// slime's settings that shape the run, read once.
struct SlimeRun {
  int actor_gpus = 1;
  bool colocate = false, async = false, dynamic = false;
  int64_t prompts = 0, samples_per_prompt = 1, samples = 0;
  int64_t step_samples = 0;    // samples per optimizer step (slime's global batch)
  int64_t steps = 1;           // optimizer steps per rollout
  int64_t prompt = 0, response = 0, max_response = 0;
  int64_t max_tokens_per_gpu = 0;
  int64_t rollouts = 0;        // --num-rollout (0: from the data set's size, unknown)
};

SlimeRun ReadSlimeRun(const Recipe& r) {
  SlimeRun s;
  s.actor_gpus = ActorGpus(r);
  s.colocate = Has(r, "--colocate");
  s.async = EntryScript(r) == "train_async.py";
  s.dynamic = Has(r, "--use-dynamic-batch-size");
  s.prompts = Int(r, "--rollout-batch-size", 0);
  s.samples_per_prompt = std::max<int64_t>(1, Int(r, "--n-samples-per-prompt", 1));
  s.samples = s.prompts * s.samples_per_prompt;
  // --num-steps-per-rollout sets the global batch; without either, one step takes the rollout.
  int64_t steps_flag = Int(r, "--num-steps-per-rollout", 0);
  s.step_samples = Int(r, "--global-batch-size", steps_flag > 0 ? s.samples / steps_flag : s.samples);
  s.step_samples = std::max<int64_t>(1, s.step_samples);
  s.steps = std::max<int64_t>(1, s.samples / s.step_samples);  // trailing samples are dropped
  s.max_response = Int(r, "--rollout-max-response-len", kDefaultMaxResponseTokens);
  s.response = std::max<int64_t>(1, static_cast<int64_t>(std::llround(kAssumedResponseShare * s.max_response)));
  s.prompt = std::min(kAssumedPromptTokens, Int(r, "--rollout-max-prompt-len", kAssumedPromptTokens));
  s.max_tokens_per_gpu = Int(r, "--max-tokens-per-gpu", 0);
  s.rollouts = Int(r, "--num-rollout", 0);
  return s;
}

// The largest micro-batch of whole sequences within the token cap that splits a rank's share of
// the step evenly (slime's dynamic path packs to the cap and evens the count over DP ranks).
int64_t DynamicMicroBatch(int64_t per_rank, int64_t seq, int64_t cap_tokens) {
  int64_t fit = std::max<int64_t>(1, cap_tokens / std::max<int64_t>(1, seq));
  for (int64_t k = std::min(fit, per_rank); k > 1; --k) {
    if (per_rank % k == 0) return k;
  }
  return 1;
}

// The recipe as the Megatron stack reads it: slime's training sequence (prompt + response,
// rounded up so Megatron's sequence splits hold; slime packs variable lengths without them),
// the global batch of one optimizer step, and what slime forces (distributed optimizer, BF16,
// the alltoall dispatcher).
Recipe MegatronView(const Recipe& r, const SlimeRun& s, int64_t seq_rounded, int64_t global_batch) {
  Recipe out = r;
  out.topology.nodes = 1;
  out.topology.gpus_per_node = s.actor_gpus;
  (void)SetValue(&out, "--seq-length", std::to_string(seq_rounded));
  (void)SetValue(&out, "--global-batch-size", std::to_string(global_batch));
  if (s.dynamic) (void)SetValue(&out, "--micro-batch-size", "1");  // slime splits by tokens instead
  if (!Has(r, "--fp16")) (void)SetValue(&out, "--bf16", "");
  return WithSlimeForcedArgs(std::move(out));
}

sim::PlanRefusal SlimeAssert(const std::string& message, const char* file = "slime/utils/arguments.py",
                             const char* function = "slime_validate_args") {
  return {"AssertionError", message, file, function, sim::RaisedAt::kStartup};
}

// slime's own checks in the order slime runs them: slime_validate_args before Megatron's
// validate_args (`megatron_refusal`), train_async.py's assertion after parsing, the static
// micro-batch split in the first step.
std::optional<sim::PlanRefusal> SlimeRefusal(const Recipe& r, const SlimeRun& s, const sim::ParallelPlan& plan,
                                             const std::optional<sim::PlanRefusal>& megatron_refusal) {
  std::optional<sim::PlanRefusal> async_colocate;
  for (const auto& v : SlimeViolations(r)) {
    if (v.rule == "slime.colocate_async") {
      async_colocate = SlimeAssert("Colocation is not supported for async training.", "train_async.py", "train");
    } else if (v.rule == "slime.dynamic_needs_max_tokens") {
      return SlimeAssert("max_tokens_per_gpu must be set when use_dynamic_batch_size is set");
    } else {
      return SlimeAssert(v.message);  // attune's wording of a check slime makes elsewhere
    }
  }
  if (s.prompts <= 0) return SlimeAssert("--rollout-batch-size must be set (prompts per rollout)");
  if (megatron_refusal) return megatron_refusal;
  if (async_colocate) return async_colocate;
  if (!s.dynamic) {
    int64_t group = plan.par.vpp > 1 ? plan.par.pp : 1;
    int64_t mbs = std::max<int64_t>(1, plan.par.micro_batch);
    int64_t num_mbs = s.step_samples / mbs;
    int64_t dp = int64_t{plan.par.dp} * plan.par.cp;
    if (num_mbs % (dp * group) != 0 || s.step_samples % mbs != 0) {
      return sim::PlanRefusal{"AssertionError",
                              "static path: num_mbs (" + std::to_string(num_mbs) +
                                  ") is not a multiple of dp_size * mb_group (" + std::to_string(dp * group) + ")",
                              "slime/utils/dp_schedule.py", "build_dp_schedule", sim::RaisedAt::kFirstIteration};
    }
  }
  return std::nullopt;
}

std::string Str(const Recipe& r, const std::string& key, const std::string& fallback) {
  return GetValue(r, key).value_or(fallback);
}

// The forward-only log-probability passes slime's MegatronTrainRayActor.train_actor makes before
// a rollout's optimizer steps (slime 624b824a8, slime/backends/megatron_utils/actor.py):
//  - the reference model's, when the actor holds one: --kl-coef != 0 or --use-kl-loss
//    (slime/ray/placement_group.py, with_ref);
//  - the old policy's, unless --use-rollout-logprobs takes the engine's (and no
//    --get-mismatch-metrics compares them), or the policy loss can reuse the log-probs of its
//    own forward: one step per rollout, the policy loss, no KL reward term, no critic (PPO), no
//    old actor kept, no on-policy distillation, no routing replay of its own, not GSPO.
void ReadLogProbPasses(const Recipe& r, const SlimeRun& s, sim::RolloutPlan* p) {
  const double kl_coef = Real(r, "--kl-coef", 0.0);
  p->reference_logprobs = kl_coef != 0 || Has(r, "--use-kl-loss");
  const bool rollout_logprobs = Has(r, "--use-rollout-logprobs");
  const bool mismatch = Has(r, "--get-mismatch-metrics");
  const std::string estimator = Str(r, "--advantage-estimator", "grpo");
  const bool reuse = s.steps == 1 && Str(r, "--loss-type", "policy_loss") == "policy_loss" &&
                     kl_coef == 0 && !rollout_logprobs && !mismatch && estimator != "ppo" &&
                     estimator != "gspo" && !Has(r, "--keep-old-actor") && !Has(r, "--use-opd") &&
                     (!Has(r, "--use-routing-replay") || Has(r, "--use-rollout-routing-replay"));
  p->actor_logprobs = (!rollout_logprobs || mismatch) && !reuse;
}

sim::RolloutPlan ReadRolloutPlan(const Recipe& r, const SlimeRun& s) {
  sim::RolloutPlan p;
  p.prompts = s.prompts;
  p.samples_per_prompt = s.samples_per_prompt;
  p.prompt_tokens = s.prompt;
  p.response_tokens = s.response;
  p.max_response_tokens = s.max_response;
  p.colocated = s.colocate;
  p.gpus = static_cast<int>(Int(r, "--rollout-num-gpus", s.colocate ? s.actor_gpus : 0));
  p.gpus_per_engine = static_cast<int>(std::max<int64_t>(1, Int(r, "--rollout-num-gpus-per-engine", 1)));
  p.mem_fraction = Real(r, "--sglang-mem-fraction-static", kDefaultMemFraction);
  p.max_concurrency = Int(r, "--sglang-server-concurrency", kDefaultServerConcurrency);
  p.overlapped = s.async;
  p.train_steps = s.steps;
  ReadLogProbPasses(r, s, &p);
  p.update_buffer_bytes = Real(r, "--update-weight-buffer-size", p.update_buffer_bytes);
  return p;
}

}  // namespace

int ActorGpus(const Recipe& r) {
  int64_t nodes = Int(r, "--actor-num-nodes", r.topology.nodes);
  int64_t per_node = Int(r, "--actor-num-gpus-per-node", r.topology.gpus_per_node);
  return static_cast<int>(std::max<int64_t>(1, nodes * per_node));
}

std::string SlimeObjectiveKey(const Recipe& recipe, const megatron::Knowledge& slime) {
  std::map<std::string, std::string> kept;
  for (const auto& arg : recipe.args) {
    bool objective = false;
    if (SlimeOwnsKey(slime, arg.flag)) {
      for (const auto& rule : slime.objective.objective) {
        objective = objective || std::find(rule.keys.begin(), rule.keys.end(), arg.flag) != rule.keys.end();
      }
    } else {
      objective = !megatron::IsThroughputOrLoggingFlag(arg.flag);
    }
    if (!objective) continue;
    std::string value;
    for (const auto& v : arg.values) value += (value.empty() ? "" : " ") + v;
    kept[arg.flag] = value;
  }
  std::string key = "entry=" + EntryScript(recipe) + ";";
  for (const auto& [flag, value] : kept) key += flag + "=" + value + ";";
  return key;
}

Result<sim::ParallelPlan> SlimeSimulationPlan(const Recipe& recipe, const megatron::Knowledge& slime,
                                              const Stack& megatron_stack, const ClusterInfo& cluster) {
  if (Has(recipe, "--debug-train-only") || Has(recipe, "--debug-rollout-only")) {
    return Status::Unimplemented(
        "slime: a dry run models the whole RL loop (generate, train, update weights); "
        "--debug-train-only and --debug-rollout-only runs are not modelled; drop the flag to dry-run");
  }
  const SlimeRun s = ReadSlimeRun(recipe);
  const int64_t seq = s.prompt + s.response;
  const int64_t seq_rounded = (seq + 127) / 128 * 128;
  // The data-parallel size the actors will have, for the dynamic path's per-rank share.
  int64_t model_ranks = std::max<int64_t>(1, Int(recipe, "--tensor-model-parallel-size", 1) *
                                                 Int(recipe, "--pipeline-model-parallel-size", 1) *
                                                 Int(recipe, "--context-parallel-size", 1));
  // The busiest rank's share of a step in whole micro-batches: Megatron's batch check holds by
  // construction, and slime's own split check (static path) is SlimeRefusal's.
  int64_t dp = std::max<int64_t>(1, s.actor_gpus / model_ranks);
  int64_t mbs = s.dynamic ? 1 : std::max<int64_t>(1, Int(recipe, "--micro-batch-size", 1));
  int64_t per_rank = (s.step_samples + dp * mbs - 1) / (dp * mbs) * mbs;
  int64_t global = per_rank * dp;
  Recipe view = MegatronView(recipe, s, seq_rounded, global);
  ATTUNE_ASSIGN_OR_RETURN(sim::ParallelPlan plan, megatron_stack.SimulationPlan(view, cluster, s.actor_gpus));
  std::optional<sim::PlanRefusal> megatron_refusal = plan.refusal;
  plan.model.seq_length = seq;
  if (s.dynamic) {
    int64_t cap = s.max_tokens_per_gpu * std::max(1, plan.par.cp);
    plan.par.micro_batch = DynamicMicroBatch(per_rank, seq, cap);
  }
  plan.rollout = ReadRolloutPlan(recipe, s);
  plan.run.train_iters = s.rollouts;  // one iteration per rollout
  plan.run.exit_interval = 0;
  plan.run.log_interval = 1;
  plan.run.lr = Real(recipe, "--lr", 1e-6);  // slime's default learning rate
  plan.objective_key = SlimeObjectiveKey(recipe, slime);
  plan.refusal = SlimeRefusal(recipe, s, plan, megatron_refusal);
  return plan;
}

double SlimeForwardFlops(const sim::ModelShape& m, double sequences, double seq) {
  const double h = static_cast<double>(m.hidden), n = static_cast<double>(m.heads);
  const double g = static_cast<double>(m.query_groups), d = static_cast<double>(m.kv_channels);
  auto layer = [&](double ffn) {
    return 2 * seq * h * n * d + 4 * seq * h * g * d + 2 * n * seq * seq * d + 2 * seq * h * h + 6 * seq * h * ffn;
  };
  double moe_ffn = static_cast<double>(m.moe_ffn_hidden * m.topk + m.shared_expert_hidden);
  double per_seq = static_cast<double>(m.DenseLayers()) * layer(static_cast<double>(m.ffn_hidden)) +
                   static_cast<double>(m.MoeLayers()) * layer(moe_ffn) +
                   2 * seq * h * static_cast<double>(m.vocab);
  return sequences * per_seq;
}

}  // namespace attune::slime
