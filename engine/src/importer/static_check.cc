// Copyright attune authors.
#include "importer/static_check.h"

#include <cctype>
#include <set>

namespace attune::importer {
namespace {

const std::set<std::string> kKeywords = {"if", "then", "elif", "else", "fi", "case", "esac",
                                         "for", "while", "until", "do", "done", "select",
                                         "function", "source", "."};

// What the scanner knows about the text so far.
struct Scan {
  bool single = false;  // inside '...'
  bool dbl = false;     // inside "..."
  bool command_start = true;  // the next word is in command position
  int array_depth = 0;        // inside NAME=( ... )
};

bool IsWordChar(char c) { return !std::isspace(static_cast<unsigned char>(c)) && c != ';' && c != '|' && c != '&' && c != '(' && c != ')'; }

std::string Trimmed(std::string_view line) {
  size_t a = line.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  size_t b = line.find_last_not_of(" \t\r");
  std::string out(line.substr(a, b - a + 1));
  if (out.size() > 120) out = out.substr(0, 120) + " ...";
  return out;
}

}  // namespace

std::vector<Construct> FindUnevaluable(std::string_view s) {
  std::vector<Construct> out;
  Scan st;
  int line = 1;
  size_t line_start = 0;
  int reported_line = 0;
  auto report = [&](const std::string& what) {
    if (reported_line == line) return;  // one per line
    reported_line = line;
    size_t end = s.find('\n', line_start);
    out.push_back({line, what, Trimmed(s.substr(line_start, end == std::string_view::npos ? s.size() - line_start : end - line_start))});
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      if (!st.single && !st.dbl && st.array_depth == 0) st.command_start = true;
      continue;
    }
    if (st.single) {
      if (c == '\'') st.single = false;
      continue;
    }
    if (c == '\\') {
      if (i + 1 < s.size() && s[i + 1] == '\n') {
        ++line;
        line_start = i + 2;
      }
      ++i;
      continue;
    }
    if (c == '`') {
      report("`...` (command substitution)");
      continue;
    }
    if (c == '$' && i + 1 < s.size() && s[i + 1] == '(') {
      report(i + 2 < s.size() && s[i + 2] == '(' ? "$((...)) (arithmetic)" : "$(...) (command substitution)");
      continue;
    }
    if (st.dbl) {
      if (c == '"') st.dbl = false;
      continue;
    }
    if (c == '"') {
      st.dbl = true;
      st.command_start = false;
      continue;
    }
    if (c == '\'') {
      st.single = true;
      st.command_start = false;
      continue;
    }
    if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '(')) {
      while (i + 1 < s.size() && s[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '<' && i + 1 < s.size() && s[i + 1] == '<') {
      report(i + 2 < s.size() && s[i + 2] == '<' ? "<<< (here-string)" : "<< (heredoc)");
      ++i;
      continue;
    }
    if (c == '(' && i > 0 && s[i - 1] == '=') {
      ++st.array_depth;
      st.command_start = false;
      continue;
    }
    if (c == ')' && st.array_depth > 0) {
      --st.array_depth;
      continue;
    }
    if (st.array_depth > 0) {
      if (!std::isspace(static_cast<unsigned char>(c))) st.command_start = false;
      if (std::isspace(static_cast<unsigned char>(c))) continue;
    }
    if (c == ';' || c == '|' || c == '&' || c == '(' || c == ')') {
      st.command_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    // A word: a keyword only in command position.
    size_t end = i;
    while (end < s.size() && IsWordChar(s[end]) && s[end] != '"' && s[end] != '\'' && s[end] != '`' &&
           !(s[end] == '$' && end + 1 < s.size() && s[end + 1] == '(')) {
      ++end;
    }
    std::string word(s.substr(i, end - i));
    if (st.command_start) {
      if (kKeywords.count(word)) report(word);
      // name() { ... }: a function definition
      else if (end + 1 < s.size() && s[end] == '(' && s[end + 1] == ')') report("function " + word + "()");
    }
    // Assignments keep command position (`A=1 torchrun ...`); anything else ends it.
    st.command_start = st.command_start && word.find('=') != std::string::npos &&
                       word.find('=') > 0 && word.back() != '(';
    if (end > i) i = end - 1;
  }
  return out;
}

Status CheckStaticScript(std::string_view script, const std::string& file) {
  std::vector<Construct> found = FindUnevaluable(script);
  if (found.empty()) return Status::Ok();
  std::string msg = file + ": the static import (--no-exec) cannot evaluate " +
                    std::to_string(found.size()) + " line(s) of this script and does not guess:";
  size_t shown = 0;
  for (const auto& f : found) {
    if (++shown > 20) {
      msg += "\n  ... and " + std::to_string(found.size() - 20) + " more";
      break;
    }
    msg += "\n  line " + std::to_string(f.line) + ": " + f.what + ": " + f.text;
  }
  msg += "\nRun without --no-exec (the script is evaluated by bash in a sandbox, with the launch "
         "commands recorded instead of run), or reduce the script to assignments, arrays, "
         "exports and the launch line.";
  return Status::InvalidArgument(msg);
}

}  // namespace attune::importer
