#include "shell.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

namespace attune::megatron {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Index just past the matching `close` for an `open` at text[start] (quotes respected).
size_t MatchClose(std::string_view text, size_t start, char open, char close) {
  int depth = 0;
  bool single = false, dbl = false;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && !single) {
      ++i;
      continue;
    }
    if (c == '\'' && !dbl) single = !single;
    if (c == '"' && !single) dbl = !dbl;
    if (single || dbl) continue;
    if (c == open) ++depth;
    if (c == close && --depth == 0) return i + 1;
  }
  return text.size();
}

// The name of an assignment word ("A=", "A+=") or "" when it is not one.
std::string AssignmentName(const std::string& raw, bool* append, size_t* value_at) {
  if (raw.empty() || !IsNameStart(raw[0])) return "";
  size_t i = 1;
  while (i < raw.size() && IsNameChar(raw[i])) ++i;
  *append = i + 1 < raw.size() && raw[i] == '+' && raw[i + 1] == '=';
  if (*append) ++i;
  if (i >= raw.size() || raw[i] != '=') return "";
  *value_at = i + 1;
  return raw.substr(0, *append ? i - 1 : i);
}

std::vector<std::string> SplitSpaces(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (IsSpace(c) || c == '\n') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Appends pieces to the word being built: the first joins the current field, the rest start new.
void AppendPieces(const std::vector<std::string>& pieces, std::vector<std::string>* fields) {
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i == 0) {
      fields->back() += pieces[i];
    } else {
      fields->push_back(pieces[i]);
    }
  }
}

}  // namespace

std::vector<std::string> RawStatements(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  bool single = false, dbl = false;
  int depth = 0;
  auto flush = [&] {
    size_t a = cur.find_first_not_of(" \t\r\n");
    if (a != std::string::npos) out.push_back(cur.substr(a));
    cur.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && !single && i + 1 < s.size()) {
      if (s[i + 1] == '\n') { ++i; continue; }
      if (s[i + 1] == '\r' && i + 2 < s.size() && s[i + 2] == '\n') { i += 2; continue; }
      cur.push_back(c);
      cur.push_back(s[++i]);
      continue;
    }
    if (c == '\'' && !dbl) single = !single;
    else if (c == '"' && !single) dbl = !dbl;
    bool quoted = single || dbl;
    if (!quoted && (c == '(' || (c == '{' && i > 0 && s[i - 1] == '$'))) ++depth;
    if (!quoted && (c == ')' || (c == '}' && depth > 0)) && depth > 0) --depth;
    bool word_start = cur.empty() || IsSpace(cur.back()) || cur.back() == '\n' || cur.back() == '(';
    if (!quoted && c == '#' && word_start) {
      // A comment, also inside an array: skipped to the end of the line, whose newline then
      // ends the statement (or, inside parentheses, separates words).
      while (i + 1 < s.size() && s[i + 1] != '\n') ++i;
      continue;
    }
    if (!quoted && depth > 0 && c == '\n') { cur.push_back(' '); continue; }
    bool redirect_amp = c == '&' && ((i > 0 && s[i - 1] == '>') || (i + 1 < s.size() && s[i + 1] == '>'));
    if (!quoted && depth == 0 && (c == '\n' || c == ';' || c == '|' || (c == '&' && !redirect_amp))) {
      if (i + 1 < s.size() && (s[i + 1] == '|' || s[i + 1] == '&') && c != '\n' && c != ';') ++i;
      flush();
      continue;
    }
    cur.push_back(c);
  }
  flush();
  return out;
}

std::vector<std::string> RawWords(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  bool single = false, dbl = false;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && !single && i + 1 < s.size()) {
      cur.push_back(c);
      cur.push_back(s[++i]);
      continue;
    }
    if (c == '\'' && !dbl) single = !single;
    else if (c == '"' && !single) dbl = !dbl;
    bool quoted = single || dbl;
    if (!quoted && (c == '(' || (c == '{' && i > 0 && s[i - 1] == '$'))) ++depth;
    if (!quoted && (c == ')' || c == '}') && depth > 0) --depth;
    if (!quoted && depth == 0 && (IsSpace(c) || c == '\n')) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      continue;
    }
    cur.push_back(c);
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

void ShellInterpreter::Note(const std::string& note) {
  if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
}

std::string ShellInterpreter::ExpandParameter(const std::string& expr, bool quoted,
                                              std::vector<std::string>* fields) {
  size_t i = 0;
  while (i < expr.size() && (IsNameChar(expr[i]) || (i == 0 && (expr[i] == '@' || expr[i] == '*' || expr[i] == '#')))) ++i;
  std::string name = expr.substr(0, i);
  std::string index, op, word;
  if (i < expr.size() && expr[i] == '[') {
    size_t close = expr.find(']', i);
    index = expr.substr(i + 1, close == std::string::npos ? std::string::npos : close - i - 1);
    i = close == std::string::npos ? expr.size() : close + 1;
  }
  if (i < expr.size()) {
    size_t op_len = (expr[i] == ':' && i + 1 < expr.size()) ? 2 : 1;
    op = expr.substr(i, op_len);
    word = expr.substr(i + op_len);
  }
  auto it = vars_.find(name);
  std::vector<std::string> values;
  if (it != vars_.end()) {
    if (index == "@" || index == "*") {
      values = it->second;
    } else if (!index.empty() && std::all_of(index.begin(), index.end(), ::isdigit)) {
      size_t n = std::stoul(index);
      if (n < it->second.size()) values = {it->second[n]};
    } else if (!it->second.empty()) {
      values = {it->second[0]};
    }
  }
  bool unset_or_empty = it == vars_.end() || values.empty() || (values.size() == 1 && values[0].empty());
  if ((op == ":-" || op == "-" || op == ":=" || op == "=") && (op[0] == ':' ? unset_or_empty : it == vars_.end())) {
    values = {word};
  } else if (op == ":+" || op == "+") {
    values = unset_or_empty ? std::vector<std::string>{} : std::vector<std::string>{word};
  } else if (it == vars_.end()) {
    Note("undefined shell variable $" + name + " (kept literally)");
    return "${" + expr + "}";
  }
  std::vector<std::string> pieces;
  if (quoted && index == "@") {
    pieces = values;
  } else {
    std::string joined;
    for (size_t k = 0; k < values.size(); ++k) joined += (k ? " " : "") + values[k];
    pieces = quoted ? std::vector<std::string>{joined} : SplitSpaces(joined);
    if (!quoted && !joined.empty() && IsSpace(joined[0]) && !fields->back().empty()) pieces.insert(pieces.begin(), "");
  }
  if (!pieces.empty()) AppendPieces(pieces, fields);
  return "";
}

long ShellInterpreter::Arithmetic(const std::string& expr) {
  // Recursive descent over + - * / % and parentheses; names read integer variables.
  size_t pos = 0;
  std::function<long()> sum;
  auto skip = [&] { while (pos < expr.size() && (IsSpace(expr[pos]) || expr[pos] == '$' || expr[pos] == '{' || expr[pos] == '}')) ++pos; };
  std::function<long()> atom = [&]() -> long {
    skip();
    if (pos < expr.size() && expr[pos] == '(') {
      ++pos;
      long v = sum();
      skip();
      if (pos < expr.size() && expr[pos] == ')') ++pos;
      return v;
    }
    if (pos < expr.size() && expr[pos] == '-') { ++pos; return -atom(); }
    size_t start = pos;
    while (pos < expr.size() && IsNameChar(expr[pos])) ++pos;
    std::string tok = expr.substr(start, pos - start);
    if (tok.empty()) { Note("cannot evaluate arithmetic '" + expr + "'"); ++pos; return 0; }
    if (std::isdigit(static_cast<unsigned char>(tok[0]))) return std::atol(tok.c_str());
    auto it = vars_.find(tok);
    if (it == vars_.end() || it->second.empty()) { Note("undefined shell variable $" + tok + " in arithmetic"); return 0; }
    return std::atol(it->second[0].c_str());
  };
  std::function<long()> product = [&]() -> long {
    long v = atom();
    for (;;) {
      skip();
      if (pos >= expr.size() || (expr[pos] != '*' && expr[pos] != '/' && expr[pos] != '%')) return v;
      char op = expr[pos++];
      long r = atom();
      if (op == '*') v *= r;
      else if (r != 0) v = op == '/' ? v / r : v % r;
    }
  };
  sum = [&]() -> long {
    long v = product();
    for (;;) {
      skip();
      if (pos >= expr.size() || (expr[pos] != '+' && expr[pos] != '-')) return v;
      char op = expr[pos++];
      long r = product();
      v = op == '+' ? v + r : v - r;
    }
  };
  return sum();
}

std::vector<std::string> ShellInterpreter::Expand(const std::string& raw) {
  std::vector<std::string> fields(1);
  bool quoted_any = false;
  auto dollar = [&](size_t i, bool quoted) -> size_t {
    if (raw.compare(i, 3, "$((") == 0) {
      size_t end = MatchClose(raw, i + 1, '(', ')');
      fields.back() += std::to_string(Arithmetic(raw.substr(i + 3, end - i - 5)));
      return end;
    }
    if (raw.compare(i, 2, "$(") == 0) {
      size_t end = MatchClose(raw, i + 1, '(', ')');
      fields.back() += raw.substr(i, end - i);
      Note("command substitution " + raw.substr(i, end - i) + " not run (kept literally)");
      return end;
    }
    if (raw.compare(i, 2, "${") == 0) {
      size_t end = MatchClose(raw, i + 1, '{', '}');
      fields.back() += ExpandParameter(raw.substr(i + 2, end - i - 3), quoted, &fields);
      return end;
    }
    size_t j = i + 1;
    if (j < raw.size() && (std::isdigit(static_cast<unsigned char>(raw[j])) || raw[j] == '@' || raw[j] == '*' || raw[j] == '#')) {
      ++j;
    } else {
      while (j < raw.size() && IsNameChar(raw[j])) ++j;
    }
    if (j == i + 1) { fields.back() += '$'; return j; }
    fields.back() += ExpandParameter(raw.substr(i + 1, j - i - 1), quoted, &fields);
    return j;
  };
  for (size_t i = 0; i < raw.size();) {
    char c = raw[i];
    if (c == '\\' && i + 1 < raw.size()) { fields.back() += raw[i + 1]; i += 2; continue; }
    if (c == '\'') {
      size_t end = raw.find('\'', i + 1);
      if (end == std::string::npos) end = raw.size();
      fields.back() += raw.substr(i + 1, end - i - 1);
      quoted_any = true;
      i = end + 1;
      continue;
    }
    if (c == '"') {
      quoted_any = true;
      ++i;
      while (i < raw.size() && raw[i] != '"') {
        if (raw[i] == '\\' && i + 1 < raw.size() && std::string("$`\"\\").find(raw[i + 1]) != std::string::npos) {
          fields.back() += raw[i + 1];
          i += 2;
        } else if (raw[i] == '$') {
          i = dollar(i, true);
        } else {
          fields.back() += raw[i++];
        }
      }
      ++i;
      continue;
    }
    if (c == '$') { i = dollar(i, false); continue; }
    fields.back() += c;
    ++i;
  }
  if (!quoted_any) fields.erase(std::remove(fields.begin(), fields.end(), std::string()), fields.end());
  return fields;
}

bool ShellInterpreter::Assignment(const std::string& raw, bool export_it) {
  bool append = false;
  size_t value_at = 0;
  std::string name = AssignmentName(raw, &append, &value_at);
  if (name.empty()) {
    bool plain = !raw.empty() && IsNameStart(raw[0]) &&
                 std::all_of(raw.begin(), raw.end(), IsNameChar);
    if (export_it && plain) {
      if (std::find(export_order_.begin(), export_order_.end(), raw) == export_order_.end()) export_order_.push_back(raw);
      vars_.try_emplace(raw, std::vector<std::string>{""});
      return true;
    }
    return false;
  }
  std::string value = raw.substr(value_at);
  std::vector<std::string> values;
  if (value.size() >= 2 && value.front() == '(' && value.back() == ')') {
    for (const auto& w : RawWords(value.substr(1, value.size() - 2))) {
      for (auto& f : Expand(w)) values.push_back(f);
    }
  } else {
    std::string joined;
    auto fields = Expand(value);
    for (size_t k = 0; k < fields.size(); ++k) joined += (k ? " " : "") + fields[k];
    values = {joined};
  }
  auto& slot = vars_[name];
  if (append) {
    slot.insert(slot.end(), values.begin(), values.end());
  } else {
    slot = values;
  }
  if (export_it && std::find(export_order_.begin(), export_order_.end(), name) == export_order_.end()) {
    export_order_.push_back(name);
  }
  return true;
}

void ShellInterpreter::Statement(const std::string& raw, std::vector<ShellCommandLine>* out) {
  auto words = RawWords(raw);
  if (words.empty()) return;
  static const std::set<std::string> kDeclare = {"export", "declare", "local", "readonly", "typeset"};
  if (kDeclare.count(words[0])) {
    bool export_it = words[0] == "export" || (words.size() > 1 && words[1].find('x') != std::string::npos && words[1][0] == '-');
    for (size_t i = 1; i < words.size(); ++i) {
      if (words[i][0] == '-') continue;
      Assignment(words[i], export_it);
    }
    return;
  }
  size_t i = 0;
  bool append = false;
  size_t value_at = 0;
  while (i < words.size() && !AssignmentName(words[i], &append, &value_at).empty()) ++i;
  if (i == words.size()) {
    for (const auto& w : words) {
      bool exported = false;
      std::string name = AssignmentName(w, &append, &value_at);
      exported = std::find(export_order_.begin(), export_order_.end(), name) != export_order_.end();
      Assignment(w, exported);
    }
    return;
  }
  ShellCommandLine cmd;
  for (size_t k = 0; k < i; ++k) {
    std::string name = AssignmentName(words[k], &append, &value_at);
    std::string joined;
    auto fields = Expand(words[k].substr(value_at));
    for (size_t f = 0; f < fields.size(); ++f) joined += (f ? " " : "") + fields[f];
    cmd.assignments.emplace_back(name, joined);
  }
  for (; i < words.size(); ++i) {
    for (auto& f : Expand(words[i])) cmd.words.push_back(f);
  }
  out->push_back(std::move(cmd));
}

std::vector<ShellCommandLine> ShellInterpreter::Run(std::string_view script) {
  std::vector<ShellCommandLine> out;
  for (const auto& statement : RawStatements(script)) Statement(statement, &out);
  return out;
}

std::vector<std::pair<std::string, std::string>> ShellInterpreter::Exported() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& name : export_order_) {
    auto it = vars_.find(name);
    std::string value;
    if (it != vars_.end()) {
      for (size_t k = 0; k < it->second.size(); ++k) value += (k ? " " : "") + it->second[k];
    }
    out.emplace_back(name, value);
  }
  return out;
}

}  // namespace attune::megatron
