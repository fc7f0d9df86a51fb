// `attune recipe import FILE`: a launch script or command line -> a recipe file.
// `attune recipe launch RECIPE`: what the recipe's stack would run for it (launchers that preview
// a job, e.g. `attune kuberay render`, read its --json form).
#include <fstream>
#include <ostream>

#include "cli/args.h"

namespace attune::cli {

int RunRecipeImport(const std::vector<std::string>& args, Env& env) {
  ArgParser p("recipe import FILE [--stack NAME] [-o OUT]",
              "Reads a launch script or command line as you have it and writes the recipe "
              "(YAML) to OUT or stdout. Tokens the stack cannot place are listed on stderr; "
              "nothing is dropped silently.");
  p.Options()("stack", po::value<std::string>()->default_value("megatron"), "stack plugin")(
      "output,o", po::value<std::string>(), "recipe file to write (default: stdout)")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("file");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  if (!p.Has("file")) {
    return ReportError(env, "recipe import", Status::InvalidArgument("missing FILE"), false);
  }
  auto text = ReadTextFile(p.Get("file"));
  if (!text.ok()) return ReportError(env, "recipe import", text.status(), false);
  auto stack = CreateStack(env, p.Get("stack"), p.GetList("plugin-path"));
  if (!stack.ok()) return ReportError(env, "recipe import", stack.status(), false);
  std::vector<std::string> unknown;
  auto recipe = (*stack)->ImportLaunch(*text, &unknown);
  if (!recipe.ok()) return ReportError(env, "recipe import", recipe.status(), false);
  for (const auto& token : unknown) {
    *env.err << "attune recipe import: " << p.Get("file") << ": not understood: " << token
             << "\n";
  }
  std::string yaml = RecipeToYaml(*recipe);
  if (!p.Has("output")) {
    *env.out << yaml;
    return kExitOk;
  }
  std::ofstream out(p.Get("output"), std::ios::binary | std::ios::trunc);
  out << yaml;
  if (!out) {
    return ReportError(env, "recipe import",
                       Status::IoError("cannot write " + p.Get("output")), false);
  }
  *env.err << "wrote " << p.Get("output") << " (recipe " << RecipeId(*recipe) << ")\n";
  return kExitOk;
}

int RunRecipeLaunch(const std::vector<std::string>& args, Env& env) {
  ArgParser p("recipe launch RECIPE [--json]",
              "Prints the command line and environment that the recipe's stack (its `stack:` "
              "key) renders for it: what a launcher is given to run. --json prints "
              "{\"argv\": [...], \"env\": [[NAME, value], ...], \"workdir\": \"...\"}.");
  p.Options()("json", "machine-readable output")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("recipe");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  const bool json = p.Has("json");
  if (!p.Has("recipe")) {
    return ReportError(env, "recipe launch", Status::InvalidArgument("missing RECIPE"), json);
  }
  auto recipe = LoadRecipeFile(p.Get("recipe"));
  if (!recipe.ok()) return ReportError(env, "recipe launch", recipe.status(), json);
  auto stack = CreateStack(env, recipe->stack, p.GetList("plugin-path"));
  if (!stack.ok()) return ReportError(env, "recipe launch", stack.status(), json);
  auto launch = (*stack)->RenderLaunch(*recipe);
  if (!launch.ok()) return ReportError(env, "recipe launch", launch.status(), json);
  if (!json) {
    if (!launch->workdir.empty()) *env.out << "cd " << ShellQuote(launch->workdir) << " && ";
    *env.out << ShellCommand(launch->env, launch->argv) << "\n";
    return kExitOk;
  }
  nlohmann::json vars = nlohmann::json::array();
  for (const auto& [name, value] : launch->env) vars.push_back({name, value});
  *env.out << nlohmann::json{{"argv", launch->argv}, {"env", vars}, {"workdir", launch->workdir}}
                  .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
           << "\n";
  return kExitOk;
}

}  // namespace attune::cli
