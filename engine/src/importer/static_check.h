// Copyright attune authors.
//
// The static import mode (`attune recipe import --no-exec`) reads a script without running it, so
// it must refuse what it cannot evaluate rather than guess: branches and loops (`if`, `case`,
// `for`, `while`, ...), functions, `source` / `.`, command substitution (`$(...)`, backquotes) and
// heredocs. CheckStaticScript names every such line.
#ifndef ATTUNE_ENGINE_IMPORTER_STATIC_CHECK_H_
#define ATTUNE_ENGINE_IMPORTER_STATIC_CHECK_H_

#include <string>
#include <string_view>
#include <vector>

#include "attune/status.h"

namespace attune::importer {

struct Construct {
  int line = 0;          // 1-based
  std::string what;      // "if", "case", "source", "$(...)", "`...`", "<<", "function", ...
  std::string text;      // the line, trimmed and cut
};

// Every construct the static reader cannot evaluate, in line order (comments and quoted text do
// not count, except command substitution inside double quotes, which bash expands).
std::vector<Construct> FindUnevaluable(std::string_view script);

// InvalidArgument naming each construct (at most 20) and what to do, or Ok.
Status CheckStaticScript(std::string_view script, const std::string& file);

}  // namespace attune::importer

#endif  // ATTUNE_ENGINE_IMPORTER_STATIC_CHECK_H_
