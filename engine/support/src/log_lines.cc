#include "attune/support/log_lines.h"

#include <cctype>
#include <cstdlib>

namespace attune::support {
namespace {

bool Digit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

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
  for (const char* level : {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL"}) {
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

// A number of 1–6 digits at the start of `s`, and where it ends.
std::optional<int> SmallNumber(std::string_view s, size_t* end) {
  size_t i = 0;
  while (i < s.size() && Digit(s[i])) ++i;
  if (i == 0 || i > 6) return std::nullopt;
  *end = i;
  return std::atoi(std::string(s.substr(0, i)).c_str());
}

// After a bare timestamp, Python logging's " - name - LEVEL - " (or "LEVEL - "; the fields stop
// at the level), or the " | LEVEL | name | " form (two fields).
void PeelLoggingFields(std::string* t) {
  std::string& s = *t;
  bool bars = StartsWith(s, "| ");
  std::string sep = bars ? " | " : " - ";
  if (bars || StartsWith(s, "- ")) s = Trim(s.substr(2));
  for (int field = 0; field < 2; ++field) {
    size_t at = s.find(sep);
    if (at == std::string::npos || at == 0 || at > 64) return;
    std::string word = s.substr(0, at);
    if (word.find(' ') != std::string::npos) return;  // not a logger name or level
    s = Trim(s.substr(at + sep.size()));
    if (!bars && IsLevel(word)) return;
  }
}

// "INFO:root:" (Python logging's default format) at the start of `s`: its length, else 0.
size_t DefaultLoggingLength(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || !IsLevel(s.substr(0, colon))) return 0;
  size_t i = colon + 1;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) ++i;
  if (i >= s.size() || s[i] != ':' || i == colon + 1) return 0;
  return i + 1;
}

class Peeler {
 public:
  explicit Peeler(LogLine* line) : l_(*line) {}

  // Removes one leading prefix; returns false when none applies.
  bool PeelOne() {
    std::string& s = l_.text;
    if (s.empty()) return false;
    if (size_t n = TimestampLength(s); n > 0) {  // a wrapper logger's bare timestamp
      if (!l_.timestamp_s) l_.timestamp_s = ParseTimestamp(s);
      s = Trim(s.substr(n));
      PeelLoggingFields(&s);
      return true;
    }
    if (size_t n = DefaultLoggingLength(s); n > 0) {
      s = Trim(s.substr(n));
      return true;
    }
    if (s[0] == '>') {  // Markdown quote
      s = Trim(s.substr(1));
      return true;
    }
    if (s[0] == '[') return PeelBracket();
    if (s[0] == '(') return PeelRayTag();
    size_t end = 0;
    auto task = SmallNumber(s, &end);  // srun --label: "3: text", and "3:" alone on a blank line
    if (task && end < s.size() && s[end] == ':' && (end + 1 == s.size() || s[end + 1] == ' ')) {
      AddSource(s.substr(0, end + 1));
      if (!l_.rank) l_.rank = *task;
      s = Trim(s.substr(end + 1));
      return true;
    }
    return false;
  }

 private:
  void AddSource(const std::string& tag) {
    if (!l_.source.empty()) l_.source += " ";
    l_.source += tag;
  }

  bool PeelBracket() {
    std::string& s = l_.text;
    size_t close = s.find(']');
    if (close == std::string::npos) return false;
    std::string inner = s.substr(1, close - 1);
    bool colon_after = close + 1 < s.size() && s[close + 1] == ':';
    for (const char* tag : {"default", "rank", "Rank ", "Rank", "RANK "}) {
      if (!StartsWith(inner, tag) || !colon_after) continue;
      size_t end = 0;
      auto n = SmallNumber(std::string_view(inner).substr(std::string_view(tag).size()), &end);
      if (!n || std::string_view(tag).size() + end != inner.size()) continue;
      AddSource(s.substr(0, close + 2));
      if (!l_.rank) l_.rank = *n;
      s = Trim(s.substr(close + 2));
      return true;
    }
    if (auto when = ParseTimestamp(inner)) {
      if (!l_.timestamp_s) l_.timestamp_s = when;
      s = Trim(s.substr(close + 1));
      return true;
    }
    if (IsLevel(inner)) {  // "[INFO]" of a wrapper logger
      s = Trim(s.substr(close + 1));
      return true;
    }
    // NeMo's logger: "[NeMo I 2025-01-02 03:04:05 nemo_logging:349]".
    if (StartsWith(inner, "NeMo ") && inner.size() > 7 && inner[6] == ' ') {
      if (auto when = ParseTimestamp(std::string_view(inner).substr(7)); when && !l_.timestamp_s) {
        l_.timestamp_s = when;
      }
      s = Trim(s.substr(close + 1));
      return true;
    }
    return false;
  }

  // Ray: "(pid=123)", "(TrainActor pid=123, ip=10.0.0.1)", "(raylet)", "(raylet, ip=10.0.0.1)".
  bool PeelRayTag() {
    std::string& s = l_.text;
    size_t close = s.find(')');
    if (close == std::string::npos || close > 160) return false;
    std::string inner = s.substr(1, close - 1);
    bool ray = inner.find("pid=") != std::string::npos || inner == "raylet" ||
               StartsWith(inner, "raylet,") || inner == "gcs_server" || StartsWith(inner, "autoscaler");
    if (!ray) return false;
    size_t word_end = inner.find_first_of(" ,");
    std::string first = inner.substr(0, word_end);
    if (first.find('=') == std::string::npos && l_.actor.empty()) l_.actor = first;
    AddSource(s.substr(0, close + 1));
    s = Trim(s.substr(close + 1));
    return true;
  }

  LogLine& l_;
};

// Ray's "… [repeated 7x across cluster]" at the end of the text: removed, kept as the count.
void PeelRepeat(LogLine* line) {
  std::string& s = line->text;
  static constexpr std::string_view kTail = "x across cluster]";
  if (s.size() < kTail.size() || s.compare(s.size() - kTail.size(), kTail.size(), kTail) != 0) return;
  size_t open = s.rfind("[repeated ");
  if (open == std::string::npos) return;
  size_t end = 0;
  auto n = SmallNumber(std::string_view(s).substr(open + 10), &end);
  if (!n || open + 10 + end + kTail.size() != s.size()) return;
  line->repeat = *n;
  s = Trim(s.substr(0, open));
}

// Where, after its start, a record glued onto this one begins (npos when none).
size_t GluedRecordAt(std::string_view text) {
  size_t best = std::string_view::npos;
  for (std::string_view marker : {std::string_view("terminate called after throwing"),
                                  std::string_view("terminate called recursively"),
                                  std::string_view("Traceback (most recent call last):")}) {
    size_t at = text.find(marker, 1);
    if (at != std::string_view::npos && at < best) best = at;
  }
  // A logger's timestamp glued after a progress bar ("…, lr=4.47e-05]2026-07-07 22:20:52 | INFO").
  for (size_t close = text.find(']'); close != std::string_view::npos && close + 1 < best;
       close = text.find(']', close + 1)) {
    if (ParseTimestamp(text.substr(close + 1))) {
      best = close + 1;
      break;
    }
  }
  // A Ray actor's tag after a space: Ray's lines joined on one line when a log is pasted
  // ("… retrying (RolloutManager pid=17) [2025-12-19 13:00:58] …"). Only the bare tag counts:
  // "(Name pid=N)" or "(Name pid=N, ip=A)", not an exception's "(pid=N, ip=A, actor_id=…)".
  for (size_t at = text.find(" ("); at != std::string_view::npos && at + 1 < best; at = text.find(" (", at + 1)) {
    size_t i = at + 2;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    if (i < text.size() && text[i] == '=') {
      i = at + 2;  // "(pid=…": no actor name
    } else if (i > at + 2) {
      if (i >= text.size() || text[i] != ' ') continue;
      ++i;
    }
    if (text.substr(i, 4) != "pid=") continue;
    i += 4;
    size_t digits = i;
    while (i < text.size() && Digit(text[i])) ++i;
    if (i == digits) continue;
    if (text.substr(i, 5) == ", ip=") {
      i += 5;
      while (i < text.size() && (std::isxdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == ':')) ++i;
    }
    if (i < text.size() && text[i] == ')' && (i + 1 == text.size() || text[i + 1] == ' ')) {
      best = at + 1;
      break;
    }
  }
  for (std::string_view tag : {std::string_view("[rank"), std::string_view("[default")}) {
    for (size_t at = text.find(tag, 1); at != std::string_view::npos && at < best; at = text.find(tag, at + 1)) {
      size_t i = at + tag.size(), digits = i;
      while (i < text.size() && Digit(text[i])) ++i;
      if (i > digits && i + 1 < text.size() && text[i] == ']' && text[i + 1] == ':') {
        best = at;
        break;
      }
    }
  }
  return best;
}

// Normalises one record (a physical line, or a piece of one) and appends it and any records glued
// onto it.
void AddRecord(std::string raw, int number, std::vector<LogLine>* out) {
  for (int pieces = 0; pieces < 64; ++pieces) {
    LogLine line;
    line.number = number;
    line.text = Trim(raw);
    Peeler peeler(&line);
    for (int guard = 0; guard < 10 && peeler.PeelOne(); ++guard) {
    }
    size_t glued = GluedRecordAt(line.text);
    std::string rest;
    if (glued != std::string::npos) {
      rest = line.text.substr(glued);
      line.text = Trim(line.text.substr(0, glued));
      // `rest` ends the physical line: the glued record's raw text is that tail of `raw`.
      raw = Trim(std::string_view(raw).substr(0, raw.size() - rest.size()));
    }
    line.raw = raw;
    PeelRepeat(&line);
    out->push_back(std::move(line));
    if (rest.empty()) return;
    raw = std::move(rest);
  }
  out->push_back(LogLine{number, raw, Trim(raw), "", std::nullopt, "", 1, std::nullopt});
}

}  // namespace

std::string LogLine::Process() const {
  if (rank) return "rank " + std::to_string(*rank);
  if (!actor.empty()) {
    size_t open = source.find('(');
    size_t close = source.find(')', open == std::string::npos ? 0 : open);
    if (open != std::string::npos && close != std::string::npos) return source.substr(open + 1, close - open - 1);
    return actor;
  }
  return source;
}

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
  auto num = [&](size_t at, size_t n) { return std::atol(std::string(s.substr(at, n)).c_str()); };
  long month = num(5, 2), day = num(8, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  double seconds = DaysFromCivil(num(0, 4), static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400.0 +
                   num(11, 2) * 3600.0 + num(14, 2) * 60.0 + num(17, 2);
  if (s.size() > 20 && (s[19] == '.' || s[19] == ',')) {
    size_t end = 20;
    while (end < s.size() && Digit(s[end])) ++end;
    if (end > 20) seconds += std::atof(("0." + std::string(s.substr(20, end - 20))).c_str());
  }
  return seconds;
}

std::vector<LogLine> SplitLogLines(std::string_view log) {
  std::vector<LogLine> lines;
  size_t start = 0;
  int number = 1;
  while (start < log.size()) {
    size_t end = log.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = log.size();
    std::string raw = StripAnsi(log.substr(start, end - start));
    while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
    AddRecord(std::move(raw), number, &lines);
    if (end >= log.size()) break;
    if (log[end] == '\r' && end + 1 < log.size() && log[end + 1] == '\n') ++end;
    if (log[end] == '\n') ++number;  // a lone CR redraws the same physical line
    start = end + 1;
  }
  return lines;
}

}  // namespace attune::support
