// The normalized workflow (the first event of a campaign) and its inverse.
#include "attune/hash.h"
#include "workflow/workflow.h"

namespace attune {

namespace {

using Json = nlohmann::json;

Json PluginRefToJson(const PluginRef& p) { return {{"name", p.name}, {"with", p.with}}; }

PluginRef PluginRefFromJson(const Json& j) {
  return PluginRef{j.at("name").get<std::string>(), j.value("with", Json::object())};
}

Json StepToJson(const StepDecl& s) {
  return {{"id", s.id}, {"uses", s.uses}, {"with", s.with}, {"if", s.if_expr}};
}

StepDecl StepFromJson(const Json& j) {
  return StepDecl{j.at("id").get<std::string>(), j.at("uses").get<std::string>(),
                  j.value("with", Json::object()), j.value("if", std::string())};
}

}  // namespace

Json WorkflowToJson(const Workflow& w) {
  Json steps = Json::array();
  for (const auto& s : w.steps) steps.push_back(StepToJson(s));
  Json out = {
      {"attune", w.version},
      {"name", w.name},
      {"source_path", w.source_path},
      {"stack", PluginRefToJson(w.stack)},
      {"launcher", PluginRefToJson(w.launcher)},
      {"agent", PluginRefToJson(w.agent)},
      {"recipe_path", w.recipe_path},
      {"recipe", RecipeToJson(w.recipe)},
      {"seed", w.seed},
      {"budget",
       {{"gpu_hours", w.budget.gpu_hours},
        {"max_candidates", w.budget.max_candidates},
        {"job_time_limit_s", w.budget.job_time_limit_s},
        {"time_limit_factor", w.budget.time_limit_factor}}},
      {"measure",
       {{"noise_band", w.measure.noise_band},
        {"repeats", w.measure.repeats},
        {"early_stop",
         {{"enabled", w.measure.early_stop.enabled},
          {"min_iterations", w.measure.early_stop.min_iterations},
          {"relative_error", w.measure.early_stop.relative_error},
          {"check_every_s", w.measure.early_stop.check_every_s}}}}},
      {"gate",
       {{"loss_rel_tolerance", w.gate.loss_rel_tolerance},
        {"paired_losses", w.gate.paired_losses}}},
      {"steps", steps},
  };
  // Written only when set, so that a workflow without it keeps the normalized form (and hash) it
  // had before the option existed.
  if (w.measure.confirm > 0) out["measure"]["confirm"] = w.measure.confirm;
  if (w.measure.rivals > 0) out["measure"]["rivals"] = w.measure.rivals;
  return out;
}

Result<Workflow> WorkflowFromJson(const Json& j) {
  Workflow w;
  try {
    w.version = j.at("attune").get<int>();
    w.name = j.at("name").get<std::string>();
    w.source_path = j.value("source_path", std::string());
    w.stack = PluginRefFromJson(j.at("stack"));
    w.launcher = PluginRefFromJson(j.at("launcher"));
    w.agent = PluginRefFromJson(j.at("agent"));
    w.recipe_path = j.value("recipe_path", std::string());
    w.seed = j.at("seed").get<uint64_t>();
    const Json& b = j.at("budget");
    // A workflow recorded before time_limit_factor existed keeps fixed limits.
    w.budget = BudgetSpec{b.at("gpu_hours").get<double>(), b.at("max_candidates").get<int>(),
                          b.at("job_time_limit_s").get<double>(), b.value("time_limit_factor", 0.0)};
    const Json& m = j.at("measure");
    w.measure.noise_band = m.at("noise_band").get<double>();
    w.measure.repeats = m.at("repeats").get<int>();
    w.measure.confirm = m.value("confirm", 0);
    w.measure.rivals = m.value("rivals", 0);
    // A workflow recorded before the adaptive stop existed ran every job to its end.
    const Json e = m.value("early_stop", Json{{"enabled", false}});
    w.measure.early_stop.enabled = e.value("enabled", false);
    w.measure.early_stop.min_iterations = e.value("min_iterations", 20);
    w.measure.early_stop.relative_error = e.value("relative_error", 0.0);
    w.measure.early_stop.check_every_s = e.value("check_every_s", 30.0);
    const Json& g = j.at("gate");
    w.gate = GateSpec{g.at("loss_rel_tolerance").get<double>(), g.at("paired_losses").get<int>()};
    for (const auto& s : j.at("steps")) w.steps.push_back(StepFromJson(s));
  } catch (const std::exception& e) {
    // nlohmann reports a missing or mistyped member by throwing; name it for the user.
    return Status::InvalidArgument(std::string("normalized workflow: ") + e.what());
  }
  if (!j.contains("recipe")) return Status::InvalidArgument("normalized workflow: no 'recipe'");
  auto recipe = RecipeFromJson(j["recipe"]);
  if (!recipe.ok()) return recipe.status().WithContext("normalized workflow: recipe");
  w.recipe = std::move(recipe).value();
  return w;
}

std::string WorkflowHash(const Workflow& w) {
  // Paths say where the files were, not what the campaign does: moving a checkout must not
  // change the hash.
  Json j = WorkflowToJson(w);
  j.erase("source_path");
  j.erase("recipe_path");
  // Total: a string that is not UTF-8 (a YAML escape can produce one) gets U+FFFD in the hashed
  // form instead of an exception; such a workflow is refused when its first event is stored.
  return Sha256Hex(j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace attune
