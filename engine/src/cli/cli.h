// Copyright attune authors.
//
// The `attune` command line: a table of subcommands, each a small function in its own file.
// Exit codes (docs/cli.md):
//   0  success
//   1  the command ran and the answer is "no" or it failed (verify found damage, the gate
//      refused, a plugin or job failed)
//   2  usage error or invalid input (bad flags, invalid workflow, unknown plugin)
//   3  `attune run`: paused by SIGINT/SIGTERM (resume with the same command)
//   4  the campaign directory is locked by another attune or its log is corrupt
//   5  the command is not built into this binary
#ifndef ATTUNE_ENGINE_CLI_CLI_H_
#define ATTUNE_ENGINE_CLI_CLI_H_

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/plugin.h"
#include "attune/status.h"
#include "plugin/plugin_host.h"

namespace attune::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitPaused = 3,
  kExitLockedOrCorrupt = 4,
  kExitNotBuilt = 5,
};

// What every subcommand gets.
struct Env {
  std::vector<std::string> plugin_paths;  // global --plugin-path values (before the command)
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  std::string binary;                     // absolute path of this executable
};

using CommandFn = int (*)(const std::vector<std::string>& args, Env& env);

struct Command {
  const char* name;     // "run", "log parse"
  const char* usage;    // "run WORKFLOW [--dir DIR] ..."
  const char* summary;  // one line for --help
  CommandFn run;
};

// The built-in commands, in --help order.
const std::vector<Command>& Commands();

// Entry point: global options, then a built-in command or `attune <plugin> <command>`.
int Main(int argc, char** argv);

// Subcommands (one file each).
int RunValidate(const std::vector<std::string>& args, Env& env);
int RunRun(const std::vector<std::string>& args, Env& env);
int RunStatus(const std::vector<std::string>& args, Env& env);
int RunEvents(const std::vector<std::string>& args, Env& env);
int RunVerify(const std::vector<std::string>& args, Env& env);
int RunPlugins(const std::vector<std::string>& args, Env& env);
int RunStackShow(const std::vector<std::string>& args, Env& env);
int RunStackCheck(const std::vector<std::string>& args, Env& env);
int RunLauncherCheck(const std::vector<std::string>& args, Env& env);
int RunAgentCheck(const std::vector<std::string>& args, Env& env);
int RunRecipeImport(const std::vector<std::string>& args, Env& env);
int RunRecipeLaunch(const std::vector<std::string>& args, Env& env);
int RunLogParse(const std::vector<std::string>& args, Env& env);
int RunLogTriage(const std::vector<std::string>& args, Env& env);
int RunGateCheck(const std::vector<std::string>& args, Env& env);
int RunProfileAnalyze(const std::vector<std::string>& args, Env& env);
int RunData(const std::vector<std::string>& args, Env& env);
int RunServe(const std::vector<std::string>& args, Env& env);
int RunPluginCommand(const std::string& plugin, const std::vector<std::string>& args, Env& env);

// --- helpers shared by subcommands (common.cc) ---

// Prints "attune <command>: <message>" to err (or {"error":...} to out with --json) and returns
// the exit code that matches the status (kExitLockedOrCorrupt for locked/corrupt campaigns,
// kExitUsage for invalid input, else kExitFailed).
int ReportError(Env& env, const std::string& command, const Status& status, bool json);
int ExitCodeFor(const Status& status);

// A plugin host over --plugin-path (global and the command's own), ATTUNE_PLUGIN_PATH and the
// default directories, with every library loaded.
Result<std::unique_ptr<PluginHost>> LoadPlugins(const Env& env,
                                                const std::vector<std::string>& extra_paths);

// The context for plugin objects created by the CLI (no campaign).
PluginContext CliPluginContext(const Env& env);

// Loads the plugins and creates stack `name` with the options `with` (a workflow's `stack: {with:
// ...}`; none by default). Libraries are never unloaded, so the stack may outlive the host.
Result<std::unique_ptr<Stack>> CreateStack(const Env& env, const std::string& name,
                                           const std::vector<std::string>& extra_paths,
                                           const nlohmann::json& with = nlohmann::json::object());

Result<std::string> ReadTextFile(const std::string& path);


}  // namespace attune::cli

#endif  // ATTUNE_ENGINE_CLI_CLI_H_
