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

bool KnownArguments::Knows(const std::string& flag) const {
  if (flags.count(flag) || extra.count(flag)) return true;
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) {
    return flag.size() > p.size() && flag.rfind(p, 0) == 0;
  });
}

Result<KnownArguments> ParseArguments(const std::string& text, const std::string& source,
                                      const std::string& tool) {
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
                                     line + "'; regenerate the file with " + tool);
    }
    if (line.back() == '*') {
      out.prefixes.insert(line.substr(0, line.size() - 1));
      continue;
    }
    out.flags.insert(line);
  }
  if (out.flags.empty() || out.first.empty()) {
    return Status::InvalidArgument(source + ": no flags, or no '" + kRevisionsLine +
                                   "' line; regenerate the file with " + tool);
  }
  return out;
}

Result<KnownArguments> LoadArguments(const std::string& path, const std::string& tool) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(path +
                            ": cannot read (is the data directory right? it should hold "
                            "the file, which " +
                            tool + " generates)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseArguments(text.str(), path, tool);
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

std::vector<UnknownArgument> UnknownFlags(const KnownArguments& known, const Recipe& recipe,
                                          const FlagCheck& what) {
  std::vector<UnknownArgument> out;
  if (known.Empty()) return out;
  for (const Arg& arg : recipe.args) {
    if (arg.flag.rfind("--", 0) != 0) continue;
    if (known.Knows(arg.flag)) continue;
    auto seen = [&](const UnknownArgument& u) { return u.flag == arg.flag; };
    if (std::any_of(out.begin(), out.end(), seen)) continue;
    std::string message =
        arg.flag + " is not an argument of " + what.not_in + " (" + what.consequence + ")";
    std::string nearest = NearestArgument(known, arg.flag);
    if (!nearest.empty()) message += "; did you mean " + nearest + "?";
    message += " If your " + what.project +
               " defines it, declare it in the workflow: stack: {name: " + what.stack +
               ", with: {extra_arguments: [" + arg.flag + "]}}";
    out.push_back({arg.flag, message});
  }
  return out;
}

std::vector<UnknownArgument> UnknownArguments(const KnownArguments& known, const Recipe& recipe) {
  const std::string script = MegatronTrainingScript(recipe);
  if (script.empty()) return {};
  return UnknownFlags(
      known, recipe,
      {"Megatron-LM's " + script + " in any release from " + known.first + " to " + known.last,
       "the script would stop with \"error: unrecognized arguments\"", "Megatron-LM", "megatron"});
}

}  // namespace attune::megatron
