#include "config_view.h"

#include <string>
#include <vector>

#include "attune/support/names.h"

namespace attune::automodel {
namespace {

std::string S(long long v) { return std::to_string(v); }

Status Violation(const std::string& rule, const std::string& what) {
  return Status::InvalidArgument("[" + rule + "] " + what);
}

std::string NormaliseStrategy(const std::string& s) {
  if (s == "megatron-fsdp" || s == "mfsdp") return "megatron_fsdp";
  return s;
}

Status CheckStrategyMesh(const Mesh& m) {
  if (m.strategy == "megatron_fsdp" && (m.pp > 1 || m.ep > 1)) {
    return Violation("mfsdp.no_pp_ep", "megatron_fsdp does not support pipeline or expert "
                     "parallelism (pp_size " + S(m.pp) + ", ep_size " + S(m.ep) +
                     "); use strategy fsdp2 or set pp_size and ep_size to 1");
  }
  if (m.strategy == "ddp" && (m.tp > 1 || m.pp > 1 || m.cp > 1 || m.ep > 1)) {
    return Violation("ddp.no_model_parallel", "ddp supports no TP, PP, CP or EP (tp " + S(m.tp) +
                     ", pp " + S(m.pp) + ", cp " + S(m.cp) + ", ep " + S(m.ep) +
                     "); use strategy fsdp2 for model parallelism");
  }
  long long model = m.strategy == "megatron_fsdp" ? m.tp * m.cp : m.tp * m.cp * m.pp;
  if (model <= 0 || m.world % model != 0) {
    return Violation("mesh.world_divisible", "world_size (" + S(m.world) + ") must be divisible by "
                     "(tp_size * cp_size * pp_size) (" + S(model) + "); choose sizes whose product "
                     "divides the number of GPUs");
  }
  if (m.dp * model != m.world) {
    return Violation("mesh.dp_size", "dp_size " + S(m.dp) + " × tp·cp·pp " + S(model) +
                     " != world_size " + S(m.world) + "; remove dp_size to let it be inferred");
  }
  return Status::Ok();
}

Status CheckHsdpAndEp(const Mesh& m) {
  if (m.dp_replicate > 1) {
    if (m.strategy != "fsdp2") {
      return Violation("hsdp.fsdp2_only", "dp_replicate_size " + S(m.dp_replicate) +
                       " (HSDP) needs strategy fsdp2, not " + m.strategy);
    }
    if (m.dp % m.dp_replicate != 0 || m.dp_replicate >= m.dp) {
      return Violation("hsdp.divides_dp", "dp_size " + S(m.dp) + " must be a multiple of "
                       "dp_replicate_size " + S(m.dp_replicate) + " and larger than it");
    }
  }
  if (m.ep > 1 && (m.dp * m.cp * m.tp) % m.ep != 0) {
    return Violation("mesh.ep_divides", "non_pp_size=" + S(m.dp * m.cp * m.tp) +
                     " (dp·cp·tp) must be a multiple of ep_size=" + S(m.ep));
  }
  return Status::Ok();
}

Status CheckBatch(const ConfigView& v, const Mesh& m) {
  long long gbs = v.GetInt("step_scheduler.global_batch_size", 32);
  long long lbs = v.GetInt("step_scheduler.local_batch_size", 1);
  if (lbs < 1 || gbs % (lbs * m.dp) != 0) {
    return Violation("batch.divisible", "global_batch_size (" + S(gbs) + ") must be divisible by "
                     "local_batch_size * dp_size (" + S(lbs) + " * " + S(m.dp) +
                     "); pick a local batch size that divides " + S(gbs / std::max(1LL, m.dp)));
  }
  if (m.pp > 1) {
    if (!v.IsSet("distributed.pipeline")) {
      return Violation("pp.pipeline_block", "pp_size " + S(m.pp) + " needs a distributed.pipeline "
                       "block in the config (pipeline: {} gives the defaults)");
    }
    long long pmbs = v.GetInt("distributed.pipeline.pp_microbatch_size", 1);
    if (pmbs < 1 || lbs / pmbs < m.pp) {
      return Violation("pp.microbatches", "local_batch_size // pp_microbatch_size (" + S(lbs) +
                       " // " + S(pmbs) + ") must be >= pp_size " + S(m.pp) +
                       "; raise local_batch_size or lower pp_microbatch_size");
    }
  }
  return Status::Ok();
}

Status CheckSequenceAndCheckpointing(const ConfigView& v, const Mesh& m) {
  long long seq = v.GetInt("dataset.seq_length", 0);
  if (seq == 0) seq = v.GetInt("packed_sequence.packed_sequence_size", 0);
  if (m.cp > 1 && seq > 0 && seq % m.cp != 0) {
    return Violation("cp.seq_divisible", "the padded sequence length " + S(seq) +
                     " must be divisible by cp_size " + S(m.cp));
  }
  auto ac = v.Get("distributed.activation_checkpointing");
  if (ac && *ac == "selective" && m.strategy == "megatron_fsdp") {
    return Violation("ac.selective_strategy", "activation_checkpointing 'selective' works only with "
                     "fsdp2 or ddp, not megatron_fsdp; use true (full) instead");
  }
  return Status::Ok();
}

}  // namespace

std::optional<std::string> ConfigView::Get(const std::string& dotted) const {
  if (auto override_value = GetValue(recipe_, "--" + dotted)) {
    return override_value->empty() ? std::string("true") : *override_value;
  }
  if (auto config_value = GetValue(recipe_, "config:" + dotted)) {
    if (!config_value->empty() && config_value->front() != '{') return config_value;
  }
  if (const LeverSpec* spec = knowledge_.FindLever(dotted)) {
    if (!spec->default_value.empty()) return spec->default_value;
  }
  return std::nullopt;
}

bool ConfigView::IsSet(const std::string& dotted) const {
  if (GetValue(recipe_, "--" + dotted) || GetValue(recipe_, "config:" + dotted)) return true;
  std::string prefix = "--" + dotted + ".";
  for (const auto& arg : recipe_.args) {
    if (arg.flag.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

long long ConfigView::GetInt(const std::string& dotted, long long fallback) const {
  auto v = Get(dotted);
  if (!v || *v == "null" || *v == "None") return fallback;
  try {
    return std::stoll(*v);
  } catch (...) {
    return fallback;  // a non-number where a number belongs is reported by ValidateRecipe's callers
  }
}

bool ConfigView::GetBool(const std::string& dotted, bool fallback) const {
  auto v = Get(dotted);
  if (!v || *v == "null" || *v == "None") return fallback;  // YAML's null leaves the default
  return *v == "true" || *v == "True" || *v == "1";
}

Mesh ReadMesh(const ConfigView& v, const Topology& topology) {
  Mesh m;
  m.strategy = NormaliseStrategy(v.Get("distributed.strategy").value_or("fsdp2"));
  m.world = topology.WorldSize();
  m.tp = v.GetInt("distributed.tp_size", 1);
  m.cp = v.GetInt("distributed.cp_size", 1);
  m.pp = v.GetInt("distributed.pp_size", 1);
  m.ep = v.GetInt("distributed.ep_size", 1);
  m.dp_replicate = v.GetInt("distributed.dp_replicate_size", 1);
  long long model = m.strategy == "megatron_fsdp" ? m.tp * m.cp : m.tp * m.cp * m.pp;
  m.dp = v.GetInt("distributed.dp_size", model > 0 ? m.world / model : 1);
  return m;
}

namespace {

// The keys a recipe gives directly under `section` ("" for the top level): those of the config's
// object there, and the next part of each dotted override below it
// ("--step_scheduler.local_batch_size" gives step_scheduler, and local_batch_size under it).
std::vector<std::string> KeysUnder(const Recipe& recipe, const std::string& section) {
  std::vector<std::string> keys;
  const nlohmann::json* node = &recipe.config;
  if (!section.empty()) {
    node = recipe.config.is_object() && recipe.config.contains(section) ? &recipe.config.at(section)
                                                                        : nullptr;
  }
  if (node != nullptr && node->is_object()) {
    for (const auto& [key, value] : node->items()) keys.push_back(key);
  }
  const std::string prefix = section.empty() ? "--" : "--" + section + ".";
  for (const Arg& arg : recipe.args) {
    if (arg.flag.rfind(prefix, 0) != 0) continue;
    const std::string rest = arg.flag.substr(prefix.size());
    keys.push_back(rest.substr(0, rest.find('.')));
  }
  return keys;
}

}  // namespace

// A top-level key no AutoModel release reads, but within a typo of one it does: AutoModel would
// ignore it without a word and run with that section's defaults (step_schedular: a global batch
// of 32 and a local batch of 1). Keys far from every section are left alone (a custom recipe may
// read sections of its own), and so are short ones, where any two names are a typo apart.
Status CheckSections(const Recipe& recipe, const Knowledge& knowledge) {
  if (knowledge.sections.empty()) return Status::Ok();
  for (const std::string& key : KeysUnder(recipe, "")) {
    if (key.size() < 5 || key[0] == '_' || knowledge.sections.count(key) ||
        knowledge.extra_sections.count(key)) {
      continue;
    }
    const std::string nearest = support::NearestName(
        key, std::vector<std::string>(knowledge.sections.begin(), knowledge.sections.end()));
    if (nearest.empty()) continue;
    return Violation("config.sections",
                     "'" + key + "' is not a config section of any AutoModel release from " +
                         knowledge.sections_first + " to " + knowledge.sections_last +
                         "; did you mean " + nearest + "? AutoModel would ignore '" + key +
                         "' without a word and run with " + nearest +
                         "'s defaults. If your recipe reads it, declare it in the workflow: "
                         "stack: {name: automodel, with: {extra_sections: [" +
                         key + "]}}");
  }
  // The closed sections' keys (step_scheduler's): a key no release takes.
  for (const auto& [section, section_keys] : knowledge.section_keys) {
    for (const std::string& key : KeysUnder(recipe, section)) {
      if (section_keys.count(key) || knowledge.extra_sections.count(section + "." + key)) continue;
      const std::string nearest = support::NearestName(
          key, std::vector<std::string>(section_keys.begin(), section_keys.end()));
      return Violation(
          "config.keys",
          section + "." + key + " is not a key of " + section + " in any AutoModel release from " +
              knowledge.sections_first + " to " + knowledge.sections_last +
              (nearest.empty() ? std::string()
                               : "; did you mean " + section + "." + nearest + "?") +
              " AutoModel's LLM and VLM recipes stop at start on it (TypeError: unexpected "
              "keyword argument) and the others ignore it. If your recipe reads it, declare it in "
              "the workflow: stack: {name: automodel, with: {extra_sections: [" +
              section + "." + key + "]}}");
    }
  }
  return Status::Ok();
}

Status ValidateRecipe(const Recipe& recipe, const Knowledge& knowledge) {
  ATTUNE_RETURN_IF_ERROR(CheckSections(recipe, knowledge));
  ConfigView view(recipe, knowledge);
  Mesh m = ReadMesh(view, recipe.topology);
  if (m.strategy != "fsdp2" && m.strategy != "megatron_fsdp" && m.strategy != "ddp") {
    return Violation("strategy.known", "distributed.strategy '" + m.strategy +
                     "' is not one of fsdp2, megatron_fsdp, ddp");
  }
  if (m.tp < 1 || m.cp < 1 || m.pp < 1 || m.ep < 1 || m.dp_replicate < 1) {
    return Violation("mesh.positive", "parallel sizes must be at least 1 (tp " + S(m.tp) + ", cp " +
                     S(m.cp) + ", pp " + S(m.pp) + ", ep " + S(m.ep) + ")");
  }
  ATTUNE_RETURN_IF_ERROR(CheckStrategyMesh(m));
  ATTUNE_RETURN_IF_ERROR(CheckHsdpAndEp(m));
  ATTUNE_RETURN_IF_ERROR(CheckBatch(view, m));
  return CheckSequenceAndCheckpointing(view, m);
}

}  // namespace attune::automodel
