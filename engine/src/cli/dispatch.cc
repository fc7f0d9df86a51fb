// The command table, global options and dispatch (built-in command or plugin command).
#include <filesystem>
#include <iostream>
#include <string_view>

#include "cli/cli.h"

namespace attune::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"validate", "validate WORKFLOW [--json]", "check a workflow file without running it",
       RunValidate},
      {"run", "run WORKFLOW [--dir DIR] [--on-stop leave|cancel] [--json]",
       "start a campaign, or resume the one in DIR", RunRun},
      {"status", "status DIR [--json]", "show a campaign's state", RunStatus},
      {"events", "events DIR [--json] [--follow]", "print a campaign's event log", RunEvents},
      {"verify", "verify DIR [--json]", "check a campaign's log for damage (exit 1 if damaged)",
       RunVerify},
      {"plugins", "plugins [--json]", "list the plugins found on the search path", RunPlugins},
      {"stack show", "stack show NAME [--json]", "show a stack's levers and rules", RunStackShow},
      {"stack check", "stack check NAME RECIPE [--json]",
       "the stack conformance suite: does the plugin keep the contract on RECIPE?", RunStackCheck},
      {"launcher check", "launcher check NAME [--with JSON|@FILE] [--json]",
       "the launcher conformance suite: small real jobs through the plugin with your options",
       RunLauncherCheck},
      {"agent check", "agent check NAME [--with JSON|@FILE] [--json]",
       "the agent conformance suite: proposals on views built from a real stack and recipe",
       RunAgentCheck},
      {"recipe import", "recipe import FILE [--stack NAME] [-o OUT]",
       "turn a launch script or command line into a recipe file", RunRecipeImport},
      {"recipe launch", "recipe launch RECIPE [--json]",
       "print the command and environment the recipe's stack would launch", RunRecipeLaunch},
      {"log parse", "log parse --stack NAME FILE [--recipe R] [--json]",
       "parse a training log into per-iteration numbers and a summary", RunLogParse},
      {"log triage", "log triage --stack NAME FILE [--exit-code N] [--state S] [--ran-seconds T] [--json]",
       "classify why a job failed from its log", RunLogTriage},
      {"gate check", "gate check --stack NAME BASE CANDIDATE [--json]",
       "may CANDIDATE be compared with BASE? (exit 0 pass, 1 refused)", RunGateCheck},
      {"profile analyze", "profile analyze TRACE... [--json] [--top N] [--svg F] ...",
       "what PyTorch profiler traces say: per-rank breakdown, NCCL, launches, diagnosis",
       RunProfileAnalyze},
      {"data", "data lengths|pack|encode DATA --tokenizer T ...",
       "token lengths of a JSONL dataset; pack it into Megatron's indexed format", RunData},
      {"serve", "serve [ROOT...] [--port N] [--bind ADDR] [--token T]",
       "a live, read-only dashboard of the campaigns under ROOTs", RunServe},
  };
  return kCommands;
}

namespace {

void PrintHelp(std::ostream& out) {
  out << "attune: tunes the throughput of an LLM training recipe within a GPU-hour budget\n\n"
         "usage: attune [--plugin-path DIR]... COMMAND [ARGS...]\n"
         "       attune PLUGIN COMMAND [ARGS...]   (a plugin's own commands; attune PLUGIN "
         "--help)\n\ncommands:\n";
  for (const Command& c : Commands()) {
    std::string usage = c.usage;
    out << "  " << usage << std::string(usage.size() < 60 ? 60 - usage.size() : 1, ' ')
        << c.summary << "\n";
  }
  out << "\nexit codes: 0 ok, 1 failed/refused, 2 usage or invalid input, 3 paused, "
         "4 campaign locked or corrupt, 5 not implemented (by this build or the plugin)\n"
         "docs: docs/cli.md\n";
}

// Finds the longest command name ("log parse" before "log") that prefixes the arguments.
const Command* Match(const std::vector<std::string>& args, size_t* used) {
  const Command* best = nullptr;
  for (const Command& c : Commands()) {
    std::string_view name = c.name;
    size_t space = name.find(' ');
    bool two = space != std::string_view::npos;
    if (args.empty() || args[0] != name.substr(0, space)) continue;
    if (two && (args.size() < 2 || args[1] != name.substr(space + 1))) continue;
    if (!best || two) {
      best = &c;
      *used = two ? 2 : 1;
    }
  }
  return best;
}

std::string SelfPath(const char* argv0) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : exe.string();
}

// Consumes leading global options; returns false (with *code set) when done already.
bool ParseGlobals(std::vector<std::string>* args, Env* env, int* code) {
  while (!args->empty()) {
    const std::string& a = (*args)[0];
    if (a == "--help" || a == "-h" || a == "help") {
      PrintHelp(*env->out);
      *code = kExitOk;
      return false;
    }
    if (a == "--version") {
      *env->out << "attune 0.1.0 (plugin ABI " << kAbiVersion << ")\n";
      *code = kExitOk;
      return false;
    }
    if (a == "--plugin-path" && args->size() >= 2) {
      env->plugin_paths.push_back((*args)[1]);
      args->erase(args->begin(), args->begin() + 2);
      continue;
    }
    if (a.rfind("--plugin-path=", 0) == 0) {
      env->plugin_paths.push_back(a.substr(14));
      args->erase(args->begin());
      continue;
    }
    return true;
  }
  PrintHelp(*env->err);
  *code = kExitUsage;
  return false;
}

}  // namespace

int Main(int argc, char** argv) {
  Env env{{}, &std::cout, &std::cerr, SelfPath(argv[0])};
  std::vector<std::string> args(argv + 1, argv + argc);
  int code = kExitOk;
  if (!ParseGlobals(&args, &env, &code)) return code;
  size_t used = 0;
  if (const Command* c = Match(args, &used)) {
    return c->run(std::vector<std::string>(args.begin() + used, args.end()), env);
  }
  if (!args[0].empty() && args[0][0] == '-') {
    *env.err << "attune: unknown option '" << args[0] << "' (see attune --help)\n";
    return kExitUsage;
  }
  return RunPluginCommand(args[0], std::vector<std::string>(args.begin() + 1, args.end()), env);
}

}  // namespace attune::cli
