#include "rules.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "objective.h"

namespace attune::slime {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool InRules(const std::vector<megatron::ObjectiveRule>& rules, const std::string& key) {
  for (const auto& r : rules) {
    if (std::find(r.keys.begin(), r.keys.end(), key) != r.keys.end()) return true;
  }
  return false;
}

std::optional<double> Number(const Recipe& r, const std::string& key) {
  auto v = GetValue(r, key);
  if (!v || v->empty()) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (end == v->c_str() || *end != '\0') return std::nullopt;
  return d;
}

bool Has(const Recipe& r, const std::string& key) { return GetValue(r, key).has_value(); }

std::string ScriptName(const Recipe& r) {
  if (r.entry.empty()) return "";
  const std::string& s = r.entry.back();
  size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

// The baseline with only the changes `take` selects applied.
Recipe ApplySome(const Recipe& baseline, const std::vector<Change>& changes, bool slime_side,
                 const megatron::Knowledge& slime, bool* any) {
  Recipe out = baseline;
  *any = false;
  for (const auto& c : changes) {
    if (SlimeOwnsKey(slime, c.key) != slime_side) continue;
    if (SetValue(&out, c.key, c.to).ok()) *any = true;
  }
  return out;
}

}  // namespace

bool SlimeOwnsKey(const megatron::Knowledge& slime, const std::string& key) {
  for (const char* family : {"--sglang-", "--rollout-", "--update-weight", "--offload"}) {
    if (StartsWith(key, family)) return true;
  }
  for (const auto& spec : slime.levers) {
    if (std::find(spec.lever.keys.begin(), spec.lever.keys.end(), key) != spec.lever.keys.end()) return true;
  }
  if (InRules(slime.objective.objective, key) || InRules(slime.objective.neutral, key)) return true;
  for (const auto& c : slime.objective.conditional) {
    if (std::find(c.when_changed.begin(), c.when_changed.end(), key) != c.when_changed.end()) return true;
  }
  return false;
}

GateVerdict CheckSlimeObjective(const megatron::Knowledge& slime, const Stack& megatron_gate,
                                const Recipe& baseline, const Recipe& candidate) {
  // Megatron's rules read the entry and stack only for context; both sides see the same baseline.
  std::vector<Change> changes = Diff(baseline, candidate);
  bool slime_any = false, megatron_any = false;
  Recipe slime_part = ApplySome(baseline, changes, true, slime, &slime_any);
  Recipe megatron_part = ApplySome(baseline, changes, false, slime, &megatron_any);
  GateVerdict pass;
  pass.pass = true;
  pass.rule_id = "ok";
  pass.reason = "no change to the objective";
  pass.loss_rel_tolerance = slime.objective.tolerance_default;
  for (bool slime_side : {true, false}) {
    if (slime_side ? !slime_any : !megatron_any) continue;
    GateVerdict v = slime_side ? megatron::CheckObjectiveRules(slime, baseline, slime_part)
                               : megatron_gate.CheckObjective(baseline, megatron_part);
    if (!v.pass) {
      if (!slime_side) v.reason = "(Megatron flag) " + v.reason;
      return v;
    }
    pass.loss_rel_tolerance = std::max(pass.loss_rel_tolerance, v.loss_rel_tolerance);
    pass.reason = "every changed key is a throughput lever or neutral";
  }
  return pass;
}

std::vector<SlimeViolation> SlimeViolations(const Recipe& r) {
  std::vector<SlimeViolation> out;
  bool colocate = Has(r, "--colocate");
  if (colocate && ScriptName(r) == "train_async.py") {
    out.push_back({"slime.colocate_async", "--colocate is set but the entry is train_async.py, which does not "
                                           "allow it; use train.py or drop --colocate"});
  }
  if (Has(r, "--use-dynamic-batch-size") && !Has(r, "--max-tokens-per-gpu")) {
    out.push_back({"slime.dynamic_needs_max_tokens", "--use-dynamic-batch-size needs --max-tokens-per-gpu; "
                                                     "set it (e.g. 9216) or drop dynamic batching"});
  }
  if (auto f = Number(r, "--sglang-mem-fraction-static"); f && (*f <= 0 || *f >= 1)) {
    out.push_back({"slime.mem_fraction_range", "--sglang-mem-fraction-static " + *GetValue(r, "--sglang-mem-fraction-static") +
                                               " is outside (0, 1); use about 0.7-0.8 when colocated"});
  }
  auto rollout = Number(r, "--rollout-num-gpus");
  auto per_engine = Number(r, "--rollout-num-gpus-per-engine");
  if (rollout && per_engine && *per_engine > 0 &&
      static_cast<long>(*rollout) % static_cast<long>(*per_engine) != 0) {
    out.push_back({"slime.engines_split", "--rollout-num-gpus " + *GetValue(r, "--rollout-num-gpus") +
                                          " is not a multiple of --rollout-num-gpus-per-engine " +
                                          *GetValue(r, "--rollout-num-gpus-per-engine") + "; make it one"});
  }
  if (!colocate && !Has(r, "--debug-train-only") && !rollout) {
    out.push_back({"slime.rollout_gpus_required", "a disaggregated run (no --colocate) needs --rollout-num-gpus "
                                                  "(slime's default is None and the RolloutManager dies); set it "
                                                  "or add --colocate"});
  }
  if (GetValue(r, "--update-weight-mode") == std::optional<std::string>("delta")) {
    if (colocate || GetValue(r, "--update-weight-transport") != std::optional<std::string>("disk")) {
      out.push_back({"slime.delta_weights", "--update-weight-mode delta needs --update-weight-transport disk and "
                                            "no --colocate; use --update-weight-mode full"});
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> SlimeConstraintCatalog() {
  return {
      {"slime.colocate_async", "train_async.py does not allow --colocate"},
      {"slime.dynamic_needs_max_tokens", "--use-dynamic-batch-size needs --max-tokens-per-gpu"},
      {"slime.mem_fraction_range", "0 < --sglang-mem-fraction-static < 1"},
      {"slime.engines_split", "--rollout-num-gpus is a multiple of --rollout-num-gpus-per-engine"},
      {"slime.rollout_gpus_required", "without --colocate, --rollout-num-gpus is set"},
      {"slime.delta_weights",
       "--update-weight-mode delta needs --update-weight-transport disk, no --colocate"},
      {"args.known",
       "every flag of train.py / train_async.py is slime's (stacks/slime/arguments.txt, with the "
       "--sglang-* and --router-* families) or Megatron-LM's (stacks/megatron/arguments.txt), "
       "or declared in the stack's extra_arguments option: slime drops any other silently"}};
}

Recipe WithSlimeForcedArgs(Recipe recipe) {
  if (!GetValue(recipe, "--micro-batch-size")) (void)SetValue(&recipe, "--micro-batch-size", "1");
  (void)SetValue(&recipe, "--use-distributed-optimizer", "");
  auto dispatcher = GetValue(recipe, "--moe-token-dispatcher-type");
  if (!dispatcher || *dispatcher == "allgather") (void)SetValue(&recipe, "--moe-token-dispatcher-type", "alltoall");
  return recipe;
}

}  // namespace attune::slime
