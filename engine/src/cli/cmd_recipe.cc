// `attune recipe import FILE`: a launch script (evaluated by bash in a sandbox, or read statically
// with --no-exec) or an AutoModel config -> a recipe file.
// `attune recipe launch RECIPE`: what the recipe's stack would run for it (launchers that preview
// a job, e.g. `attune kuberay render`, read its --json form).
#include <cctype>
#include <filesystem>
#include <optional>
#include <fstream>
#include <ostream>

#include "api/placement.h"
#include "cli/args.h"
#include "importer/capture.h"
#include "importer/launch_call.h"
#include "importer/static_check.h"

namespace attune::cli {

namespace {

// A file whose first statement is a YAML key (`model:`, `step_scheduler:`) is a config file (an
// AutoModel YAML), not a script: the stack reads it as it is.
bool LooksLikeYamlConfig(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    if (line.substr(first, 3) == "---") continue;
    size_t key_end = first;
    while (key_end < line.size() && (std::isalnum(static_cast<unsigned char>(line[key_end])) ||
                                     line[key_end] == '_' || line[key_end] == '.' || line[key_end] == '-')) {
      ++key_end;
    }
    return key_end > first && key_end < line.size() && line[key_end] == ':' &&
           (key_end + 1 == line.size() || line[key_end + 1] == ' ' || line[key_end + 1] == '\r');
  }
  return false;
}

// Changes the working directory for the lifetime of the guard (a stack resolves the config files a
// launch names from where the script made the call).
class CwdGuard {
 public:
  explicit CwdGuard(const std::string& dir) {
    std::error_code ec;
    saved_ = std::filesystem::current_path(ec);
    if (!dir.empty()) std::filesystem::current_path(dir, ec);
  }
  ~CwdGuard() {
    std::error_code ec;
    std::filesystem::current_path(saved_, ec);
  }

 private:
  std::filesystem::path saved_;
};

Result<std::vector<std::pair<std::string, std::string>>> ParseEnvOptions(const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--env '" + item + "': expected NAME=VALUE");
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

Result<double> PositiveNumber(const std::string& option, const std::string& text, double max) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used == text.size() && v > 0 && v <= max) return v;
  } catch (const std::exception&) {
  }
  return Status::InvalidArgument(option + " '" + text + "': expected a number above 0 and at most " +
                                 std::to_string(static_cast<long>(max)));
}

// What the evaluation saw besides the launch, said on stderr: nothing is dropped silently.
void SayCapture(Env& env, const std::string& file, const importer::Capture& capture,
                const importer::LaunchCall& launch, bool batch_job) {
  const std::string who = "attune recipe import: " + file + ": ";
  // As a batch script, the file ran through the sbatch stub: its first call.
  const std::optional<size_t> job = batch_job && !capture.calls.empty() && capture.calls[0].argv.at(0) == "sbatch"
                                        ? std::optional<size_t>(0) : std::nullopt;
  if (job) {
    *env.err << who << "a Slurm batch script (#SBATCH lines): it ran as the job's first task runs it, "
                       "with the SLURM_* variables of the allocation it asks for"
             << (launch.wrapper == job ? "; an srun in it that gives no layout has the job's (#SBATCH --nodes, "
                                         "--ntasks-per-node)"
                                       : "")
             << "\n";
  }
  if (job && launch.wrapper == job) {
    // said above
  } else if (launch.wrapper && capture.calls[*launch.wrapper].argv.at(0) == "sbatch") {
    *env.err << who << "the launch ran in the batch script given to "
             << importer::DescribeCall(capture.calls[*launch.wrapper])
             << "; imported as that script runs it, an srun there with the job's layout (#SBATCH "
                "--nodes, --ntasks-per-node) where it gives none\n";
  } else if (launch.wrapper) {
    *env.err << who << "the launch ran inside a shell of "
             << importer::DescribeCall(capture.calls[*launch.wrapper])
             << "; imported as that launcher running it directly\n";
  }
  for (size_t i = 0; i < capture.calls.size(); ++i) {
    if (i == launch.index || (launch.wrapper && i == *launch.wrapper) || (job && i == *job)) continue;
    if (capture.calls[i].argv.at(0) == "sbatch") {
      *env.err << who << "ran the batch script given to " << importer::DescribeCall(capture.calls[i])
               << " as the job's first task (its #SBATCH layout is the job's; the job was not submitted)\n";
      continue;
    }
    *env.err << who
             << (capture.calls[i].refused_file_command
                     ? "refused by the read-only sandbox (the script went on as if it had worked): "
                     : "also called (recorded, not run, not in the recipe): ")
             << importer::DescribeCall(capture.calls[i]) << "\n";
  }
  for (const auto& dir : capture.writable_copies) {
    *env.err << who << "the script writes into " << dir
             << ", which the sandbox keeps read-only: it ran on a scratch copy of it, and what it wrote "
                "there was thrown away\n";
  }
  for (const auto& unset : capture.unset_variables) {
    *env.err << who << "unresolved: " << unset
             << " is read but not set (the script ran with it empty); give it with --env NAME=VALUE, "
                "or --arg VALUE for a positional argument\n";
  }
  if (capture.exit_code != 0) {
    *env.err << who << "the script exited with status " << capture.exit_code
             << " after the launch was recorded; its last error lines:\n" << capture.stderr_tail;
    if (!capture.stderr_tail.empty() && capture.stderr_tail.back() != '\n') *env.err << "\n";
  }
}

// Runs the script under bash in the sandbox and returns the launch call's command line.
Result<importer::LaunchCall> EvaluateScript(Env& env, const ArgParser& p, const std::string& file,
                                            bool batch_job, importer::Capture* capture) {
  importer::CaptureOptions o;
  o.as_batch_job = batch_job;
  o.args = p.GetList("arg");
  ATTUNE_ASSIGN_OR_RETURN(o.env, ParseEnvOptions(p.GetList("env")));
  if (p.Has("gpus-per-node")) {
    ATTUNE_ASSIGN_OR_RETURN(double gpus, PositiveNumber("--gpus-per-node", p.Get("gpus-per-node"), 1024));
    if (gpus != static_cast<int>(gpus)) {
      return Status::InvalidArgument("--gpus-per-node '" + p.Get("gpus-per-node") + "': expected a whole number");
    }
    o.gpus = static_cast<int>(gpus);
  }
  ATTUNE_ASSIGN_OR_RETURN(o.timeout_s, PositiveNumber("--timeout", p.Get("timeout"), 3600));
  ATTUNE_ASSIGN_OR_RETURN(*capture, importer::CaptureScript(file, o));
  if (capture->timed_out) {
    return Status::DeadlineExceeded(file + ": the script did not finish within " + p.Get("timeout") +
                                    " s in the sandbox (--timeout); its last error lines:\n" +
                                    capture->stderr_tail);
  }
  auto launch = importer::PickLaunch(capture->calls);
  if (!launch.ok()) {
    std::string why = file + ": " + launch.status().message() + "\nThe script exited with status " +
                      std::to_string(capture->exit_code);
    if (!capture->stderr_tail.empty()) why += "; its last error lines:\n" + capture->stderr_tail;
    if (!capture->stdout_tail.empty()) {
      if (!why.empty() && why.back() != '\n') why += capture->stderr_tail.empty() ? "; " : "\n";
      why += "its last output lines:\n" + capture->stdout_tail;
    }
    for (const auto& unset : capture->unset_variables) {
      why += "\nunresolved: " + unset + " is read but not set; give it with --env NAME=VALUE or --arg VALUE";
    }
    return Status::InvalidArgument(why);
  }
  (void)env;
  return launch;
}

}  // namespace

int RunRecipeImport(const std::vector<std::string>& args, Env& env) {
  ArgParser p("recipe import FILE [--stack NAME] [-o OUT] [--arg VALUE]... [--env NAME=VALUE]...\n"
              "                    [--gpus-per-node N] [--nodes N] [--timeout S] [--no-exec]",
              "Reads a launch script as you have it and writes the recipe (YAML) to OUT or stdout. "
              "The script runs under the real bash in a bubblewrap sandbox (read-only root, no "
              "network, scratch HOME and /tmp) with torchrun, python, ray, srun, mpirun, "
              "deepspeed, accelerate, uv, automodel, nvidia-smi, pip, sleep, ... replaced by stubs "
              "that record their arguments, environment and folder instead of running: bash "
              "evaluates branches, case, source, arrays and substitutions, and the last training "
              "launch it made becomes the recipe. Positional arguments and environment the script "
              "needs come from --arg and --env; one it reads unset is reported. --no-exec reads "
              "the script without running it and refuses (naming the lines) what it cannot "
              "evaluate. A YAML config file (an AutoModel config) is read as it is; it names no "
              "launch, so --nodes and --gpus-per-node give its topology. Everything "
              "not placed in the recipe is listed on stderr; nothing is dropped silently.");
  p.Options()("stack", po::value<std::string>()->default_value("megatron"), "stack plugin")(
      "output,o", po::value<std::string>(), "recipe file to write (default: stdout)")(
      "arg", po::value<std::vector<std::string>>(), "a positional argument for the script ($1, $2, ... in order)")(
      "env", po::value<std::vector<std::string>>(), "NAME=VALUE in the script's environment")(
      "gpus-per-node", po::value<std::string>(),
      "nvidia-smi in the sandbox answers as a node with N GPUs; for a config file, its GPUs per node")(
      "nodes", po::value<std::string>(), "for a config file: the nodes it runs on")(
      "timeout", po::value<std::string>()->default_value("30"), "seconds the script may run in the sandbox")(
      "no-exec", "read the script statically instead of running it under bash")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("file");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  const char* cmd = "recipe import";
  if (!p.Has("file")) return ReportError(env, cmd, Status::InvalidArgument("missing FILE"), false);
  const std::string file = p.Get("file");
  auto text = ReadTextFile(file);
  if (!text.ok()) return ReportError(env, cmd, text.status(), false);
  if (text->find('\0') != std::string::npos) {
    return ReportError(env, cmd, Status::InvalidArgument(
                                     file + ": holds NUL bytes at offset " +
                                     std::to_string(text->find('\0')) +
                                     "; a launch script or config is text (is this the right file?)"),
                       false);
  }
  auto stack = CreateStack(env, p.Get("stack"), p.GetList("plugin-path"));
  if (!stack.ok()) return ReportError(env, cmd, stack.status(), false);

  std::string command = *text;
  if (LooksLikeYamlConfig(*text)) {
    // A config is given to the stack as a launch that names it (the AutoModel stack runs it with
    // `automodel FILE`; a stack without config files refuses it).
    std::error_code ec;
    command = ShellQuote(std::filesystem::absolute(file, ec).lexically_normal().string());
    // The topology a config cannot say, as the launcher's own options would give it.
    for (const auto& [option, flag] : {std::pair<const char*, const char*>{"gpus-per-node", "--nproc-per-node"},
                                       std::pair<const char*, const char*>{"nodes", "--nnodes"}}) {
      if (!p.Has(option)) continue;
      auto n = PositiveNumber(std::string("--") + option, p.Get(option), 1 << 20);
      if (!n.ok() || *n != static_cast<int>(*n)) {
        return ReportError(env, cmd, Status::InvalidArgument(std::string("--") + option + " '" + p.Get(option) +
                                                             "': expected a whole number above 0"), false);
      }
      command += std::string(" ") + flag + " " + std::to_string(static_cast<int>(*n));
    }
    command += "\n";
  } else if (p.Has("nodes")) {
    return ReportError(env, cmd, Status::InvalidArgument("--nodes is for a config file; a launch script's "
                                                         "launch says its nodes"), false);
  }
  std::string call_dir;
  importer::Capture capture;
  importer::LaunchCall launch;
  const bool config = LooksLikeYamlConfig(*text);
  const bool evaluate = !config && !p.Has("no-exec");
  const bool batch_job = evaluate && importer::IsBatchScript(*text);
  if (p.Has("no-exec") && !config) {
    Status plain = importer::CheckStaticScript(*text, file);
    if (!plain.ok()) return ReportError(env, cmd, plain, false);
    if (importer::IsBatchScript(*text)) {
      // Read statically, a batch script's srun still runs on the job's allocation.
      std::vector<std::string> added;
      command = importer::WithBatchLayout(*text, &added);
      std::string words;
      for (const auto& w : added) words += " " + w;
      if (!words.empty()) {
        *env.err << "attune recipe import: " << file << ": a Slurm batch script: its srun runs on "
                 << "the allocation its #SBATCH lines ask for:" << words << "\n";
      }
    }
  }
  if (evaluate) {
    auto picked = EvaluateScript(env, p, file, batch_job, &capture);
    if (!picked.ok()) return ReportError(env, cmd, picked.status(), false);
    launch = *picked;
    command = launch.command;
    call_dir = launch.cwd;
  }
  std::vector<std::string> unknown;
  Result<Recipe> recipe = Status::Internal("not imported");
  {
    CwdGuard in(call_dir);
    recipe = (*stack)->ImportLaunch(command, &unknown);
  }
  if (!recipe.ok()) {
    Status why = recipe.status();
    if (evaluate) why = why.WithContext(file + ": the launch the script made: " +
                                        importer::DescribeCall(capture.calls[launch.index]));
    if (config) why = why.WithContext(file + " is a YAML config, not a launch script (the " +
                                      p.Get("stack") + " stack was asked to read it)");
    return ReportError(env, cmd, why, false);
  }
  if (evaluate) SayCapture(env, file, capture, launch, batch_job);
  for (const auto& token : unknown) {
    *env.err << "attune recipe import: " << file << ": not understood: " << token << "\n";
  }
  std::string yaml = RecipeToYaml(*recipe);
  if (!p.Has("output")) {
    *env.out << yaml;
    return kExitOk;
  }
  std::ofstream out(p.Get("output"), std::ios::binary | std::ios::trunc);
  out << yaml;
  if (!out) return ReportError(env, cmd, Status::IoError("cannot write " + p.Get("output")), false);
  *env.err << "wrote " << p.Get("output") << " (recipe " << RecipeId(*recipe) << ")\n";
  return kExitOk;
}

int RunRecipeLaunch(const std::vector<std::string>& args, Env& env) {
  ArgParser p("recipe launch RECIPE [--json] [--devices-per-node N]",
              "Prints the command line and environment that the recipe's stack (its `stack:` "
              "key) renders for it: what a launcher is given to run. --json prints "
              "{\"argv\": [...], \"env\": [[NAME, value], ...], \"workdir\": \"...\", \"devices\": N, "
              "\"nodes\": N}: the devices a job of it occupies (Stack::Devices) and the nodes they "
              "fill on a cluster of --devices-per-node (default: the topology's GPUs per node).");
  p.Options()("json", "machine-readable output")(
      "devices-per-node", po::value<int>()->default_value(0), "the cluster's devices per node, for `nodes`")(
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
  const int devices = std::max(1, (*stack)->Devices(*recipe));
  *env.out << nlohmann::json{{"argv", launch->argv}, {"env", vars}, {"workdir", launch->workdir},
                             {"devices", devices},
                             {"nodes", NodesFor(*recipe, devices, p.vm()["devices-per-node"].as<int>())}}
                  .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
           << "\n";
  return kExitOk;
}

}  // namespace attune::cli
