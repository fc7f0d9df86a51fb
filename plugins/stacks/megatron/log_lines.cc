#include "log_lines.h"

#include <cctype>

namespace attune::megatron {
namespace {

bool Digit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

std::string StripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
long DaysFromCivil(long y, unsigned m, unsigned d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long>(doe) - 719468;
}

bool IsLevel(std::string_view word) {
  for (const char* level : {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"}) {
    if (word == level) return true;
  }
  return false;
}

// Length of a leading "YYYY-MM-DD HH:MM:SS[.,fraction]" (0 when there is none).
size_t TimestampLength(std::string_view s) {
  if (!ParseTimestamp(s)) return 0;
  size_t end = 19;
  if (end < s.size() && (s[end] == '.' || s[end] == ',')) {
    ++end;
    while (end < s.size() && Digit(s[end])) ++end;
  }
  return end;
}

// After a bare timestamp, Python logging's " - name - LEVEL - " (or "LEVEL - ").
void PeelLoggingFields(std::string* t) {
  std::string& s = *t;
  if (s.rfind("- ", 0) == 0) s = Trim(s.substr(2));
  for (int field = 0; field < 2; ++field) {
    size_t dash = s.find(" - ");
    if (dash == std::string::npos || dash == 0 || dash > 64) return;
    std::string word = s.substr(0, dash);
    if (word.find(' ') != std::string::npos) return;  // not a logger name or level
    s = Trim(s.substr(dash + 3));
    if (IsLevel(word)) return;
  }
}

// Removes one leading prefix; returns false when none applies. Rank-ish prefixes go to `source`.
bool PeelOne(std::string* t, std::string* source, std::optional<double>* ts) {
  std::string& s = *t;
  if (s.empty()) return false;
  if (size_t n = TimestampLength(s); n > 0) {  // a wrapper logger's bare timestamp
    if (!*ts) *ts = ParseTimestamp(s);
    s = Trim(s.substr(n));
    PeelLoggingFields(&s);
    return true;
  }
  if (s[0] == '>') {  // Markdown quote
    s = Trim(s.substr(1));
    return true;
  }
  if (s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos) return false;
    std::string inner = s.substr(1, close - 1);
    bool rank_tag = (inner.rfind("default", 0) == 0 || inner.rfind("rank", 0) == 0 ||
                     inner.rfind("Rank ", 0) == 0) &&
                    close + 1 < s.size() && s[close + 1] == ':';
    if (rank_tag) {
      *source += s.substr(0, close + 2);
      s = Trim(s.substr(close + 2));
      return true;
    }
    if (auto when = ParseTimestamp(inner)) {
      if (!*ts) *ts = when;
      s = Trim(s.substr(close + 1));
      return true;
    }
    if (IsLevel(inner)) {  // "[INFO]" of a wrapper logger
      s = Trim(s.substr(close + 1));
      return true;
    }
    return false;
  }
  if (s[0] == '(') {  // Ray: "(pid=123)" or "(Actor pid=123, ip=10.0.0.1)"
    size_t close = s.find(')');
    if (close != std::string::npos && s.substr(0, close).find("pid=") != std::string::npos) {
      *source += s.substr(0, close + 1);
      s = Trim(s.substr(close + 1));
      return true;
    }
    return false;
  }
  size_t i = 0;
  while (i < s.size() && Digit(s[i])) ++i;
  if (i > 0 && i < 6 && i + 1 < s.size() && s[i] == ':' && s[i + 1] == ' ') {  // Slurm "0: "
    *source += s.substr(0, i + 1);
    s = Trim(s.substr(i + 2));
    return true;
  }
  return false;
}

}  // namespace

std::string Trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

std::optional<double> ParseTimestamp(std::string_view s) {
  // YYYY-MM-DD[ T]HH:MM:SS
  if (s.size() < 19) return std::nullopt;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
    if (!Digit(s[i])) return std::nullopt;
  }
  if (s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](size_t at, size_t n) { return std::stol(std::string(s.substr(at, n))); };
  double seconds = DaysFromCivil(num(0, 4), num(5, 2), num(8, 2)) * 86400.0 + num(11, 2) * 3600.0 +
                   num(14, 2) * 60.0 + num(17, 2);
  if (s.size() > 20 && (s[19] == '.' || s[19] == ',')) {
    size_t end = 20;
    while (end < s.size() && Digit(s[end])) ++end;
    if (end > 20) seconds += std::stod("0." + std::string(s.substr(20, end - 20)));
  }
  return seconds;
}

std::vector<LogLine> SplitLogLines(std::string_view log) {
  std::vector<LogLine> lines;
  size_t start = 0;
  int number = 0;
  while (start < log.size()) {
    size_t end = log.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = log.size();
    LogLine line;
    line.number = ++number;
    std::string raw = StripAnsi(log.substr(start, end - start));
    while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
    line.raw = raw;
    line.text = Trim(raw);
    for (int guard = 0; guard < 8 && PeelOne(&line.text, &line.source, &line.timestamp_s); ++guard) {
    }
    lines.push_back(std::move(line));
    if (end < log.size() && log[end] == '\r' && end + 1 < log.size() && log[end + 1] == '\n') ++end;
    start = end + 1;
  }
  return lines;
}

}  // namespace attune::megatron
