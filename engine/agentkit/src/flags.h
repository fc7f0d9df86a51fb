// Copyright attune authors.
//
// Internal: the `--name value` / `--name=value` flag lists of the agent hook commands.
#ifndef ATTUNE_AGENTKIT_FLAGS_H_
#define ATTUNE_AGENTKIT_FLAGS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "attune/status.h"

namespace attune::agentkit {

using FlagMap = std::multimap<std::string, std::string>;

// Every flag must be one of `known`; a repeated flag keeps every value.
inline Result<FlagMap> ParseFlags(const std::vector<std::string>& args,
                                  const std::set<std::string>& known) {
  FlagMap out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) return Status::InvalidArgument("unexpected argument '" + a + "'");
    auto eq = a.find('=');
    std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (!known.count(name)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "--" : ", --") + k;
      return Status::InvalidArgument("unknown flag '--" + name + "' (expected " + list + ")");
    }
    if (eq != std::string::npos) {
      out.emplace(name, a.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      out.emplace(name, args[++i]);
    } else {
      return Status::InvalidArgument("'" + a + "' needs a value");
    }
  }
  return out;
}

inline std::string FlagValue(const FlagMap& flags, const std::string& name) {
  auto it = flags.find(name);
  return it == flags.end() ? "" : it->second;
}

}  // namespace attune::agentkit

#endif  // ATTUNE_AGENTKIT_FLAGS_H_
