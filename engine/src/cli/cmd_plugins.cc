// `attune plugins`: what the search path holds.
#include <iomanip>
#include <ostream>

#include "cli/args.h"

namespace attune::cli {

int RunPlugins(const std::vector<std::string>& args, Env& env) {
  ArgParser p("plugins [--json] [--plugin-path DIR]",
              "Loads every plugin library on the search path (--plugin-path, "
              "ATTUNE_PLUGIN_PATH, the build or install directory) and lists them. A broken "
              "library is an error, never skipped.");
  p.Options()("json", "machine-readable list")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  auto host = LoadPlugins(env, p.GetList("plugin-path"));
  if (!host.ok()) return ReportError(env, "plugins", host.status(), json);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const LoadedPlugin* pl : (*host)->List()) {
      list.push_back({{"name", pl->name}, {"kind", PluginKindName(pl->kind)},
                      {"version", pl->version}, {"path", pl->path}, {"sha256", pl->sha256},
                      {"options", pl->options_schema ? pl->options_schema->AsJson()
                                                     : nlohmann::json()}});
    }
    *env.out << nlohmann::json{{"plugins", list}, {"search_path", (*host)->search_path()}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
    return kExitOk;
  }
  for (const LoadedPlugin* pl : (*host)->List()) {
    *env.out << std::left << std::setw(10) << PluginKindName(pl->kind) << std::setw(16)
             << pl->name << std::setw(10) << pl->version << pl->path << "\n";
  }
  if ((*host)->List().empty()) *env.out << "no plugins found\n";
  *env.out << "search path:";
  for (const auto& dir : (*host)->search_path()) *env.out << " " << dir;
  *env.out << "\n";
  return kExitOk;
}

}  // namespace attune::cli
