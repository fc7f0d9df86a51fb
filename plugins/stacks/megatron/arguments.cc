// Copyright attune authors.
#include "arguments.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/support/names.h"

namespace attune::megatron {
namespace {

constexpr const char* kRevisionsLine = "# Revisions read:";

}  // namespace

Result<KnownArguments> ParseArguments(const std::string& text, const std::string& source) {
  KnownArguments out;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(kRevisionsLine, 0) == 0) {
      std::istringstream revs(line.substr(std::string(kRevisionsLine).size()));
      std::string rev;
      while (revs >> rev) {
        if (out.first.empty()) out.first = rev;
        out.last = rev;
      }
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (line.size() < 3 || line.rfind("--", 0) != 0 ||
        line.find_first_of(" \t") != std::string::npos) {
      return Status::InvalidArgument(source + ":" + std::to_string(number) +
                                     ": expected one flag such as --global-batch-size, got '" +
                                     line +
                                     "'; regenerate the file with tools/megatron_arguments.py");
    }
    out.flags.insert(line);
  }
  if (out.flags.empty() || out.first.empty()) {
    return Status::InvalidArgument(source + ": no flags, or no '" + kRevisionsLine +
                                   "' line; regenerate the file with tools/megatron_arguments.py");
  }
  return out;
}

Result<KnownArguments> LoadArguments(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(path +
                            ": cannot read (is the data directory right? it should hold "
                            "stacks/megatron/arguments.txt)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseArguments(text.str(), path);
}

std::string MegatronTrainingScript(const Recipe& recipe) {
  // Megatron-DeepSpeed, the DeepSpeed fork, adds arguments of its own (--deepspeed, --zero-stage).
  const bool deepspeed_fork = recipe.launcher_hint == "deepspeed" ||
                              std::any_of(recipe.args.begin(), recipe.args.end(),
                                          [](const Arg& a) { return a.flag == "--deepspeed"; });
  if (deepspeed_fork) return "";
  static const std::set<std::string> kScripts = {"pretrain_gpt.py", "pretrain_hybrid.py",
                                                 "pretrain_mamba.py", "pretrain_bert.py",
                                                 "pretrain_t5.py"};
  for (const std::string& part : recipe.entry) {
    std::string name = std::filesystem::path(part).filename().string();
    if (kScripts.count(name)) return name;
  }
  return "";
}

std::string NearestArgument(const KnownArguments& known, const std::string& flag) {
  std::string dashed = flag;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  if (dashed != flag && (known.flags.count(dashed) || known.extra.count(dashed))) return dashed;
  return support::NearestName(dashed,
                              std::vector<std::string>(known.flags.begin(), known.flags.end()));
}

std::vector<UnknownArgument> UnknownArguments(const KnownArguments& known, const Recipe& recipe) {
  std::vector<UnknownArgument> out;
  if (known.Empty()) return out;
  const std::string script = MegatronTrainingScript(recipe);
  if (script.empty()) return out;
  for (const Arg& arg : recipe.args) {
    if (arg.flag.rfind("--", 0) != 0) continue;
    if (known.flags.count(arg.flag) || known.extra.count(arg.flag)) continue;
    auto seen = [&](const UnknownArgument& u) { return u.flag == arg.flag; };
    if (std::any_of(out.begin(), out.end(), seen)) continue;
    std::string message = arg.flag + " is not an argument of Megatron-LM's " + script +
                          " in any release from " + known.first + " to " + known.last +
                          " (the script would stop with \"error: unrecognized arguments\")";
    std::string nearest = NearestArgument(known, arg.flag);
    if (!nearest.empty()) message += "; did you mean " + nearest + "?";
    message +=
        " If your Megatron-LM defines it, declare it in the workflow: stack: {name: megatron, "
        "with: {extra_arguments: [" +
        arg.flag + "]}}";
    out.push_back({arg.flag, message});
  }
  return out;
}

}  // namespace attune::megatron
