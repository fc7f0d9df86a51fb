#include "launch.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "shell.h"

namespace attune::megatron {
namespace {

// torchrun / torch.distributed.run options that take a value (both spellings are accepted).
const std::set<std::string> kTorchrunValued = {
    "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend",
    "rdzv_endpoint", "rdzv_id", "rdzv_conf", "max_restarts", "monitor_interval", "start_method",
    "role", "log_dir", "redirects", "tee", "local_addr", "logs_specs", "local_ranks_filter",
    "rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf", "max-restarts", "monitor-interval",
    "start-method", "log-dir", "local-addr", "logs-specs", "local-ranks-filter", "nproc-per-node",
    "node-rank", "master-addr", "master-port", "event_log_handler", "event-log-handler"};
const std::set<std::string> kTorchrunBare = {"standalone", "no_python", "no-python", "run_path",
                                             "run-path", "use_env", "use-env", "module", "m"};
const std::set<std::string> kRayValued = {
    "address", "runtime-env-json", "runtime-env", "working-dir", "submission-id", "job-id",
    "entrypoint-num-cpus", "entrypoint-num-gpus", "entrypoint-memory", "entrypoint-resources",
    "metadata-json", "headers", "log-style", "log-color", "entrypoint-label-selector"};
const std::set<std::string> kLaunchPrefixes = {"then", "do", "else", "exec", "time", "nohup", "{"};

std::string Base(const std::string& word) {
  size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool IsPython(const std::string& word) {
  std::string b = Base(word);
  return b == "python" || b.rfind("python3", 0) == 0 || b.rfind("python2", 0) == 0;
}

bool IsTorchrunModule(const std::string& m) {
  return m == "torch.distributed.run" || m == "torch.distributed.launch";
}

// "--opt=value" or "--opt value": the option name without dashes, its value and the next index.
struct Option {
  std::string name;
  std::optional<std::string> value;
  size_t next = 0;
};

Option ReadOption(const std::vector<std::string>& w, size_t i, const std::set<std::string>& valued) {
  Option o;
  std::string word = w[i];
  size_t dashes = word.rfind("--", 0) == 0 ? 2 : 1;
  std::string body = word.substr(dashes);
  size_t eq = body.find('=');
  o.name = body.substr(0, eq);
  o.next = i + 1;
  if (eq != std::string::npos) {
    o.value = body.substr(eq + 1);
  } else if (valued.count(o.name) && i + 1 < w.size()) {
    o.value = w[i + 1];
    o.next = i + 2;
  }
  return o;
}

int LeadingInt(const std::string& s) {
  // "2" or "1:4" (elastic min:max; the maximum is what runs).
  size_t colon = s.find(':');
  std::string part = colon == std::string::npos ? s : s.substr(colon + 1);
  try {
    return std::stoi(part);
  } catch (...) {
    return 0;
  }
}

bool LooksLikeFlag(const std::string& w) {
  if (w.size() < 2 || w[0] != '-') return false;
  if (w[1] == '-') return w.size() > 2;
  return std::isalpha(static_cast<unsigned char>(w[1]));
}

bool IsRedirection(const std::string& w) {
  static const std::set<std::string> ops = {">", ">>", "<", "2>", "2>>", "&>", "1>", "2>&1", ">&2", "1>&2"};
  if (ops.count(w)) return true;
  return w.size() > 1 && (w[0] == '>' || w.rfind("2>", 0) == 0 || w.rfind("1>", 0) == 0 || w.rfind("&>", 0) == 0);
}

void AddArg(Recipe* recipe, Arg arg, std::vector<std::string>* unknown) {
  for (auto& existing : recipe->args) {
    if (existing.flag == arg.flag) {
      unknown->push_back(arg.flag + " is given twice; the last value is kept, as argparse does");
      existing.values = std::move(arg.values);
      return;
    }
  }
  recipe->args.push_back(std::move(arg));
}

// The script's arguments: "--flag v1 v2", "--flag=v"; anything else goes to `unknown`.
void ParseScriptArgs(const std::vector<std::string>& w, size_t i, Recipe* recipe,
                     std::vector<std::string>* unknown) {
  while (i < w.size()) {
    const std::string& word = w[i];
    if (IsRedirection(word)) {
      bool bare = word == ">" || word == ">>" || word == "<" || word == "2>" || word == "1>" || word == "&>" || word == "2>>";
      unknown->push_back("redirection '" + word + (bare && i + 1 < w.size() ? " " + w[i + 1] : "") + "' ignored");
      i += bare ? 2 : 1;
      continue;
    }
    if (word.rfind("--", 0) != 0 || word.size() < 3) {
      unknown->push_back(word);
      ++i;
      continue;
    }
    Arg arg;
    size_t eq = word.find('=');
    arg.flag = word.substr(0, eq);
    if (eq != std::string::npos) arg.values.push_back(word.substr(eq + 1));
    ++i;
    while (eq == std::string::npos && i < w.size() && !LooksLikeFlag(w[i]) && !IsRedirection(w[i])) {
      arg.values.push_back(w[i++]);
    }
    AddArg(recipe, std::move(arg), unknown);
  }
}

void SetEnv(Recipe* recipe, const std::string& name, const std::string& value) {
  for (auto& kv : recipe->env) {
    if (kv.first == name) {
      kv.second = value;
      return;
    }
  }
  recipe->env.emplace_back(name, value);
}

// Reads `--runtime-env-json '{"env_vars": {...}}'` into the recipe's environment.
void ReadRayRuntimeEnv(const std::string& text, Recipe* recipe, std::vector<std::string>* unknown) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    unknown->push_back("--runtime-env-json " + text + " (not valid JSON)");
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "env_vars" || !it.value().is_object()) {
      unknown->push_back("--runtime-env-json field '" + it.key() + "' (only env_vars is read)");
      continue;
    }
    for (auto e = it.value().begin(); e != it.value().end(); ++e) {
      SetEnv(recipe, e.key(), e.value().is_string() ? e.value().get<std::string>() : e.value().dump());
    }
  }
}

// Python interpreter options before the script or -m.
size_t SkipPythonOptions(const std::vector<std::string>& w, size_t i) {
  while (i < w.size() && w[i].size() > 1 && w[i][0] == '-' && w[i] != "-m" && w[i] != "-c") {
    bool valued = w[i] == "-W" || w[i] == "-X";
    i += valued ? 2 : 1;
  }
  return i;
}

Status ParseTorchrun(const std::vector<std::string>& w, size_t i, Recipe* recipe,
                     std::vector<std::string>* unknown) {
  recipe->launcher_hint = "torchrun";
  bool module = false, no_python = false;
  while (i < w.size() && LooksLikeFlag(w[i])) {
    Option o = ReadOption(w, i, kTorchrunValued);
    std::string n = o.name;
    std::replace(n.begin(), n.end(), '-', '_');
    if (n == "nproc_per_node" && o.value) recipe->topology.gpus_per_node = LeadingInt(*o.value);
    else if (n == "nnodes" && o.value) recipe->topology.nodes = LeadingInt(*o.value);
    else if (n == "module" || n == "m") module = true;
    else if (n == "no_python") no_python = true;
    else if (!kTorchrunValued.count(o.name) && !kTorchrunBare.count(o.name)) unknown->push_back(w[i]);
    i = o.next;
  }
  if (recipe->topology.gpus_per_node <= 0 || recipe->topology.nodes <= 0) {
    return Status::InvalidArgument("torchrun: --nproc-per-node and --nnodes must be positive integers "
                                   "(e.g. --nproc-per-node 8 --nnodes 2)");
  }
  if (i >= w.size()) return Status::InvalidArgument("torchrun: no training script after the launcher options");
  if (module) recipe->entry = {"-m", w[i]};
  else recipe->entry = {w[i]};
  if (no_python) unknown->push_back("--no-python (the entry is run as a program)");
  ParseScriptArgs(w, i + 1, recipe, unknown);
  return Status::Ok();
}

// DeepSpeed's launcher (`deepspeed [options] script.py args`, Megatron-DeepSpeed's scripts): its
// options (deepspeed/launcher/runner.py), with `-` and `_` spellings alike.
const std::set<std::string> kDeepspeedValued = {
    "num_gpus", "num_nodes", "hostfile", "H", "include", "i", "exclude", "e", "master_port",
    "master_addr", "launcher", "launcher_args", "node_rank", "ssh_port", "bind_core_list",
    "min_elastic_nodes", "max_elastic_nodes", "autotuning", "enable_each_rank_log", "venv_script",
    "comment"};
const std::set<std::string> kDeepspeedBare = {"no_python", "module", "no_local_rank", "force_multi",
                                              "save_pid", "bind_cores_to_rank", "no_ssh_check",
                                              "no_ssh", "elastic_training", "use_hostfile"};

// "--num-gpus=8" -> "--num_gpus=8": the option's name with '_' (its leading dashes and value kept).
std::string Underscored(const std::string& word) {
  size_t start = word.find_first_not_of('-');
  size_t end = std::min(word.find('='), word.size());
  std::string out = word;
  if (start == std::string::npos) return out;
  std::replace(out.begin() + static_cast<long>(start), out.begin() + static_cast<long>(end), '-', '_');
  return out;
}

Status ParseDeepspeed(const std::vector<std::string>& w, size_t i, Recipe* recipe,
                      std::vector<std::string>* unknown) {
  recipe->launcher_hint = "deepspeed";
  bool module = false, gpus_given = false;
  std::vector<std::string> words = w;
  while (i < words.size() && LooksLikeFlag(words[i])) {
    words[i] = Underscored(words[i]);
    Option o = ReadOption(words, i, kDeepspeedValued);
    if (o.name == "num_gpus" && o.value) {
      recipe->topology.gpus_per_node = LeadingInt(*o.value);
      gpus_given = true;
    } else if (o.name == "num_nodes" && o.value) {
      recipe->topology.nodes = LeadingInt(*o.value);
    } else if (o.name == "module") {
      module = true;
    } else if (!kDeepspeedValued.count(o.name) && !kDeepspeedBare.count(o.name)) {
      unknown->push_back(w[i]);
    }
    i = o.next;
  }
  if (recipe->topology.gpus_per_node <= 0 || recipe->topology.nodes <= 0) {
    return Status::InvalidArgument("deepspeed: --num_gpus and --num_nodes must be positive integers");
  }
  if (!gpus_given) {
    unknown->push_back("deepspeed without --num_gpus runs on every GPU of each node; the recipe says " +
                       std::to_string(recipe->topology.gpus_per_node) +
                       " GPU(s) per node: set topology.gpus_per_node");
  }
  if (i >= w.size()) return Status::InvalidArgument("deepspeed: no training script after the launcher options");
  if (module) recipe->entry = {"-m", w[i]};
  else recipe->entry = {w[i]};
  ParseScriptArgs(w, i + 1, recipe, unknown);
  return Status::Ok();
}

Status ParsePython(const std::vector<std::string>& w, size_t i, Recipe* recipe,
                   std::vector<std::string>* unknown) {
  std::string interpreter = w[i];
  i = SkipPythonOptions(w, i + 1);
  if (i >= w.size()) return Status::InvalidArgument("python: no script or module to run");
  if (w[i] == "-m" && i + 1 < w.size()) {
    if (IsTorchrunModule(w[i + 1])) return ParseTorchrun(w, i + 2, recipe, unknown);
    recipe->entry = {interpreter, "-m", w[i + 1]};
    i += 2;
  } else {
    recipe->entry = {interpreter, w[i]};
    ++i;
  }
  if (recipe->launcher_hint.empty()) recipe->launcher_hint = "python";
  ParseScriptArgs(w, i, recipe, unknown);
  return Status::Ok();
}

void SlimeTopology(Recipe* recipe) {
  auto nodes = GetValue(*recipe, "--actor-num-nodes");
  auto gpus = GetValue(*recipe, "--actor-num-gpus-per-node");
  if (nodes) recipe->topology.nodes = std::max(1, LeadingInt(*nodes));
  if (gpus) recipe->topology.gpus_per_node = std::max(1, LeadingInt(*gpus));
}

Status ParseRay(const std::vector<std::string>& w, size_t i, Recipe* recipe,
                std::vector<std::string>* unknown) {
  recipe->launcher_hint = "ray";
  i += 3;  // "ray job submit"
  while (i < w.size() && w[i] != "--") {
    if (!LooksLikeFlag(w[i])) { unknown->push_back(w[i++]); continue; }
    Option o = ReadOption(w, i, kRayValued);
    if (o.name == "runtime-env-json" && o.value) ReadRayRuntimeEnv(*o.value, recipe, unknown);
    else if (!kRayValued.count(o.name) && o.name != "no-wait" && o.name != "verify") unknown->push_back(w[i]);
    i = o.next;
  }
  if (i + 1 >= w.size()) return Status::InvalidArgument("ray job submit: expected '-- python3 train.py ...' after the options");
  ++i;
  if (!IsPython(w[i])) return Status::InvalidArgument("ray job submit: expected a python entrypoint after '--', found '" + w[i] + "'");
  ATTUNE_RETURN_IF_ERROR(ParsePython(w, i, recipe, unknown));
  recipe->launcher_hint = "ray";
  SlimeTopology(recipe);
  return Status::Ok();
}

// Index of the launcher word in a command (after `srun ...`, `then`, ...), or w.size().
size_t FindLauncher(const std::vector<std::string>& w) {
  for (size_t i = 0; i < w.size(); ++i) {
    std::string b = Base(w[i]);
    if (b == "torchrun" || b == "deepspeed" || IsPython(w[i])) return i;
    if (b == "ray" && i + 2 < w.size() && w[i + 1] == "job" && w[i + 2] == "submit") return i;
    if (kLaunchPrefixes.count(w[i]) || b == "srun" || b == "mpirun" || w[i][0] == '-') continue;
    if (i > 0 && (Base(w[0]) == "srun" || Base(w[0]) == "mpirun")) continue;
    return w.size();
  }
  return w.size();
}

// The task layout `srun` gives the command after it: nodes and tasks per node (0 when not said).
struct SrunLayout {
  int nodes = 0;
  int tasks_per_node = 0;
  int tasks = 0;
};

// Reads srun's layout options among the words before the launcher; the others are reported.
SrunLayout ReadSrun(const std::vector<std::string>& w, size_t at, std::vector<std::string>* unknown) {
  SrunLayout layout;
  for (size_t k = 1; k < at; ++k) {
    std::string word = w[k], value;
    bool has_value = false;
    size_t eq = word.find('=');
    if (word.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = word.substr(eq + 1);
      word = word.substr(0, eq);
      has_value = true;
    } else if ((word.rfind("-N", 0) == 0 || word.rfind("-n", 0) == 0) && word.size() > 2) {
      value = word.substr(2);
      word = word.substr(0, 2);
      has_value = true;
    }
    bool layout_flag = word == "-N" || word == "--nodes" || word == "--ntasks-per-node" ||
                       word == "-n" || word == "--ntasks";
    if (!layout_flag) {
      unknown->push_back(w[k] + " (an srun option before the launcher: how Slurm runs the job, not the recipe; "
                                "give it to the slurm launcher as srun_args)");
      continue;
    }
    if (!has_value) {
      if (k + 1 >= at) break;
      value = w[++k];
    }
    int n = LeadingInt(value.substr(0, value.find('-')));  // "2-4" nodes: the minimum is what is sure
    if (n <= 0) {
      // A template's placeholder (#SBATCH --nodes=your_own_num_nodes) or an unset variable: the
      // layout is not known from it, and a topology taken from it would be made up.
      unknown->push_back(
          (value.empty()
               ? word + "= (srun's layout, but it has no value"
               : word + " " + value + " (srun's layout, but '" + value + "' is not a number") +
          ": the topology does not come from it; give the script a number, or set the recipe's "
          "topology)");
      continue;
    }
    if (word == "-N" || word == "--nodes") layout.nodes = n;
    else if (word == "--ntasks-per-node") layout.tasks_per_node = n;
    else layout.tasks = n;
  }
  return layout;
}

}  // namespace

Result<Recipe> ImportLaunchScript(std::string_view script, std::vector<std::string>* unknown) {
  std::vector<std::string> sink;
  if (!unknown) unknown = &sink;
  ShellInterpreter shell;
  auto commands = shell.Run(script);
  Recipe recipe;
  recipe.stack = "megatron";
  for (const auto& cmd : commands) {
    size_t at = FindLauncher(cmd.words);
    if (at == cmd.words.size()) continue;
    for (const auto& [k, v] : shell.Exported()) SetEnv(&recipe, k, v);
    for (const auto& [k, v] : cmd.assignments) SetEnv(&recipe, k, v);
    SrunLayout srun;
    if (at > 0 && Base(cmd.words[0]) == "srun") {
      srun = ReadSrun(cmd.words, at, unknown);
    } else {
      for (size_t k = 0; k < at; ++k) unknown->push_back(cmd.words[k] + " (before the launcher; ignored)");
    }
    const std::string launcher = Base(cmd.words[at]);
    Status st = launcher == "torchrun"    ? ParseTorchrun(cmd.words, at + 1, &recipe, unknown)
                : launcher == "deepspeed" ? ParseDeepspeed(cmd.words, at + 1, &recipe, unknown)
                : launcher == "ray"       ? ParseRay(cmd.words, at, &recipe, unknown)
                                          : ParsePython(cmd.words, at, &recipe, unknown);
    if (!st.ok()) return st;
    // srun starting one training process per task (no torchrun under it): srun's layout is the
    // topology. Rendered, the recipe runs under torchrun with the same processes per node.
    if (recipe.launcher_hint == "python" && (srun.tasks_per_node > 0 || srun.tasks > 0)) {
      int nodes = std::max(1, srun.nodes);
      int per_node = srun.tasks_per_node > 0 ? srun.tasks_per_node : std::max(1, srun.tasks / nodes);
      recipe.topology = Topology{nodes, per_node, recipe.topology.gpu_type};
      recipe.launcher_hint = "srun";
    }
    for (const auto& note : shell.notes()) unknown->push_back(note);
    return recipe;
  }
  return Status::InvalidArgument(
      "no launch command found: expected a line running torchrun, python -m torch.distributed.run, "
      "python <script.py>, deepspeed <script.py> or 'ray job submit ... -- python3 <script.py>'");
}

Result<LaunchSpec> RenderLaunchSpec(const Recipe& recipe) {
  if (recipe.entry.empty()) return Status::InvalidArgument("recipe has no entry point (e.g. [pretrain_gpt.py])");
  if (recipe.topology.nodes < 1 || recipe.topology.gpus_per_node < 1) {
    return Status::InvalidArgument("recipe topology must have nodes >= 1 and gpus_per_node >= 1");
  }
  LaunchSpec spec;
  spec.env = recipe.env;
  std::vector<std::string> entry = recipe.entry;
  bool has_interpreter = IsPython(entry[0]);
  bool ray = recipe.launcher_hint == "ray";
  bool single = recipe.topology.nodes * recipe.topology.gpus_per_node == 1;
  if (ray) {
    spec.argv = {"ray", "job", "submit", "--"};
    if (!has_interpreter) spec.argv.push_back("python3");
  } else if (recipe.launcher_hint == "python" && single && has_interpreter) {
    // A single process: run the script directly, as the user did.
  } else if (recipe.launcher_hint == "deepspeed") {
    // As the user launched it (DeepSpeed's launcher passes --local_rank and its own environment).
    spec.argv = {"deepspeed", "--num_nodes", std::to_string(recipe.topology.nodes), "--num_gpus",
                 std::to_string(recipe.topology.gpus_per_node)};
    if (has_interpreter) entry.erase(entry.begin());
  } else {
    spec.argv = {"torchrun", "--nproc-per-node", std::to_string(recipe.topology.gpus_per_node),
                 "--nnodes", std::to_string(recipe.topology.nodes)};
    if (has_interpreter) entry.erase(entry.begin());
  }
  spec.argv.insert(spec.argv.end(), entry.begin(), entry.end());
  for (const auto& arg : recipe.args) {
    std::vector<std::string> values = arg.values;
    if (ray && arg.flag == "--actor-num-nodes") values = {std::to_string(recipe.topology.nodes)};
    if (ray && arg.flag == "--actor-num-gpus-per-node") values = {std::to_string(recipe.topology.gpus_per_node)};
    spec.argv.push_back(arg.flag);
    spec.argv.insert(spec.argv.end(), values.begin(), values.end());
  }
  return spec;
}

}  // namespace attune::megatron
