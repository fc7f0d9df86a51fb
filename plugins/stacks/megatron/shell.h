// Copyright attune authors.
//
// A small model of the POSIX/bash subset that launch scripts use: statements (newlines, ';',
// '&&', '||', '|', '&'), line continuations, comments, quoting, scalar and array variables
// (`A=x`, `A=( ... )`, `A+=( ... )`, `export A=x`), expansions ($A, ${A}, ${A:-d}, ${A[@]},
// $((arithmetic))) and word splitting. Command substitution is not run: `$(...)` stays literal.
// Anything it cannot evaluate is reported through `notes`, never silently dropped.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_SHELL_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_SHELL_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attune::megatron {

// One simple command after expansion.
struct ShellCommandLine {
  std::vector<std::pair<std::string, std::string>> assignments;  // `VAR=x cmd`: for cmd only
  std::vector<std::string> words;                                // command and arguments
};

class ShellInterpreter {
 public:
  // Splits `script` into statements and evaluates assignments and `export`s in order. Returns the
  // simple commands (statements that are not pure assignments) in order.
  std::vector<ShellCommandLine> Run(std::string_view script);

  // Variables exported so far, in first-export order, with their current values.
  std::vector<std::pair<std::string, std::string>> Exported() const;

  // Things it could not evaluate ("undefined variable $DATA_PATH", ...).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  void Statement(const std::string& raw, std::vector<ShellCommandLine>* out);
  bool Assignment(const std::string& raw_word, bool export_it);
  std::vector<std::string> Expand(const std::string& raw_word);
  std::string ExpandParameter(const std::string& expr, bool quoted, std::vector<std::string>* fields);
  long Arithmetic(const std::string& expr);
  void Note(const std::string& note);

  std::map<std::string, std::vector<std::string>> vars_;
  std::vector<std::string> export_order_;
  std::vector<std::string> notes_;
};

// Splits a statement into raw words (quotes, `( )` arrays, `$( )` and `${ }` kept together).
std::vector<std::string> RawWords(std::string_view statement);

// Splits a script into raw statements (continuations joined, comments removed).
std::vector<std::string> RawStatements(std::string_view script);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_SHELL_H_
