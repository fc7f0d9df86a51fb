// Copyright attune authors.
#include "lessons.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

namespace attune::agents {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (std::isspace(static_cast<unsigned char>(s[b])) || s[b] == '`' || s[b] == '*'))
    ++b;
  while (e > b &&
         (std::isspace(static_cast<unsigned char>(s[e - 1])) || s[e - 1] == '`' || s[e - 1] == '*'))
    --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

bool IsIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// The token after "<key>:" on `line` (case-insensitive key), or "" when absent.
std::string ValueAfter(const std::string& line, std::string_view key) {
  std::string lower = Lower(line);
  size_t pos = 0;
  while ((pos = lower.find(key, pos)) != std::string::npos) {
    bool word_start = pos == 0 || !IsIdChar(lower[pos - 1]);
    size_t after = pos + key.size();
    while (after < lower.size() && lower[after] == ' ') ++after;
    if (word_start && after < lower.size() && lower[after] == ':') {
      size_t b = after + 1;
      while (b < line.size() && (line[b] == ' ' || line[b] == '"' || line[b] == '\'')) ++b;
      size_t e = b;
      while (e < line.size() && !std::isspace(static_cast<unsigned char>(line[e])) &&
             line[e] != ',' && line[e] != '"' && line[e] != '\'' && line[e] != ';')
        ++e;
      return line.substr(b, e - b);
    }
    pos += key.size();
  }
  return "";
}

std::vector<std::string> TableCells(const std::string& line) {
  std::vector<std::string> cells;
  std::string t = Trim(line);
  if (t.size() < 2 || t.front() != '|') return cells;
  size_t start = 1;
  while (start < t.size()) {
    size_t end = t.find('|', start);
    if (end == std::string::npos) end = t.size();
    cells.push_back(Trim(std::string_view(t).substr(start, end - start)));
    start = end + 1;
  }
  if (!cells.empty() && cells.back().empty()) cells.pop_back();
  return cells;
}

// The backticked text after "change:" on `line` ("" when none).
std::string ChangeText(const std::string& line) {
  std::string lower = Lower(line);
  size_t pos = lower.find("change:");
  if (pos == std::string::npos) return "";
  size_t open = line.find('`', pos);
  if (open == std::string::npos) return "";
  size_t close = line.find('`', open + 1);
  if (close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

void Add(std::map<std::string, LessonPrior>* priors, const std::string& lever, double effect,
         const std::string& change_text, const DirectionOf& direction_of) {
  if (lever.empty()) return;
  if (direction_of && !change_text.empty()) {
    std::vector<Change> changes = ParseChangeList(change_text);
    // The reverse move's speedup, inverted: recompute full -> none at +39% says none -> full
    // costs 28%.
    if (!changes.empty() && direction_of(lever, changes) < 0 && effect > -1) {
      effect = 1 / (1 + effect) - 1;
    }
  }
  LessonPrior& p = (*priors)[lever];
  p.effect = (p.effect * p.count + effect) / (p.count + 1);
  ++p.count;
}

struct TableColumns {
  int lever = -1;
  int effect = -1;
};

TableColumns HeaderColumns(const std::vector<std::string>& cells) {
  TableColumns cols;
  for (size_t i = 0; i < cells.size(); ++i) {
    std::string c = Lower(cells[i]);
    if (c == "lever" || c == "lever id" || c == "lever_id") cols.lever = static_cast<int>(i);
    if (c == "effect" || c == "speedup" || c == "gain" || c == "speed") {
      cols.effect = static_cast<int>(i);
    }
  }
  return cols;
}

}  // namespace

std::optional<double> ParseEffect(std::string_view text) {
  std::string t = Trim(text);
  if (t.empty()) return std::nullopt;
  const char* begin = t.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  std::string rest = Trim(std::string_view(end));
  if (!rest.empty() && rest.front() == '%') return v / 100.0;
  if (!rest.empty() && (rest.front() == 'x' || rest.front() == 'X')) return v - 1.0;
  if (!rest.empty()) return std::nullopt;
  return v;
}

std::string LessonsForStack(std::string_view text, std::string_view stack) {
  std::string out, file;
  bool keep = true;
  auto flush = [&] {
    if (keep) out += file;
    file.clear();
    keep = true;
  };
  const std::string wanted = Lower(stack);
  for (const std::string& line : SplitLines(text)) {
    std::string t = Trim(line);
    if (t.rfind("<!--", 0) == 0 && t.size() >= 7 && t.compare(t.size() - 3, 3, "-->") == 0) flush();
    if (Lower(t).rfind("stack:", 0) == 0 && !wanted.empty()) {
      std::string named = Lower(Trim(std::string_view(t).substr(6)));
      if (!named.empty() && named != wanted) keep = false;
    }
    file += line + "\n";
  }
  flush();
  return out;
}

std::vector<Change> ParseChangeList(std::string_view text) {
  std::vector<Change> changes;
  std::string t = Trim(text);
  // Changes are separated by ", " before the next key (a flag or an env: key); a value may hold
  // commas of its own.
  std::vector<std::string> parts;
  size_t start = 0;
  while (start < t.size()) {
    size_t next = start;
    size_t cut = std::string::npos;
    while ((next = t.find(", ", next)) != std::string::npos) {
      std::string_view rest = std::string_view(t).substr(next + 2);
      if (rest.rfind("--", 0) == 0 || rest.rfind("env:", 0) == 0) {
        cut = next;
        break;
      }
      next += 2;
    }
    parts.push_back(t.substr(start, cut == std::string::npos ? std::string::npos : cut - start));
    if (cut == std::string::npos) break;
    start = cut + 2;
  }
  auto value = [](std::string v) -> std::optional<std::string> {
    v = Trim(v);
    if (v == "(absent)") return std::nullopt;
    if (v == "(set)") return std::string();
    return v;
  };
  for (const std::string& part : parts) {
    // "env:NAME: from -> to": the key is everything before the last ": " ahead of " -> ".
    size_t arrow = part.find(" -> ");
    if (arrow == std::string::npos) return {};
    size_t colon = part.rfind(": ", arrow);
    if (colon == std::string::npos || colon == 0) return {};
    Change c;
    c.key = Trim(std::string_view(part).substr(0, colon));
    c.from = value(part.substr(colon + 2, arrow - colon - 2));
    c.to = value(part.substr(arrow + 4));
    changes.push_back(std::move(c));
  }
  return changes;
}

std::map<std::string, LessonPrior> ParseLessons(std::string_view text, const DirectionOf& direction_of) {
  std::map<std::string, LessonPrior> priors;
  std::vector<std::string> lines = SplitLines(text);
  std::string pending_lever;  // a `lever:` seen without its `effect:` yet
  std::string pending_change;  // the `change:` on that lever's line
  int pending_age = 0;
  TableColumns table;
  for (const std::string& line : lines) {
    std::vector<std::string> cells = TableCells(line);
    if (!cells.empty()) {
      TableColumns header = HeaderColumns(cells);
      if (header.lever >= 0 && header.effect >= 0) {
        table = header;
        continue;
      }
      int need = std::max(table.lever, table.effect);
      if (table.lever >= 0 && need < static_cast<int>(cells.size())) {
        std::optional<double> e = ParseEffect(cells[table.effect]);
        if (e) Add(&priors, cells[table.lever], *e, "", direction_of);
      }
      continue;
    }
    table = TableColumns{};
    std::string lever = ValueAfter(line, "lever");
    std::string effect_text = ValueAfter(line, "effect");
    if (!lever.empty()) {
      pending_lever = lever;
      pending_change = ChangeText(line);
      pending_age = 0;
    }
    if (!effect_text.empty() && !pending_lever.empty()) {
      std::optional<double> e = ParseEffect(effect_text);
      std::string change = ChangeText(line);
      if (e) Add(&priors, pending_lever, *e, change.empty() ? pending_change : change, direction_of);
      pending_lever.clear();
      continue;
    }
    // An `effect:` belongs to a `lever:` at most three lines above it.
    if (!pending_lever.empty() && lever.empty() && ++pending_age > 3) pending_lever.clear();
  }
  return priors;
}

}  // namespace attune::agents
