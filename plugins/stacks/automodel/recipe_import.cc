#include "recipe_import.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace attune::automodel {
namespace {

bool IsEnvAssignment(const std::string& word) {
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    char c = word[i];
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return !isdigit(static_cast<unsigned char>(word[0]));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsConfigPath(const std::string& w) { return EndsWith(w, ".yaml") || EndsWith(w, ".yml"); }

// Joins continuation lines and drops comments, shebangs, prompts and shell noise.
std::vector<std::string> LogicalLines(std::string_view script) {
  std::string joined;
  for (size_t i = 0; i < script.size(); ++i) {
    if (script[i] == '\\' && i + 1 < script.size() && script[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (script[i] != '\r') joined.push_back(script[i]);
  }
  std::vector<std::string> lines;
  std::istringstream in(joined);
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    if (line[0] == '#') continue;
    if (line.rfind("$ ", 0) == 0) line = line.substr(2);
    lines.push_back(line);
  }
  return lines;
}

struct Parsed {
  Recipe recipe;
  std::string config_path;
};

// Reads the dotted overrides and launcher flags after the command words.
void ReadOverrides(const std::vector<std::string>& w, size_t i, Parsed* p,
                   std::vector<std::string>* unknown) {
  while (i < w.size()) {
    const std::string& word = w[i];
    auto next = [&]() -> std::string { return i + 1 < w.size() ? w[i + 1] : std::string(); };
    if (word == "--nproc-per-node" || word == "--nproc_per_node") {
      p->recipe.topology.gpus_per_node = std::atoi(next().c_str());
      i += 2;
    } else if (word == "--nnodes") {
      p->recipe.topology.nodes = std::atoi(next().c_str());
      i += 2;
    } else if ((word == "-c" || word == "--config") && p->config_path.empty()) {
      p->config_path = next();
      p->recipe.entry.push_back(word);
      p->recipe.entry.push_back(next());
      i += 2;
    } else if (word.rfind("--", 0) == 0 && word.size() > 2) {
      size_t eq = word.find('=');
      if (eq != std::string::npos) {
        p->recipe.args.push_back(Arg{word.substr(0, eq), {word.substr(eq + 1)}});
        i += 1;
      } else if (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) {
        p->recipe.args.push_back(Arg{word, {w[i + 1]}});
        i += 2;
      } else {
        p->recipe.args.push_back(Arg{word, {}});  // a bare flag means true
        i += 1;
      }
    } else if (IsConfigPath(word) && p->config_path.empty()) {
      p->config_path = word;
      p->recipe.entry.push_back(word);
      i += 1;
    } else {
      unknown->push_back(word);
      i += 1;
    }
  }
}

// Skips torchrun's own flags and returns the index of the script (or -m module).
size_t SkipTorchrunFlags(const std::vector<std::string>& w, size_t i, Parsed* p,
                         std::vector<std::string>* unknown) {
  static const std::vector<std::string> kIgnored = {"--node-rank", "--node_rank", "--master-addr",
                                                    "--master_addr", "--master-port", "--master_port"};
  while (i < w.size() && w[i].rfind("-", 0) == 0 && w[i] != "-m") {
    std::string flag = w[i];
    std::string value = i + 1 < w.size() ? w[i + 1] : "";
    size_t consumed = 2;
    if (size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      consumed = 1;
    }
    if (flag == "--standalone") {
      consumed = 1;
    } else if (flag == "--nproc-per-node" || flag == "--nproc_per_node") {
      p->recipe.topology.gpus_per_node = std::atoi(value.c_str());
    } else if (flag == "--nnodes") {
      p->recipe.topology.nodes = std::atoi(value.c_str());
    } else if (flag.rfind("--rdzv", 0) != 0 &&
               std::find(kIgnored.begin(), kIgnored.end(), flag) == kIgnored.end()) {
      unknown->push_back(w[i]);
    }
    i += consumed;
  }
  return i;
}

Status ParseCommand(const std::vector<std::string>& w, size_t i, Parsed* p,
                    std::vector<std::string>* unknown) {
  const std::string& cmd = w[i];
  std::string base = cmd.substr(cmd.find_last_of('/') == std::string::npos ? 0 : cmd.find_last_of('/') + 1);
  if (IsConfigPath(cmd)) {
    // A config file alone (`attune recipe import cfg.yaml`): AutoModel's own launcher runs it.
    std::vector<std::string> launch = {"automodel"};
    launch.insert(launch.end(), w.begin() + static_cast<long>(i), w.end());
    bool topology_given = false;
    for (const auto& word : launch) topology_given = topology_given || word.rfind("--nproc", 0) == 0;
    if (!topology_given) {
      unknown->push_back("the config names no launch: the recipe runs `automodel " + cmd +
                         "` on 1 node with 1 GPU; import it with --nodes N --gpus-per-node G, or set `topology:` "
                         "in the recipe, for your cluster");
    }
    return ParseCommand(launch, 0, p, unknown);
  }
  if (base == "automodel" || base == "am") {
    p->recipe.launcher_hint = "automodel";
    p->recipe.entry.push_back(cmd);
    ++i;
    while (i < w.size() && w[i].rfind("-", 0) != 0 && !IsConfigPath(w[i])) {
      p->recipe.entry.push_back(w[i++]);  // subcommand words: finetune, llm, ...
    }
    ReadOverrides(w, i, p, unknown);
    return Status::Ok();
  }
  bool python = base.rfind("python", 0) == 0;
  bool torchrun = base == "torchrun" ||
                  (python && i + 2 < w.size() && w[i + 1] == "-m" && w[i + 2] == "torch.distributed.run");
  if (torchrun) {
    p->recipe.launcher_hint = "torchrun";
    i += base == "torchrun" ? 1 : 3;
    i = SkipTorchrunFlags(w, i, p, unknown);
  } else if (python) {
    p->recipe.launcher_hint = "python";
    p->recipe.entry.push_back(cmd);
    ++i;
  } else {
    return Status::InvalidArgument("the launch command '" + cmd + "' is not automodel, am, torchrun "
                                   "or python; write the command that starts training");
  }
  if (i < w.size() && w[i] == "-m" && i + 1 < w.size()) {
    p->recipe.entry.push_back("-m");
    p->recipe.entry.push_back(w[i + 1]);
    i += 2;
  } else if (i < w.size()) {
    p->recipe.entry.push_back(w[i++]);
  }
  ReadOverrides(w, i, p, unknown);
  return Status::Ok();
}

Status LoadConfig(const std::string& base_dir, Parsed* p) {
  if (p->config_path.empty()) {
    return Status::InvalidArgument("no config file in the launch (expected 'automodel cfg.yaml ...' "
                                   "or '--config cfg.yaml')");
  }
  std::string path = p->config_path[0] == '/' || base_dir.empty() ? p->config_path
                                                                   : base_dir + "/" + p->config_path;
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound("the config '" + path + "' named by the launch cannot be read; run "
                            "`attune recipe import` from the directory you launch from");
  }
  std::stringstream text;
  text << in.rdbuf();
  ATTUNE_ASSIGN_OR_RETURN(p->recipe.config, YamlToJsonValue(text.str(), path));
  if (!p->recipe.config.is_object()) {
    return Status::InvalidArgument(path + ": an AutoModel config must be a YAML map");
  }
  return Status::Ok();
}

}  // namespace

Result<Recipe> ImportLaunchScript(std::string_view script, const std::string& base_dir,
                                  std::vector<std::string>* unknown) {
  Parsed p;
  p.recipe.stack = "automodel";
  bool found = false;
  for (const auto& line : LogicalLines(script)) {
    ATTUNE_ASSIGN_OR_RETURN(auto words, SplitShellWords(line));
    if (words.empty()) continue;
    size_t i = 0;
    if (words[0] == "export") ++i;
    bool exporting = i == 1;
    while (i < words.size() && IsEnvAssignment(words[i])) {
      size_t eq = words[i].find('=');
      p.recipe.env.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
      ++i;
    }
    if (i >= words.size() || exporting) continue;
    if (words[i] == "set" || words[i] == "cd" || words[i] == "source") continue;
    if (found) {
      unknown->push_back(line);  // a second command: reported, not merged
      continue;
    }
    ATTUNE_RETURN_IF_ERROR(ParseCommand(words, i, &p, unknown));
    found = true;
  }
  if (!found) return Status::InvalidArgument("no launch command found in the script");
  ATTUNE_RETURN_IF_ERROR(LoadConfig(base_dir, &p));
  return p.recipe;
}

LaunchSpec RenderRecipe(const Recipe& recipe) {
  LaunchSpec spec;
  spec.env = recipe.env;
  const auto& t = recipe.topology;
  std::vector<std::string> topology_flags = {"--nproc-per-node", std::to_string(t.gpus_per_node)};
  if (t.nodes > 1) {
    topology_flags.push_back("--nnodes");
    topology_flags.push_back(std::to_string(t.nodes));
  }
  if (recipe.launcher_hint == "torchrun") {
    spec.argv = {"torchrun"};
    spec.argv.insert(spec.argv.end(), topology_flags.begin(), topology_flags.end());
    spec.argv.insert(spec.argv.end(), recipe.entry.begin(), recipe.entry.end());
  } else {
    spec.argv = recipe.entry;
    if (recipe.launcher_hint == "automodel") {
      spec.argv.insert(spec.argv.end(), topology_flags.begin(), topology_flags.end());
    }
  }
  for (const auto& arg : recipe.args) {
    spec.argv.push_back(arg.flag);
    spec.argv.insert(spec.argv.end(), arg.values.begin(), arg.values.end());
  }
  return spec;
}

}  // namespace attune::automodel
