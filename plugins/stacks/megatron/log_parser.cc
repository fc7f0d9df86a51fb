#include "log_parser.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>

#include "attune/support/log_lines.h"

namespace attune::megatron {

using support::LogLine;
using support::SplitLogLines;
using support::Trim;

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "iteration   10/ 1000" at the start of a cleaned line.
bool IsIterationStart(const std::string& text) {
  if (!StartsWith(text, "iteration")) return false;
  size_t i = 9;
  if (i >= text.size() || !std::isspace(static_cast<unsigned char>(text[i]))) return false;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t digits = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return i > digits;
}

bool IsOtherRecordStart(const std::string& text) {
  return StartsWith(text, "[Rank ") || StartsWith(text, "time (ms)") ||
         text.find("validation loss at") != std::string::npos ||
         text.find("valid loss at") != std::string::npos || StartsWith(text, "steps:") ||
         text.find("time across ranks") != std::string::npos || StartsWith(text, "Traceback") ||
         text.find("[INFO]") != std::string::npos || text.find("[WARNING]") != std::string::npos ||
         StartsWith(text, "---") || StartsWith(text, "[after") || StartsWith(text, "[before") ||
         StartsWith(text, "[exiting");
}

std::optional<double> Number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// Joins a wrapped physical line to the record: no space inside a split number, else one space.
void JoinContinuation(std::string* record, const std::string& next) {
  if (record->empty() || next.empty()) {
    *record += next;
    return;
  }
  char a = record->back(), b = next[0];
  bool number_split = (std::isdigit(static_cast<unsigned char>(a)) || a == '.' || a == 'E' || a == 'e') &&
                      (std::isdigit(static_cast<unsigned char>(b)) || b == 'E' || b == 'e' || b == '+' || b == '-' || b == '.');
  size_t last_space = record->find_last_of(' ');
  std::string tail = record->substr(last_space == std::string::npos ? 0 : last_space + 1);
  bool tail_numeric = !tail.empty() && std::isdigit(static_cast<unsigned char>(tail[0]));
  *record += (number_split && tail_numeric) ? "" : " ";
  *record += next;
}

struct OpenRecord {
  std::string text;
  std::string source;
  int last_line = 0;
  int continuations = 0;
};

bool Complete(const OpenRecord& r) {
  return !r.text.empty() && r.text.back() == '|' &&
         r.text.find("number of nan iterations") != std::string::npos;
}

void ApplyField(const std::string& key, double value, bool timer, IterationSample* s) {
  if (timer) {
    s->extra[std::string(kTimerPrefix) + key] = value;
  } else if (key == "elapsed time per iteration (ms)") {
    s->step_time_ms = value;
  } else if (key == "elapsed time per iteration (s)") {
    s->step_time_ms = value * 1000.0;
  } else if (key == "lm loss" || (key == "loss" && !s->loss)) {
    if (std::isfinite(value)) s->loss = value;
  } else if (key == "grad norm") {
    s->grad_norm = value;
  } else if (key == "throughput per GPU (TFLOP/s/GPU)" || key == "TFLOPs") {
    s->tflops_per_gpu = value;
  } else if (key == "tokens/sec/gpu" || key == "tokens per gpu per second (tgs)") {
    s->tokens_per_s_per_gpu = value;
  } else if (key == "global batch size") {
    s->global_batch_size = static_cast<int64_t>(value);
  } else if (key == "number of skipped iterations") {
    s->skipped_iterations = static_cast<int64_t>(value);
  } else if (key == "number of nan iterations") {
    s->nan_iterations = static_cast<int64_t>(value);
  } else {
    s->extra[key] = value;
  }
}

void ParseIterationPiece(const std::string& piece, IterationSample* s) {
  size_t i = 9;
  while (i < piece.size() && std::isspace(static_cast<unsigned char>(piece[i]))) ++i;
  s->iteration = std::atoll(piece.c_str() + i);
  size_t slash = piece.find('/');
  if (slash != std::string::npos) s->train_iters = std::atoll(piece.c_str() + slash + 1);
}

// Splits the record on '|' and reads "key: value" pieces. `truncated`: drop the last piece.
std::optional<IterationSample> ParseRecord(const OpenRecord& r, bool truncated) {
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start <= r.text.size()) {
    size_t bar = r.text.find('|', start);
    if (bar == std::string::npos) bar = r.text.size();
    pieces.push_back(Trim(std::string_view(r.text).substr(start, bar - start)));
    start = bar + 1;
  }
  if (truncated && !pieces.empty()) pieces.pop_back();
  IterationSample s;
  s.line = r.last_line;
  bool timer = false;
  for (const auto& piece : pieces) {
    if (IsIterationStart(piece)) { ParseIterationPiece(piece, &s); continue; }
    if (piece == "time (ms)") { timer = true; continue; }
    size_t colon = piece.rfind(": ");
    if (colon == std::string::npos) colon = piece.rfind(':');
    if (colon == std::string::npos) continue;
    std::string key = Trim(piece.substr(0, colon));
    auto value = Number(Trim(piece.substr(colon + 1)));
    if (value) ApplyField(key, *value, timer, &s);
    else if (key == "lm loss") s.loss.reset();
  }
  if (s.step_time_ms <= 0) return std::nullopt;
  return s;
}

const std::regex& MemoryRegex() {
  static const std::regex re(
      R"(\[Rank (\d+)\] \(after (\d+) iterations\) memory \(MB\) \| allocated: ([0-9.eE+-]+) \| max allocated: ([0-9.eE+-]+) \| reserved: ([0-9.eE+-]+) \| max reserved: ([0-9.eE+-]+))");
  return re;
}

void ParseMemory(const std::string& full_text, LogParse* out) {
  // One "[Rank N] …" report at a time (several ranks' reports may be glued on one line), each
  // within the regex window (support/log_lines.h).
  for (size_t at = full_text.find("[Rank "); at != std::string::npos;) {
    size_t next = full_text.find("[Rank ", at + 1);
    std::string text = full_text.substr(at, std::min(next - at, support::kRegexWindow));
    at = next;
    std::smatch m;
    if (!std::regex_search(text, m, MemoryRegex())) continue;
    try {
      MemorySample s;
      s.rank = std::stoi(m[1]);
      s.after_iteration = std::stoll(m[2]);
      s.allocated_mb = std::stod(m[3]);
      s.max_allocated_mb = std::stod(m[4]);
      s.reserved_mb = std::stod(m[5]);
      s.max_reserved_mb = std::stod(m[6]);
      out->memory.push_back(s);
    } catch (const std::exception&) {
      out->warnings.push_back("a memory report with a number out of range: " + text.substr(0, 120));
    }
  }
}

// "time (ms) | a: 1.0 | b: 2.0" (2021 era) or "    name ........: (min, max)" (timer block).
void AttachTimers(const std::string& text, bool in_block, LogParse* out) {
  if (out->iterations.empty()) return;
  auto& extra = out->iterations.back().extra;
  if (StartsWith(text, "time (ms)")) {
    size_t start = 0;
    while (start < text.size()) {
      size_t bar = text.find('|', start);
      if (bar == std::string::npos) bar = text.size();
      std::string piece = Trim(std::string_view(text).substr(start, bar - start));
      size_t colon = piece.rfind(": ");
      if (colon != std::string::npos) {
        if (auto v = Number(Trim(piece.substr(colon + 1)))) extra[std::string(kTimerPrefix) + Trim(piece.substr(0, colon))] = *v;
      }
      start = bar + 1;
    }
    return;
  }
  size_t dots = text.find("..");
  if (!in_block || dots == std::string::npos) return;
  std::string name = Trim(text.substr(0, dots));
  size_t last = text.find_last_of("0123456789");
  size_t first = last;
  while (first > 0 && (std::isdigit(static_cast<unsigned char>(text[first - 1])) || text[first - 1] == '.')) --first;
  if (last != std::string::npos) {
    if (auto v = Number(text.substr(first, last - first + 1))) extra[std::string(kTimerPrefix) + name] = *v;
  }
}

class Parser {
 public:
  LogParse Run(const std::vector<LogLine>& lines) {
    for (const auto& line : lines) Line(line);
    Finish();
    return std::move(out_);
  }

 private:
  void Line(const LogLine& line) {
    const std::string& t = line.text;
    if (t.empty()) return;
    if (t == "training ..." || StartsWith(t, "training ...") ||
        t.find("[before the start of training step]") != std::string::npos) {
      out_.training_started = true;
    }
    if (IsIterationStart(t)) {
      Finish();
      open_ = OpenRecord{t, line.source, line.number, 0};
      timer_block_ = false;
      return;
    }
    if (open_ && Continues(line)) {
      JoinContinuation(&open_->text, t);
      open_->last_line = line.number;
      ++open_->continuations;
      return;
    }
    if (t.find("memory (MB)") != std::string::npos) ParseMemory(t, &out_);
    if (t.find("time across ranks (ms)") != std::string::npos) { timer_block_ = true; return; }
    if (StartsWith(t, "time (ms)") || timer_block_) {
      Finish();
      AttachTimers(t, timer_block_, &out_);
    }
  }

  bool Continues(const LogLine& line) const {
    if (!line.source.empty() && line.source != open_->source) return false;
    if (IsOtherRecordStart(line.text) || open_->continuations >= 12) return false;
    bool wrapped = open_->text.back() != '|';
    bool missing_tail = !Complete(*open_) && line.text.find('|') != std::string::npos;
    return wrapped || missing_tail;
  }

  // A record that does not end with '|' was cut (end of log or a lost continuation): its last
  // piece may hold a truncated number, so it is dropped.
  void Finish() {
    if (!open_) return;
    bool truncated = open_->text.back() != '|';
    auto sample = ParseRecord(*open_, truncated);
    if (!sample) {
      out_.warnings.push_back("line " + std::to_string(open_->last_line) +
                              ": iteration record without an elapsed time: " + open_->text.substr(0, 120));
    } else if (!seen_.insert(sample->iteration).second) {
      out_.warnings.push_back("line " + std::to_string(open_->last_line) + ": iteration " +
                              std::to_string(sample->iteration) + " logged again (kept the first)");
    } else {
      out_.training_started = true;
      out_.iterations.push_back(std::move(*sample));
    }
    open_.reset();
  }

  LogParse out_;
  std::optional<OpenRecord> open_;
  std::set<int64_t> seen_;
  bool timer_block_ = false;
};

}  // namespace

LogParse ParseMegatronLog(std::string_view log) { return Parser().Run(SplitLogLines(log)); }

LogParse ParseMegatronLines(const std::vector<LogLine>& lines) { return Parser().Run(lines); }

}  // namespace attune::megatron
