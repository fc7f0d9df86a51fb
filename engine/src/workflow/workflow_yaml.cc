// Workflow YAML -> Workflow, validated. Every error is "file:line:col: path: message".
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "api/utf8.h"
#include "api/yaml_load.h"
#include "plugin/plugin_host.h"
#include "workflow/workflow.h"
#include "workflow/yaml_reader.h"

namespace attune {

namespace fs = std::filesystem;
using workflow::JoinPath;
using workflow::YamlReader;

namespace {

const std::set<std::string> kTopKeys = {"attune", "name",   "stack",   "recipe", "launcher",
                                        "agent",  "seed",   "budget",  "measure", "gate",
                                        "steps"};

Status CheckPluginName(const YamlReader& r, const YAML::Node& node, const std::string& path,
                       const std::string& name, const std::set<std::string>& known,
                       const char* kind) {
  if (known.empty() || known.count(name)) return Status::Ok();
  std::string nearest = NearestName(name, std::vector<std::string>(known.begin(), known.end()));
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return r.Error(node, path,
                 std::string("unknown ") + kind + " plugin '" + name + "'" +
                     (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                     "; available: " + list);
}

// Checks `with:` (at `where`, as JSON `with`) against the schema `name` declares, if any.
Status CheckOptions(const YamlReader& r, const YAML::Node& where, const std::string& path,
                    const nlohmann::json& with, const std::string& name,
                    const std::map<std::string, support::JsonSchema>& schemas) {
  auto schema = schemas.find(name);
  if (schema == schemas.end()) return Status::Ok();
  auto violation = schema->second.Check(with);
  if (!violation) return Status::Ok();
  return r.Violation(where, path, *violation);
}

// `stack: megatron` or `stack: {name: megatron, with: {...}}`. The `with:` block is checked
// against the schema the plugin declares, so that a typo is found here and not at `run`.
Status ParsePluginRef(const YamlReader& r, const YAML::Node& root, const std::string& key,
                      const std::set<std::string>& known,
                      const std::map<std::string, support::JsonSchema>& schemas, const char* kind,
                      PluginRef* out) {
  YAML::Node node = root[key];
  if (!node) return r.Error(root, key, "required key is missing (the " + std::string(kind) +
                                           " plugin to use)");
  if (node.IsScalar()) {
    out->name = node.Scalar();
    ATTUNE_RETURN_IF_ERROR(CheckPluginName(r, node, key, out->name, known, kind));
    return CheckOptions(r, node, key + ".with", out->with, out->name, schemas);
  }
  ATTUNE_RETURN_IF_ERROR(r.RequireMap(node, key));
  ATTUNE_RETURN_IF_ERROR(r.CheckKeys(node, key, {"name", "with"}));
  if (!node["name"]) return r.Error(node, key, "missing 'name'");
  ATTUNE_RETURN_IF_ERROR(r.ReadString(node, "name", key, &out->name));
  ATTUNE_RETURN_IF_ERROR(CheckPluginName(r, node["name"], key + ".name", out->name, known, kind));
  YAML::Node with = node["with"];
  if (with && !with.IsNull()) {
    ATTUNE_RETURN_IF_ERROR(r.RequireMap(with, key + ".with"));
    ATTUNE_ASSIGN_OR_RETURN(out->with, r.ToJson(with));
  }
  return CheckOptions(r, with ? with : node, key + ".with", out->with, out->name, schemas);
}

Status ParseBudget(const YamlReader& r, const YAML::Node& root, BudgetSpec* b) {
  YAML::Node node = root["budget"];
  if (!node) return r.Error(root, "budget", "required key is missing (budget: {gpu_hours: N})");
  ATTUNE_RETURN_IF_ERROR(r.RequireMap(node, "budget"));
  ATTUNE_RETURN_IF_ERROR(
      r.CheckKeys(node, "budget", {"gpu_hours", "max_candidates", "job_time_limit_s", "time_limit_factor"}));
  if (!node["gpu_hours"]) return r.Error(node, "budget.gpu_hours", "required key is missing");
  ATTUNE_RETURN_IF_ERROR(r.ReadDouble(node, "gpu_hours", "budget", &b->gpu_hours));
  ATTUNE_RETURN_IF_ERROR(r.ReadInt(node, "max_candidates", "budget", &b->max_candidates));
  ATTUNE_RETURN_IF_ERROR(r.ReadDouble(node, "job_time_limit_s", "budget", &b->job_time_limit_s));
  ATTUNE_RETURN_IF_ERROR(r.ReadDouble(node, "time_limit_factor", "budget", &b->time_limit_factor));
  if (!(b->time_limit_factor == 0 || b->time_limit_factor >= 1.5)) {
    return r.Error(node["time_limit_factor"], "budget.time_limit_factor",
                   "must be 0 (off) or at least 1.5 (a candidate may be that much slower than "
                   "the baseline before its run is stopped)");
  }
  if (!(b->gpu_hours > 0)) return r.Error(node["gpu_hours"], "budget.gpu_hours", "must be > 0");
  if (b->max_candidates < 1) {
    return r.Error(node["max_candidates"], "budget.max_candidates", "must be >= 1");
  }
  if (!(b->job_time_limit_s > 0)) {
    return r.Error(node["job_time_limit_s"], "budget.job_time_limit_s", "must be > 0");
  }
  return Status::Ok();
}

// measure.early_stop: `false` (off), `true` (the defaults) or a mapping of the settings.
Status ParseEarlyStop(const YamlReader& r, const YAML::Node& measure, EarlyStopSpec* e) {
  const YAML::Node node = measure["early_stop"];
  const std::string path = "measure.early_stop";
  if (node.IsScalar()) return r.ReadBool(measure, "early_stop", "measure", &e->enabled);
  if (!node.IsMap()) {
    return r.Error(node, path, "expected true, false or a mapping {enabled, min_iterations, "
                               "relative_error, check_every_s}");
  }
  ATTUNE_RETURN_IF_ERROR(
      r.CheckKeys(node, path, {"enabled", "min_iterations", "relative_error", "check_every_s"}));
  ATTUNE_RETURN_IF_ERROR(r.ReadBool(node, "enabled", path, &e->enabled));
  ATTUNE_RETURN_IF_ERROR(r.ReadInt(node, "min_iterations", path, &e->min_iterations));
  ATTUNE_RETURN_IF_ERROR(r.ReadDouble(node, "relative_error", path, &e->relative_error));
  ATTUNE_RETURN_IF_ERROR(r.ReadDouble(node, "check_every_s", path, &e->check_every_s));
  if (e->min_iterations < 3) {
    return r.Error(node["min_iterations"], path + ".min_iterations",
                   "must be >= 3 (a spread needs a few steady iterations)");
  }
  if (e->relative_error < 0 || e->relative_error >= 0.5) {
    return r.Error(node["relative_error"], path + ".relative_error",
                   "must be in [0, 0.5) (0: the noise band ÷ 6)");
  }
  if (!(e->check_every_s > 0)) {
    return r.Error(node["check_every_s"], path + ".check_every_s", "must be > 0 seconds");
  }
  return Status::Ok();
}

Status ParseMeasureAndGate(const YamlReader& r, const YAML::Node& root, Workflow* w) {
  if (YAML::Node m = root["measure"]) {
    ATTUNE_RETURN_IF_ERROR(r.RequireMap(m, "measure"));
    ATTUNE_RETURN_IF_ERROR(r.CheckKeys(m, "measure", {"noise_band", "repeats", "confirm", "rivals", "early_stop"}));
    ATTUNE_RETURN_IF_ERROR(r.ReadDouble(m, "noise_band", "measure", &w->measure.noise_band));
    ATTUNE_RETURN_IF_ERROR(r.ReadInt(m, "repeats", "measure", &w->measure.repeats));
    if (w->measure.noise_band < 0 || w->measure.noise_band >= 1) {
      return r.Error(m["noise_band"], "measure.noise_band", "must be in [0, 1)");
    }
    if (w->measure.repeats < 1) return r.Error(m["repeats"], "measure.repeats", "must be >= 1");
    ATTUNE_RETURN_IF_ERROR(r.ReadInt(m, "confirm", "measure", &w->measure.confirm));
    if (w->measure.confirm < 0 || w->measure.confirm > kMaxConfirmRuns) {
      return r.Error(m["confirm"], "measure.confirm",
                     "must be between 0 and " + std::to_string(kMaxConfirmRuns) +
                         " (extra runs of a candidate that would become the leader)");
    }
    ATTUNE_RETURN_IF_ERROR(r.ReadInt(m, "rivals", "measure", &w->measure.rivals));
    if (w->measure.rivals < 0 || w->measure.rivals > kMaxConfirmRuns) {
      return r.Error(m["rivals"], "measure.rivals",
                     "must be between 0 and " + std::to_string(kMaxConfirmRuns) +
                         " (extra runs of each of the leader's closest rivals once tuning has "
                         "nothing new to try)");
    }
    if (m["early_stop"]) ATTUNE_RETURN_IF_ERROR(ParseEarlyStop(r, m, &w->measure.early_stop));
  }
  if (YAML::Node g = root["gate"]) {
    ATTUNE_RETURN_IF_ERROR(r.RequireMap(g, "gate"));
    ATTUNE_RETURN_IF_ERROR(r.CheckKeys(g, "gate", {"loss_rel_tolerance", "paired_losses"}));
    ATTUNE_RETURN_IF_ERROR(
        r.ReadDouble(g, "loss_rel_tolerance", "gate", &w->gate.loss_rel_tolerance));
    ATTUNE_RETURN_IF_ERROR(r.ReadInt(g, "paired_losses", "gate", &w->gate.paired_losses));
    if (w->gate.loss_rel_tolerance < 0) {
      return r.Error(g["loss_rel_tolerance"], "gate.loss_rel_tolerance", "must be >= 0");
    }
    if (w->gate.paired_losses < 0) {
      return r.Error(g["paired_losses"], "gate.paired_losses", "must be >= 0");
    }
  }
  return Status::Ok();
}

Status CheckStepKind(const YamlReader& r, const YAML::Node& step, const std::string& path,
                     const StepDecl& decl, const WorkflowSchema& schema) {
  if (schema.step_kinds.empty()) return Status::Ok();
  auto kind = schema.step_kinds.find(decl.uses);
  if (kind == schema.step_kinds.end()) {
    std::vector<std::string> names;
    for (const auto& [name, keys] : schema.step_kinds) names.push_back(name);
    std::string nearest = NearestName(decl.uses, names);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return r.Error(step["uses"], path + ".uses",
                   "unknown step '" + decl.uses + "'" +
                       (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                       "; step kinds: " + list);
  }
  // Keys, types and ranges of the step's options, as the step kind declares them.
  YAML::Node with = step["with"];
  auto violation = kind->second.Check(decl.with);
  if (violation) return r.Violation(with ? with : step, path + ".with", *violation);
  return Status::Ok();
}

Status ParseStep(const YamlReader& r, const YAML::Node& step, const std::string& path,
                 const WorkflowSchema& schema, StepDecl* decl) {
  static const std::regex kId("[a-z0-9_-]+");
  ATTUNE_RETURN_IF_ERROR(r.RequireMap(step, path));
  ATTUNE_RETURN_IF_ERROR(r.CheckKeys(step, path, {"id", "uses", "with", "if"}));
  if (!step["uses"]) return r.Error(step, path + ".uses", "required key is missing");
  ATTUNE_RETURN_IF_ERROR(r.ReadString(step, "uses", path, &decl->uses));
  decl->id = decl->uses;
  ATTUNE_RETURN_IF_ERROR(r.ReadString(step, "id", path, &decl->id));
  ATTUNE_RETURN_IF_ERROR(r.ReadString(step, "if", path, &decl->if_expr));
  if (!std::regex_match(decl->id, kId)) {
    return r.Error(step["id"] ? step["id"] : step, path + ".id",
                   "step id '" + decl->id + "' must use only [a-z0-9_-]");
  }
  YAML::Node with = step["with"];
  if (with && !with.IsNull()) {
    ATTUNE_RETURN_IF_ERROR(r.RequireMap(with, path + ".with"));
    ATTUNE_ASSIGN_OR_RETURN(decl->with, r.ToJson(with));
  }
  if (step["if"] && decl->if_expr.empty()) {
    return r.Error(step["if"], path + ".if", "empty condition; remove 'if:' to always run the step");
  }
  if (!decl->if_expr.empty()) {
    Status checked = CheckCondition(decl->if_expr, schema.condition_names);
    if (!checked.ok()) return r.Error(step["if"], path + ".if", checked.message());
  }
  return CheckStepKind(r, step, path, *decl, schema);
}

Status ParseSteps(const YamlReader& r, const YAML::Node& root, const WorkflowSchema& schema,
                  std::vector<StepDecl>* steps) {
  YAML::Node node = root["steps"];
  if (!node) return r.Error(root, "steps", "required key is missing (a list of steps)");
  if (!node.IsSequence() || node.size() == 0) {
    return r.Error(node, "steps", "expected a non-empty list of steps");
  }
  std::map<std::string, std::string> seen;  // id -> path of its first use
  for (size_t i = 0; i < node.size(); ++i) {
    std::string path = "steps[" + std::to_string(i) + "]";
    StepDecl decl;
    ATTUNE_RETURN_IF_ERROR(ParseStep(r, node[i], path, schema, &decl));
    auto [it, inserted] = seen.emplace(decl.id, path);
    if (!inserted) {
      return r.Error(node[i]["id"] ? node[i]["id"] : node[i], path + ".id",
                     "duplicate step id '" + decl.id + "' (first used by " + it->second +
                         "); give each step a unique id");
    }
    steps->push_back(std::move(decl));
  }
  return Status::Ok();
}

Status ParseRecipe(const YamlReader& r, const YAML::Node& root, Workflow* w) {
  YAML::Node node = root["recipe"];
  if (!node) return r.Error(root, "recipe", "required key is missing (path of a recipe file)");
  if (!node.IsScalar()) return r.Error(node, "recipe", "expected a file path");
  fs::path base = fs::path(w->source_path).parent_path();
  w->recipe_path = (base / node.Scalar()).lexically_normal().string();
  auto recipe = LoadRecipeFile(w->recipe_path);
  if (!recipe.ok()) return r.Error(node, "recipe", recipe.status().message());
  w->recipe = std::move(recipe).value();
  if (!w->recipe.stack.empty() && w->recipe.stack != w->stack.name) {
    return r.Error(node, "recipe", "the recipe is for stack '" + w->recipe.stack +
                                       "' but the workflow uses stack '" + w->stack.name + "'");
  }
  return Status::Ok();
}

Status ParseRoot(const YamlReader& r, const YAML::Node& root, const WorkflowSchema& schema,
                 Workflow* w) {
  ATTUNE_RETURN_IF_ERROR(r.RequireMap(root, ""));
  ATTUNE_RETURN_IF_ERROR(r.CheckKeys(root, "", kTopKeys));
  if (!root["attune"]) {
    return r.Error(root, "attune", "required key is missing: start the file with 'attune: 1'");
  }
  ATTUNE_RETURN_IF_ERROR(r.ReadInt(root, "attune", "", &w->version));
  if (w->version != 1) {
    return r.Error(root["attune"], "attune", "unsupported workflow version " +
                                                 std::to_string(w->version) +
                                                 "; this attune reads version 1");
  }
  w->name = fs::path(w->source_path).stem().string();
  ATTUNE_RETURN_IF_ERROR(r.ReadString(root, "name", "", &w->name));
  ATTUNE_RETURN_IF_ERROR(ParsePluginRef(r, root, "stack", schema.stacks, schema.stack_options,
                                        "stack", &w->stack));
  ATTUNE_RETURN_IF_ERROR(ParsePluginRef(r, root, "launcher", schema.launchers,
                                        schema.launcher_options, "launcher", &w->launcher));
  ATTUNE_RETURN_IF_ERROR(ParsePluginRef(r, root, "agent", schema.agents, schema.agent_options,
                                        "agent", &w->agent));
  ATTUNE_RETURN_IF_ERROR(r.ReadUint64(root, "seed", "", &w->seed));
  ATTUNE_RETURN_IF_ERROR(ParseBudget(r, root, &w->budget));
  ATTUNE_RETURN_IF_ERROR(ParseMeasureAndGate(r, root, w));
  ATTUNE_RETURN_IF_ERROR(ParseSteps(r, root, schema, &w->steps));
  return ParseRecipe(r, root, w);
}

}  // namespace

Result<Workflow> ParseWorkflowYaml(const std::string& text, const std::string& source_path,
                                   const WorkflowSchema& schema) {
  YamlReader reader(source_path);
  // Bounded (size, aliases, depth) and checked (UTF-8, duplicate keys) before anything walks it.
  ATTUNE_ASSIGN_OR_RETURN(YAML::Node root, LoadYamlDocument(text, source_path, "a workflow file"));
  Workflow w;
  std::error_code ec;
  w.source_path = fs::absolute(source_path, ec).lexically_normal().string();
  try {
    ATTUNE_RETURN_IF_ERROR(ParseRoot(reader, root, schema, &w));
  } catch (const YAML::Exception& e) {
    // A shape yaml-cpp cannot convert (e.g. a map where a scalar key was expected).
    return Status::InvalidArgument(source_path + ":" + std::to_string(e.mark.line + 1) + ":" +
                                   std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return w;
}

void AddPluginsToSchema(const PluginHost& host, WorkflowSchema* schema) {
  for (const LoadedPlugin* p : host.List()) {
    std::set<std::string>* names = &schema->stacks;
    std::map<std::string, support::JsonSchema>* options = &schema->stack_options;
    if (p->kind == PluginKind::kLauncher) {
      names = &schema->launchers;
      options = &schema->launcher_options;
    } else if (p->kind == PluginKind::kAgent) {
      names = &schema->agents;
      options = &schema->agent_options;
    }
    names->insert(p->name);
    if (p->options_schema) options->insert_or_assign(p->name, *p->options_schema);
  }
}

Result<Workflow> LoadWorkflowFile(const std::string& path, const WorkflowSchema& schema) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return Status::InvalidArgument(path + " is a directory; pass the workflow's .yaml file "
                                   "(for example " + (fs::path(path) / "workflow.yaml").string() +
                                   ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound("workflow file " + path + " cannot be read (" +
                            (fs::exists(path, ec) ? "permission denied" : "no such file") + ")");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseWorkflowYaml(buffer.str(), path, schema);
}

}  // namespace attune
