// Helpers shared by the subcommands: error reporting, plugin loading, file reading.
#include <fstream>
#include <ostream>
#include <sstream>

#include "cli/cli.h"

namespace attune::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound: return kExitUsage;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kCorruption: return kExitLockedOrCorrupt;
    case StatusCode::kUnimplemented: return kExitNotBuilt;
    default: return kExitFailed;
  }
}

int ReportError(Env& env, const std::string& command, const Status& status, bool json) {
  if (json) {
    *env.out << nlohmann::json{{"ok", false},
                               {"error", {{"code", StatusCodeName(status.code())},
                                          {"message", status.message()}}}}
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
  } else {
    *env.err << "attune " << command << ": " << status.message() << "\n";
  }
  return ExitCodeFor(status);
}

Result<std::unique_ptr<PluginHost>> LoadPlugins(const Env& env,
                                                const std::vector<std::string>& extra_paths) {
  std::vector<std::string> cli_paths = env.plugin_paths;
  cli_paths.insert(cli_paths.end(), extra_paths.begin(), extra_paths.end());
  auto host = std::make_unique<PluginHost>(PluginHost::DefaultSearchPath(cli_paths));
  ATTUNE_RETURN_IF_ERROR(host->DiscoverAll());
  return host;
}

PluginContext CliPluginContext(const Env& env) {
  PluginContext ctx;
  ctx.data_dir = DefaultDataDir();
  ctx.attune_binary = env.binary;
  std::ostream* err = env.err;
  ctx.log = [err](LogLevel level, const std::string& message) {
    if (level != LogLevel::kDebug) *err << message << "\n";
  };
  return ctx;
}

Result<std::unique_ptr<Stack>> CreateStack(const Env& env, const std::string& name,
                                           const std::vector<std::string>& extra_paths,
                                           const nlohmann::json& with) {
  ATTUNE_ASSIGN_OR_RETURN(auto host, LoadPlugins(env, extra_paths));
  PluginContext context = CliPluginContext(env);
  context.config = with;
  return host->CreateStack(name, context);
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace attune::cli
