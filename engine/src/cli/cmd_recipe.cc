// `attune recipe import FILE`: a launch script or command line -> a recipe file.
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

}  // namespace attune::cli
