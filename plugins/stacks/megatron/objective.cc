#include "objective.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "recipe_view.h"

namespace attune::megatron {
namespace {

const ObjectiveRule* FindRule(const std::vector<ObjectiveRule>& rules, const std::string& key) {
  for (const auto& rule : rules) {
    if (std::find(rule.keys.begin(), rule.keys.end(), key) != rule.keys.end()) return &rule;
  }
  return nullptr;
}

const LeverSpec* FindLever(const Knowledge& k, const std::string& key) {
  for (const auto& spec : k.levers) {
    const auto& keys = spec.lever.keys;
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return &spec;
  }
  return nullptr;
}

bool InWhenChanged(const Knowledge& k, const std::string& key) {
  for (const auto& rule : k.objective.conditional) {
    const auto& keys = rule.when_changed;
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return true;
  }
  return false;
}

std::vector<double> Numbers(const std::string& value) {
  std::vector<double> out;
  std::istringstream in(value);
  std::string word;
  while (in >> word) {
    try {
      out.push_back(std::stod(word));
    } catch (...) {
      // A non-number never satisfies a numeric condition.
    }
  }
  return out;
}

bool Holds(const Condition& c, const Recipe& r, const Recipe& base, const Recipe& cand);

bool HoldsValue(const Condition& c, const Recipe& r) {
  auto v = GetValue(r, c.key);
  if (!v) v = c.default_value;
  if (!v) return false;
  if (c.op == Condition::Op::kValueIn) {
    return std::find(c.values.begin(), c.values.end(), *v) != c.values.end();
  }
  auto numbers = Numbers(*v);
  return std::any_of(numbers.begin(), numbers.end(), [&](double n) { return n > c.number; });
}

bool PaddedVocabChanges(const Recipe& base, const Recipe& cand) {
  auto a = PaddedVocab(base);
  auto b = PaddedVocab(cand);
  // Unknown vocabulary: the padding cannot be shown to stay the same, so it fails closed.
  return !a || !b || *a != *b;
}

bool Holds(const Condition& c, const Recipe& r, const Recipe& base, const Recipe& cand) {
  using Op = Condition::Op;
  switch (c.op) {
    case Op::kPresent: return GetValue(r, c.key).has_value();
    case Op::kAbsent: return !GetValue(r, c.key).has_value();
    case Op::kValueIn:
    case Op::kNumberGt: return HoldsValue(c, r);
    case Op::kAll:
      return std::all_of(c.children.begin(), c.children.end(),
                         [&](const Condition& x) { return Holds(x, r, base, cand); });
    case Op::kAny:
      return std::any_of(c.children.begin(), c.children.end(),
                         [&](const Condition& x) { return Holds(x, r, base, cand); });
    case Op::kNot: return c.children.empty() || !Holds(c.children[0], r, base, cand);
    case Op::kDerived: return PaddedVocabChanges(base, cand);
  }
  return true;
}

std::string ShowValue(const std::optional<std::string>& v) {
  if (!v) return "(absent)";
  return v->empty() ? "(set)" : "'" + *v + "'";
}

GateVerdict Refuse(std::string rule_id, std::string reason) {
  GateVerdict v;
  v.pass = false;
  v.rule_id = std::move(rule_id);
  v.reason = std::move(reason);
  return v;
}

// The changed keys plus derived pseudo-keys ("derived:data_parallel_size").
std::set<std::string> ChangedKeys(const std::vector<Change>& diff, const Recipe& base,
                                  const Recipe& cand) {
  std::set<std::string> keys;
  for (const auto& c : diff) keys.insert(c.key);
  if (ReadView(base).dp != ReadView(cand).dp) keys.insert("derived:data_parallel_size");
  return keys;
}

std::optional<GateVerdict> CheckConditionals(const Knowledge& k, const std::set<std::string>& changed,
                                             const Recipe& base, const Recipe& cand) {
  for (const auto& rule : k.objective.conditional) {
    std::string trigger;
    for (const auto& key : rule.when_changed) {
      if (changed.count(key)) trigger = key;
    }
    if (trigger.empty()) continue;
    // Checked on both sides: a condition that holds on either one refuses (fail closed).
    if (Holds(rule.refuse_if, base, base, cand) || Holds(rule.refuse_if, cand, base, cand)) {
      return Refuse(rule.id, trigger + " changed while " + ConditionToJson(rule.refuse_if).dump() +
                                 " holds: " + rule.reason + (rule.fix.empty() ? "" : "; fix: " + rule.fix));
    }
  }
  return std::nullopt;
}

double ToleranceFor(const Knowledge& k, const LeverSpec* spec) {
  const auto& o = k.objective;
  if (!spec) return o.tolerance_default;
  std::string cls = spec->loss_tolerance;
  if (cls.empty()) cls = spec->lever.changes_rng ? "changes_rng" : "default";
  if (cls == "changes_rng") return o.tolerance_changes_rng;
  if (cls == "numerics") return o.tolerance_numerics;
  return o.tolerance_default;
}

}  // namespace

GateVerdict CheckObjectiveRules(const Knowledge& k, const Recipe& baseline,
                                const Recipe& candidate) {
  if (baseline.entry != candidate.entry) {
    return Refuse("obj.entry_point", "the entry point changed; a different program trains a different model");
  }
  auto diff = Diff(baseline, candidate);
  double tolerance = k.objective.tolerance_default;
  for (const auto& change : diff) {
    std::string values = ShowValue(change.from) + " -> " + ShowValue(change.to);
    if (const ObjectiveRule* rule = FindRule(k.objective.objective, change.key)) {
      return Refuse(rule->id, change.key + " changed " + values + ": " + rule->reason);
    }
    const LeverSpec* lever = FindLever(k, change.key);
    bool known = lever || FindRule(k.objective.neutral, change.key) ||
                 std::count(k.objective.topology.keys.begin(), k.objective.topology.keys.end(), change.key) ||
                 InWhenChanged(k, change.key);
    if (!known) {
      return Refuse("fail_closed.unknown_key",
                    change.key + " changed " + values +
                        ": it is neither a lever nor in objective.yaml, so the gate cannot tell "
                        "whether it changes the objective; add it to stacks/megatron/objective.yaml "
                        "(objective, conditional or neutral) or to levers.yaml");
    }
    if (lever) tolerance = std::max(tolerance, ToleranceFor(k, lever));
  }
  if (auto refused = CheckConditionals(k, ChangedKeys(diff, baseline, candidate), baseline, candidate)) {
    return *refused;
  }
  GateVerdict ok;
  ok.pass = true;
  ok.rule_id = "ok";
  ok.reason = diff.empty() ? "no change" : "only levers and neutral keys changed: " + DescribeChanges(diff);
  ok.loss_rel_tolerance = tolerance;
  return ok;
}

}  // namespace attune::megatron
