// Copyright attune authors.
//
// A POSIX-shell word splitter for the agent guard (guard.h). It does not run or expand anything: it
// turns a command line into the simple commands a shell would run, so the guard can judge each
// one. It understands what the guard must not be fooled by:
//   quoting ('...', "...", $'...'), backslash escapes and line continuations, comments,
//   the list and pipeline operators ; & && || | |& and newlines, subshells ( ... ),
//   command substitution $(...) and `...` (also inside double quotes), process substitution
//   <(...) >(...), parameter expansion $X ${X} and arithmetic $((...)),
//   redirections [n]> [n]>> [n]< <> >| >& <& &> &>> <<< (here-documents are refused).
// Commands nested in substitutions are returned as commands of their own, in source order.
//
// A word whose value depends on an expansion is marked `dynamic`: the guard cannot know its value
// and treats it as unknown (fail closed).
//
// Thread-safety: pure functions.
#ifndef ATTUNE_AGENTKIT_SHELL_WORDS_H_
#define ATTUNE_AGENTKIT_SHELL_WORDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "attune/status.h"

namespace attune::agentkit {

struct Word {
  std::string text;      // the value after quote removal (expansions left as written)
  bool dynamic = false;  // contains $var, ${...}, $(...), `...` or $((...))
  friend bool operator==(const Word&, const Word&) = default;
};

struct Redirect {
  std::string op;  // ">", ">>", "<", "<>", ">|", ">&", "<&", "&>", "&>>", "<<<"
  Word target;
};

struct SimpleCommand {
  std::vector<Word> assignments;  // NAME=value words before the command name
  std::vector<Word> argv;         // may be empty (a bare assignment or redirection)
  std::vector<Redirect> redirects;
};

// Splits `script` into simple commands. Fails (kInvalidArgument, naming the offset and the
// problem) on unterminated quotes or substitutions, here-documents, and nesting deeper than 16.
Result<std::vector<SimpleCommand>> SplitCommands(std::string_view script);

// The argv texts of every command, in order (for tests and messages).
std::vector<std::vector<std::string>> ArgvTexts(const std::vector<SimpleCommand>& commands);

}  // namespace attune::agentkit

#endif  // ATTUNE_AGENTKIT_SHELL_WORDS_H_
