// Copyright attune authors.
#include "arguments.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "attune/support/names.h"
#include "attune/support/release_list.h"

namespace attune::megatron {
namespace {

// One flag ("--global-batch-size") or a family ("--sglang-*"): no whitespace.
const support::ReleaseListEntry kFlagEntry = {
    [](const std::string& line) {
      return line.size() >= 3 && line.rfind("--", 0) == 0 &&
             line.find_first_of(" \t") == std::string::npos;
    },
    "one flag such as --global-batch-size"};

KnownArguments FromList(support::ReleaseList list) {
  KnownArguments out;
  out.first = std::move(list.first);
  out.last = std::move(list.last);
  for (std::string& line : list.entries) {
    if (line.back() == '*') {
      line.pop_back();
      out.prefixes.insert(std::move(line));
    } else {
      out.flags.insert(std::move(line));
    }
  }
  return out;
}

}  // namespace

bool KnownArguments::Knows(const std::string& flag) const {
  if (flags.count(flag) || extra.count(flag)) return true;
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) {
    return flag.size() > p.size() && flag.rfind(p, 0) == 0;
  });
}

Result<KnownArguments> ParseArguments(const std::string& text, const std::string& source,
                                      const std::string& tool) {
  ATTUNE_ASSIGN_OR_RETURN(support::ReleaseList list,
                          support::ParseReleaseList(text, source, tool, kFlagEntry));
  return FromList(std::move(list));
}

Result<KnownArguments> LoadArguments(const std::string& path, const std::string& tool) {
  ATTUNE_ASSIGN_OR_RETURN(support::ReleaseList list,
                          support::LoadReleaseList(path, tool, kFlagEntry));
  return FromList(std::move(list));
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
