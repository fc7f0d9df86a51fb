// Copyright attune authors.
#include "importer/launch_call.h"

#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "attune/recipe.h"  // ShellQuote

namespace attune::importer {
namespace {

bool IsPython(const std::string& name) {
  return name == "python" || name.rfind("python3", 0) == 0;
}

// uv's run options that take a value (uv run --help).
const std::set<std::string> kUvValueOptions = {
    "--with", "--with-requirements", "--with-editable", "--python", "-p", "--project", "--directory",
    "--env-file", "--extra", "--group", "--only-group", "--no-group", "--package", "--index",
    "--index-url", "--default-index", "--extra-index-url", "--find-links", "-f", "--config-file",
    "--cache-dir", "--script", "--module", "-m", "--color", "--python-preference"};

// The command after `uv run [options]`, or empty.
std::vector<std::string> AfterUvRun(const std::vector<std::string>& argv) {
  size_t i = 2;
  while (i < argv.size() && argv[i].size() > 1 && argv[i][0] == '-') {
    if (argv[i] == "--") {
      ++i;
      break;
    }
    const bool joined = argv[i].find('=') != std::string::npos;
    i += !joined && kUvValueOptions.count(argv[i]) ? 2 : 1;
  }
  if (i >= argv.size()) return {};
  return std::vector<std::string>(argv.begin() + static_cast<long>(i), argv.end());
}

// Modules that install or inspect rather than train.
const std::set<std::string> kToolModules = {"pip", "venv", "ensurepip", "site", "json.tool",
                                            "http.server", "pip._internal"};

bool PythonLaunches(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "-c") return false;
    if (a == "-m") return i + 1 < argv.size() && !kToolModules.count(argv[i + 1]);
    if (a == "-W" || a == "-X") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    return true;  // a script
  }
  return false;  // an interactive interpreter
}

bool ArgvLaunches(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  const std::string& name = argv[0];
  if (name == "torchrun" || name == "deepspeed" || name == "srun" || name == "mpirun" ||
      name == "mpiexec" || name == "automodel" || name == "am") {
    return true;
  }
  if (name == "accelerate") return argv.size() > 1 && argv[1] == "launch";
  if (name == "ray") return argv.size() > 2 && argv[1] == "job" && argv[2] == "submit";
  if (name == "uv") return argv.size() > 1 && argv[1] == "run" && ArgvLaunches(AfterUvRun(argv));
  if (IsPython(name)) return PythonLaunches(argv);
  return false;
}

std::vector<std::string> LaunchArgv(const CapturedCall& call) {
  if (!call.argv.empty() && call.argv[0] == "uv") return AfterUvRun(call.argv);
  return call.argv;
}

bool IsShell(const std::string& word) {
  std::string name = word.substr(word.rfind('/') == std::string::npos ? 0 : word.rfind('/') + 1);
  return name == "bash" || name == "sh" || name == "dash" || name == "zsh";
}

// A training call made inside `srun … bash -c '…'`: the launcher's words up to its shell, then the
// training call, as if the launcher had run it directly (`srun -N 2 … python train.py …`).
std::vector<std::string> Unwrapped(const CapturedCall& wrapper, const CapturedCall& inner) {
  std::vector<std::string> argv;
  for (const auto& word : wrapper.argv) {
    if (IsShell(word)) break;
    argv.push_back(word);
  }
  for (const auto& word : LaunchArgv(inner)) argv.push_back(word);
  return argv;
}

// Slurm's layout options, as --name=value words: -N/--nodes, --ntasks-per-node, -n/--ntasks.
void ReadLayoutOption(const std::vector<std::string>& words, size_t* i, std::map<std::string, std::string>* out) {
  static const std::map<std::string, std::string> kNames = {
      {"-N", "--nodes"}, {"--nodes", "--nodes"}, {"--ntasks-per-node", "--ntasks-per-node"},
      {"-n", "--ntasks"}, {"--ntasks", "--ntasks"}};
  const std::string& w = words[*i];
  size_t eq = w.find('=');
  std::string name = eq == std::string::npos ? w : w.substr(0, eq), value;
  if (eq != std::string::npos) {
    value = w.substr(eq + 1);
  } else if ((w.rfind("-N", 0) == 0 || w.rfind("-n", 0) == 0) && w.size() > 2 && w[1] != '-') {
    name = w.substr(0, 2);
    value = w.substr(2);
  } else if (kNames.count(name) && *i + 1 < words.size()) {
    value = words[++*i];
  }
  auto known = kNames.find(name);
  if (known != kNames.end() && !value.empty()) out->emplace(known->second, value);
}

// The layout an sbatch call asks for: its own options first, then its script's #SBATCH lines.
std::map<std::string, std::string> SbatchLayout(const CapturedCall& sbatch) {
  std::map<std::string, std::string> layout;
  for (size_t i = 1; i < sbatch.argv.size(); ++i) ReadLayoutOption(sbatch.argv, &i, &layout);
  for (const std::string& options : SbatchHeader(sbatch.batch_script)) {
    std::istringstream in(options);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    for (size_t i = 0; i < words.size(); ++i) ReadLayoutOption(words, &i, &layout);
  }
  return layout;
}

// The job's layout options (--name=value) that an srun inside the batch job gets from its
// allocation: those it does not give itself.
std::vector<std::string> JobLayoutFor(const std::vector<std::string>& srun_argv, const CapturedCall& sbatch) {
  // srun's own options end where the program it runs begins (a training script's `-n 4` is not
  // srun's).
  std::vector<std::string> options;
  for (size_t i = 0; i < srun_argv.size(); ++i) {
    if (i > 0 && (IsShell(srun_argv[i]) || ArgvLaunches({srun_argv[i]}) || IsPython(srun_argv[i]))) break;
    options.push_back(srun_argv[i]);
  }
  std::map<std::string, std::string> own;
  for (size_t i = 1; i < options.size(); ++i) ReadLayoutOption(options, &i, &own);
  std::vector<std::string> added;
  for (const auto& [name, value] : SbatchLayout(sbatch)) {
    if (!own.count(name)) added.push_back(name + "=" + value);
  }
  return added;
}

// An srun inside a batch job without layout options of its own runs on the job's allocation: its
// words get the job's layout, as Slurm gives it.
std::vector<std::string> WithJobLayout(std::vector<std::string> srun_argv, const CapturedCall& sbatch) {
  std::vector<std::string> added = JobLayoutFor(srun_argv, sbatch);
  srun_argv.insert(srun_argv.begin() + 1, added.begin(), added.end());
  return srun_argv;
}

}  // namespace

std::string WithBatchLayout(const std::string& script, std::vector<std::string>* added) {
  CapturedCall job;
  job.argv = {"sbatch"};
  job.batch_script = script;
  std::vector<std::string> lines;
  std::istringstream in(script);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    const size_t first = line.find_first_not_of(" \t");
    const bool srun = first != std::string::npos && line.compare(first, 4, "srun") == 0 &&
                      (line.size() == first + 4 || line[first + 4] == ' ' || line[first + 4] == '\t' ||
                       line[first + 4] == '\\');
    if (srun) {
      // The srun's words over its continuation lines, up to the program it runs.
      std::string logical = line;
      for (size_t j = i; j + 1 < lines.size() && !lines[j].empty() && lines[j].back() == '\\'; ++j) {
        logical.back() = ' ';
        logical += lines[j + 1];
      }
      std::istringstream words_in(logical.substr(first));
      std::vector<std::string> words;
      for (std::string w; words_in >> w;) words.push_back(w);
      const std::vector<std::string> layout = JobLayoutFor(words, job);
      std::string inserted;
      for (const std::string& word : layout) inserted += " " + word;
      line.insert(first + 4, inserted);
      if (added && added->empty()) *added = layout;  // the first srun's, for the message
    }
    out += line + "\n";
  }
  return out;
}

bool IsLaunch(const CapturedCall& call) { return ArgvLaunches(call.argv); }

std::string DescribeCall(const CapturedCall& call, size_t max) {
  std::string out;
  for (const auto& word : call.argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(word);
  }
  if (out.size() > max) out = out.substr(0, max) + " ...";
  return out;
}

Result<LaunchCall> PickLaunch(const std::vector<CapturedCall>& calls) {
  for (size_t i = calls.size(); i-- > 0;) {
    if (!IsLaunch(calls[i])) continue;
    LaunchCall launch;
    launch.index = i;
    launch.cwd = calls[i].cwd;
    for (const auto& [name, value] : calls[i].env) {
      launch.command += "export " + name + "=" + ShellQuote(value) + "\n";
    }
    std::vector<std::string> argv = LaunchArgv(calls[i]);
    if (calls[i].wrapper && *calls[i].wrapper < i) {
      launch.wrapper = calls[i].wrapper;
      const CapturedCall& wrapper = calls[*launch.wrapper];
      if (wrapper.argv.at(0) == "sbatch") {
        // Run by the batch script itself: an srun there runs on the job's allocation.
        if (argv.at(0) == "srun") argv = WithJobLayout(std::move(argv), wrapper);
      } else {
        argv = Unwrapped(wrapper, calls[i]);
        auto job = wrapper.wrapper;
        if (wrapper.argv.at(0) == "srun" && job && *job < *launch.wrapper && calls[*job].argv.at(0) == "sbatch") {
          argv = WithJobLayout(std::move(argv), calls[*job]);
        }
      }
    }
    std::string line;
    for (const auto& word : argv) {
      if (!line.empty()) line += ' ';
      line += ShellQuote(word);
    }
    launch.command += line + "\n";
    return launch;
  }
  std::string seen;
  for (const auto& call : calls) seen += "\n  " + DescribeCall(call, 120);
  return Status::NotFound(
      "the script ran no training launch (torchrun, python <script>, ray job submit, srun, "
      "mpirun, deepspeed, accelerate launch, automodel, uv run ...)" +
      (seen.empty() ? std::string("; it called none of the recorded commands") : "; it called:" + seen));
}

}  // namespace attune::importer
