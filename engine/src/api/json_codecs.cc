// JSON codecs for the plugin API's value types. These are the forms stored in the event log, so a
// field's name and meaning never change (docs/events.md).
#include <nlohmann/json.hpp>

#include "attune/agent.h"
#include "attune/cluster.h"
#include "attune/launcher.h"
#include "attune/metrics.h"
#include "attune/recipe.h"

namespace attune {
namespace {

using nlohmann::json;

template <typename T>
std::optional<T> OptionalField(const json& j, const char* name) {
  if (!j.contains(name) || j.at(name).is_null()) return std::nullopt;
  return j.at(name).get<T>();
}

template <typename T>
void PutOptional(json& j, const char* name, const std::optional<T>& v) {
  j[name] = v ? json(*v) : json();
}

Status FieldError(const std::string& what, const std::exception& e) {
  return Status::InvalidArgument(what + ": " + e.what());
}

}  // namespace

json RecipeToJson(const Recipe& r) {
  json args = json::array();
  for (const auto& a : r.args) {
    json entry = json::array({a.flag});
    for (const auto& v : a.values) entry.push_back(v);
    args.push_back(entry);
  }
  json env = json::array();
  for (const auto& [k, v] : r.env) env.push_back(json::array({k, v}));
  json out{{"stack", r.stack},
              {"entry", r.entry},
              {"args", args},
              {"env", env},
              {"config", r.config},
              {"topology",
               {{"nodes", r.topology.nodes},
                {"gpus_per_node", r.topology.gpus_per_node},
                {"gpu_type", r.topology.gpu_type}}},
              {"launcher_hint", r.launcher_hint}};
  if (!r.data.empty()) out["data"] = r.data;  // absent for recipes without a declaration
  return out;
}

Result<Recipe> RecipeFromJson(const json& j) {
  try {
    Recipe r;
    r.stack = j.at("stack").get<std::string>();
    r.entry = j.at("entry").get<std::vector<std::string>>();
    for (const auto& a : j.at("args")) {
      auto words = a.get<std::vector<std::string>>();
      if (words.empty()) return Status::InvalidArgument("recipe: an args entry is empty");
      r.args.push_back(Arg{words[0], std::vector<std::string>(words.begin() + 1, words.end())});
    }
    for (const auto& kv : j.at("env")) {
      r.env.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    }
    if (j.contains("config")) r.config = j.at("config");
    if (j.contains("data")) r.data = j.at("data").get<std::map<std::string, std::string>>();
    const auto& t = j.at("topology");
    r.topology.nodes = t.at("nodes").get<int>();
    r.topology.gpus_per_node = t.at("gpus_per_node").get<int>();
    r.topology.gpu_type = t.value("gpu_type", "");
    r.launcher_hint = j.value("launcher_hint", "");
    return r;
  } catch (const json::exception& e) {
    return FieldError("recipe JSON is malformed", e);
  }
}

json ChangeToJson(const Change& c) {
  json j{{"key", c.key}};
  PutOptional(j, "from", c.from);
  PutOptional(j, "to", c.to);
  return j;
}

Result<Change> ChangeFromJson(const json& j) {
  try {
    if (!j.is_object()) return Status::InvalidArgument("a change must be an object {key, from, to}");
    Change c;
    c.key = j.at("key").get<std::string>();
    c.from = OptionalField<std::string>(j, "from");
    c.to = OptionalField<std::string>(j, "to");
    return c;
  } catch (const json::exception& e) {
    return FieldError("change JSON is malformed (expected {key, from, to})", e);
  }
}

json ChangesToJson(const std::vector<Change>& changes) {
  json out = json::array();
  for (const auto& c : changes) out.push_back(ChangeToJson(c));
  return out;
}

Result<std::vector<Change>> ChangesFromJson(const json& j) {
  if (!j.is_array()) return Status::InvalidArgument("changes must be a JSON array");
  std::vector<Change> out;
  for (const auto& item : j) {
    auto c = ChangeFromJson(item);
    if (!c.ok()) return c.status();
    out.push_back(*c);
  }
  return out;
}

json MeasurementToJson(const Measurement& m) {
  json j{{"iterations_logged", m.iterations_logged},
         {"iterations_used", m.iterations_used},
         {"step_time_s", m.step_time_s},
         {"tokens_per_s_per_gpu", m.tokens_per_s_per_gpu},
         {"cv", m.cv},
         {"first_losses", m.first_losses}};
  PutOptional(j, "tflops_per_gpu", m.tflops_per_gpu);
  PutOptional(j, "peak_memory_gib", m.peak_memory_gib);
  return j;
}

Measurement MeasurementFromJson(const json& j) {
  Measurement m;
  m.iterations_logged = j.value("iterations_logged", 0);
  m.iterations_used = j.value("iterations_used", 0);
  m.step_time_s = j.value("step_time_s", 0.0);
  m.tokens_per_s_per_gpu = j.value("tokens_per_s_per_gpu", 0.0);
  m.cv = j.value("cv", 0.0);
  m.tflops_per_gpu = OptionalField<double>(j, "tflops_per_gpu");
  m.peak_memory_gib = OptionalField<double>(j, "peak_memory_gib");
  if (j.contains("first_losses")) m.first_losses = j.at("first_losses").get<std::vector<double>>();
  return m;
}

json FailureToJson(const Failure& f) {
  json j{{"kind", FailureKindName(f.kind)}, {"signature", f.signature},
         {"evidence", f.evidence},          {"line", f.line},
         {"hint", f.hint},                  {"infrastructure", f.infrastructure}};
  if (!f.process.empty()) j["process"] = f.process;  // absent in events recorded before ABI 4
  return j;
}

Failure FailureFromJson(const json& j) {
  Failure f;
  f.kind = FailureKindFromName(j.value("kind", "unknown")).value_or(FailureKind::kUnknown);
  f.signature = j.value("signature", "");
  f.evidence = j.value("evidence", "");
  f.line = j.value("line", 0);
  f.hint = j.value("hint", "");
  f.infrastructure = j.value("infrastructure", false);
  f.process = j.value("process", "");
  return f;
}

json DiagnosisToJson(const Diagnosis& d) {
  return json{{"kind", d.kind}, {"severity", d.severity}, {"evidence", d.evidence}};
}

Diagnosis DiagnosisFromJson(const json& j) {
  return Diagnosis{j.value("kind", ""), j.value("severity", 0.0), j.value("evidence", "")};
}

json IterationToJson(const IterationSample& s) {
  json j{{"iteration", s.iteration},
         {"train_iters", s.train_iters},
         {"step_time_ms", s.step_time_ms},
         {"skipped_iterations", s.skipped_iterations},
         {"nan_iterations", s.nan_iterations},
         {"line", s.line},
         {"extra", s.extra}};
  PutOptional(j, "loss", s.loss);
  PutOptional(j, "grad_norm", s.grad_norm);
  PutOptional(j, "tflops_per_gpu", s.tflops_per_gpu);
  PutOptional(j, "tokens_per_s_per_gpu", s.tokens_per_s_per_gpu);
  PutOptional(j, "global_batch_size", s.global_batch_size);
  return j;
}

json ClusterInfoToJson(const ClusterInfo& c) {
  json j{{"device_type", c.device_type},
         {"device_memory_gib", c.device_memory_gib},
         {"peak_tflops", c.peak_tflops},
         {"devices_per_node", c.devices_per_node},
         {"max_nodes", c.max_nodes},
         {"compute_capability_major", c.compute_capability_major},
         {"virtual_time", c.virtual_time}};
  if (!c.k8s_namespace.empty()) j["k8s_namespace"] = c.k8s_namespace;  // absent off Kubernetes
  if (c.sim_sequence_length > 0) j["sim_sequence_length"] = c.sim_sequence_length;  // dry runs only
  return j;
}

ClusterInfo ClusterInfoFromJson(const json& j) {
  ClusterInfo c;
  c.device_type = j.value("device_type", "");
  c.k8s_namespace = j.value("k8s_namespace", "");
  c.device_memory_gib = j.value("device_memory_gib", 0.0);
  c.peak_tflops = j.value("peak_tflops", 0.0);
  c.devices_per_node = j.value("devices_per_node", 1);
  c.max_nodes = j.value("max_nodes", 1);
  c.compute_capability_major = j.value("compute_capability_major", 0);
  c.virtual_time = j.value("virtual_time", false);
  c.sim_sequence_length = j.value("sim_sequence_length", int64_t{0});
  return c;
}

json JobStatusToJson(const JobStatus& s) {
  json j{{"name", s.name},         {"launcher_job_id", s.launcher_job_id},
         {"state", JobStateName(s.state)}, {"reason", s.reason},
         {"devices", s.devices},   {"requeues", s.requeues}};
  PutOptional(j, "start_time", s.start_time);
  PutOptional(j, "end_time", s.end_time);
  PutOptional(j, "exit_code", s.exit_code);
  return j;
}

Result<JobStatus> JobStatusFromJson(const json& j) {
  try {
    JobStatus s;
    s.name = j.at("name").get<std::string>();
    s.launcher_job_id = j.value("launcher_job_id", "");
    auto state = JobStateFromName(j.at("state").get<std::string>());
    if (!state) return Status::InvalidArgument("job status: unknown state '" +
                                               j.at("state").get<std::string>() + "'");
    s.state = *state;
    s.reason = j.value("reason", "");
    s.devices = j.value("devices", 0);
    s.requeues = j.value("requeues", 0);
    s.start_time = OptionalField<double>(j, "start_time");
    s.end_time = OptionalField<double>(j, "end_time");
    s.exit_code = OptionalField<int>(j, "exit_code");
    return s;
  } catch (const json::exception& e) {
    return FieldError("job status JSON is malformed", e);
  }
}

namespace {
struct OutcomeEntry {
  Outcome outcome;
  const char* name;
};
constexpr OutcomeEntry kOutcomeNames[] = {
    {Outcome::kPending, "pending"},         {Outcome::kRefused, "refused"},
    {Outcome::kFailed, "failed"},           {Outcome::kSlower, "slower"},
    {Outcome::kWithinNoise, "within_noise"}, {Outcome::kNewLeader, "new_leader"},
    {Outcome::kPairedLossMismatch, "paired_loss_mismatch"}, {Outcome::kSkipped, "skipped"},
};
}  // namespace

const char* OutcomeName(Outcome outcome) {
  for (const auto& entry : kOutcomeNames) {
    if (entry.outcome == outcome) return entry.name;
  }
  return "pending";
}

std::optional<Outcome> OutcomeFromName(const std::string& name) {
  for (const auto& entry : kOutcomeNames) {
    if (name == entry.name) return entry.outcome;
  }
  return std::nullopt;
}

json ProposalToJson(const Proposal& p) {
  json j{{"done", p.done},
         {"changes", ChangesToJson(p.changes)},
         {"lever_id", p.lever_id},
         {"rationale", p.rationale},
         {"meta", p.meta}};
  if (!p.base_id.empty()) j["base"] = p.base_id;
  return j;
}

Result<Proposal> ProposalFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a proposal must be a JSON object");
  Proposal p;
  p.done = j.value("done", false);
  if (j.contains("changes")) {
    auto changes = ChangesFromJson(j.at("changes"));
    if (!changes.ok()) return changes.status().WithContext("proposal.changes");
    p.changes = *changes;
  }
  if (!p.done && p.changes.empty()) {
    return Status::InvalidArgument("a proposal needs at least one change, or \"done\": true");
  }
  p.lever_id = j.value("lever_id", "");
  p.rationale = j.value("rationale", "");
  if (j.contains("base")) {
    if (!j.at("base").is_string()) {
      return Status::InvalidArgument("proposal.base: expected the id of a measured candidate "
                                     "(\"c004\", \"baseline\") as a string, found " +
                                     std::string(j.at("base").type_name()));
    }
    p.base_id = j.at("base").get<std::string>();
  }
  if (j.contains("meta") && j.at("meta").is_object()) p.meta = j.at("meta");
  return p;
}

}  // namespace attune
