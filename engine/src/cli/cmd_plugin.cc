// `attune <plugin> <command> ARGS...`: a plugin's own commands (Plugin::RunCommand).
#include <ostream>

#include "cli/cli.h"

namespace attune::cli {

namespace {

Result<std::unique_ptr<Plugin>> CreateAny(PluginHost& host, const LoadedPlugin& p,
                                          const PluginContext& ctx) {
  switch (p.kind) {
    case PluginKind::kStack: {
      ATTUNE_ASSIGN_OR_RETURN(auto s, host.CreateStack(p.name, ctx));
      return std::unique_ptr<Plugin>(std::move(s));
    }
    case PluginKind::kLauncher: {
      ATTUNE_ASSIGN_OR_RETURN(auto l, host.CreateLauncher(p.name, ctx));
      return std::unique_ptr<Plugin>(std::move(l));
    }
    case PluginKind::kAgent: {
      ATTUNE_ASSIGN_OR_RETURN(auto a, host.CreateAgent(p.name, ctx));
      return std::unique_ptr<Plugin>(std::move(a));
    }
  }
  return Status::Internal("unknown plugin kind");
}

const LoadedPlugin* FindAnyKind(const PluginHost& host, const std::string& name) {
  for (const LoadedPlugin* p : host.List()) {
    if (p->name == name) return p;
  }
  return nullptr;
}

int UnknownCommand(Env& env, const PluginHost& host, const std::string& word,
                   const std::vector<std::string>& args) {
  // A command group ("stack", "log", ...) with a subcommand it does not have: name the group's.
  std::vector<std::string> subcommands;
  for (const Command& c : Commands()) {
    std::string name(c.name);
    size_t space = name.find(' ');
    if (space != std::string::npos && name.substr(0, space) == word) subcommands.push_back(name.substr(space + 1));
  }
  if (!subcommands.empty()) {
    std::string sub = args.empty() ? std::string() : args[0];
    std::string nearest = sub.empty() ? std::string() : NearestName(sub, subcommands);
    std::string list;
    for (const auto& s : subcommands) list += (list.empty() ? "" : ", ") + s;
    *env.err << "attune " << word << ": "
             << (sub.empty() ? std::string("missing command") : "unknown command '" + sub + "'")
             << (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") << "; the " << word
             << " commands are " << list << " (attune --help)\n";
    return kExitUsage;
  }
  std::vector<std::string> names;
  for (const Command& c : Commands()) names.push_back(std::string(c.name).substr(0, std::string(c.name).find(' ')));
  for (const LoadedPlugin* p : host.List()) names.push_back(p->name);
  std::string nearest = NearestName(word, names);
  *env.err << "attune: unknown command '" << word << "'"
           << (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)")
           << "; see attune --help and attune plugins\n";
  return kExitUsage;
}

void PrintPluginHelp(const Plugin& plugin, std::ostream& out) {
  out << "usage: attune " << plugin.Name() << " COMMAND [ARGS...]\n\ncommands:\n";
  for (const PluginCommand& c : plugin.Commands()) out << "  " << c.name << "  " << c.summary << "\n";
  if (plugin.Commands().empty()) out << "  (this plugin offers no commands)\n";
}

}  // namespace

int RunPluginCommand(const std::string& name, const std::vector<std::string>& args, Env& env) {
  auto host = LoadPlugins(env, {});
  if (!host.ok()) return ReportError(env, name, host.status(), false);
  const LoadedPlugin* loaded = FindAnyKind(**host, name);
  if (loaded == nullptr) return UnknownCommand(env, **host, name, args);
  auto plugin = CreateAny(**host, *loaded, CliPluginContext(env));
  if (!plugin.ok()) return ReportError(env, name, plugin.status(), false);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    PrintPluginHelp(**plugin, args.empty() ? *env.err : *env.out);
    return args.empty() ? kExitUsage : kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  return (*plugin)->RunCommand(args[0], rest, *env.out, *env.err);
}

}  // namespace attune::cli
