// Parsing Megatron's timer blocks (formats in timers.h).
#include "timers.h"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "attune/support/log_lines.h"

namespace attune::megatron {

using support::LogLine;
using support::SplitLogLines;
using support::Trim;

const char* TimerFormatName(TimerFormat f) {
  switch (f) {
    case TimerFormat::kMinMax: return "minmax";
    case TimerFormat::kMax: return "max";
    case TimerFormat::kAllRanks: return "all";
    case TimerFormat::kInline: return "inline";
  }
  return "minmax";
}

namespace {

std::optional<double> Number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// The header that opens a block, if `text` is one.
std::optional<TimerFormat> HeaderFormat(const std::string& text) {
  if (text.find("(min, max) time across ranks (ms):") != std::string::npos) return TimerFormat::kMinMax;
  if (text.find("max time across ranks (ms):") != std::string::npos) return TimerFormat::kMax;
  if (text.find("times across ranks (ms):") != std::string::npos) return TimerFormat::kAllRanks;
  return std::nullopt;
}

// "name ........: rest" → {name, rest}; the dots pad the name to 48 columns (none when longer).
std::optional<std::pair<std::string, std::string>> NameAndValue(const std::string& text) {
  static const std::regex kLine(R"(^(\S.*?) \.*: (.+)$)");
  std::smatch m;
  if (text.size() > support::kRegexWindow || !std::regex_match(text, m, kLine)) return std::nullopt;
  return std::make_pair(m[1].str(), m[2].str());
}

// One line inside a block; false when the line is not part of it (the block has ended).
bool ReadBlockLine(const std::string& text, TimerBlock* block, std::string* all_ranks_name) {
  if (text.size() > support::kRegexWindow) return false;  // no timer line is this long
  if (block->format == TimerFormat::kAllRanks) {
    static const std::regex kName(R"(^(\S+):$)");
    static const std::regex kRank(R"(^rank +(\d+): ([0-9.eE+-]+)$)");
    std::smatch m;
    if (std::regex_match(text, m, kName)) {
      *all_ranks_name = m[1].str();
      return true;
    }
    if (all_ranks_name->empty() || !std::regex_match(text, m, kRank)) return false;
    auto v = Number(m[2].str());
    if (!v) return false;
    TimerReading& r = block->timers[*all_ranks_name];
    r.min_ms = r.ranks.empty() ? *v : std::min(r.min_ms, *v);
    r.max_ms = r.ranks.empty() ? *v : std::max(r.max_ms, *v);
    r.ranks[std::atoi(m[1].str().c_str())] = *v;
    return true;
  }
  auto nv = NameAndValue(text);
  if (!nv) return false;
  if (block->format == TimerFormat::kMax) {
    auto v = Number(nv->second);
    if (!v) return false;
    block->timers[nv->first] = {*v, *v, {}};
    return true;
  }
  static const std::regex kPair(R"(^\(([0-9.eE+-]+), ([0-9.eE+-]+)\)$)");
  std::smatch m;
  if (!std::regex_match(nv->second, m, kPair)) return false;
  auto lo = Number(m[1].str()), hi = Number(m[2].str());
  if (!lo || !hi) return false;
  block->timers[nv->first] = {*lo, *hi, {}};
  return true;
}

// The text after "time (ms)" on a 2021-era line ("time (ms) | forward-compute: 306.62 | ..."),
// which may also end an iteration record printed on the same line.
std::optional<std::string> InlineStart(const std::string& text) {
  size_t at = text.find("time (ms) |");
  if (at == std::string::npos) return std::nullopt;
  return text.substr(at + 9);
}

// A hard-wrapped continuation of an inline timer line: only "name: value" pieces, a dangling
// "name:" whose value starts the next line, or that value.
bool IsInlineContinuation(const std::string& text) {
  static const std::regex kPiece(R"(^(?:[0-9.eE+-]+|[A-Za-z][A-Za-z0-9_-]*:(?: [0-9.eE+-]+)?)?$)");
  if (text.empty() || text.size() > support::kRegexWindow || text.find("iteration") != std::string::npos) {
    return false;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t bar = text.find('|', start);
    if (bar == std::string::npos) bar = text.size();
    if (!std::regex_match(Trim(std::string_view(text).substr(start, bar - start)), kPiece)) {
      return false;
    }
    start = bar + 1;
  }
  return true;
}

// "| a: 1.0 | b: 2.0" → the block's timers.
void ReadInlinePieces(const std::string& text, TimerBlock* block) {
  size_t start = 0;
  while (start < text.size()) {
    size_t bar = text.find('|', start);
    if (bar == std::string::npos) bar = text.size();
    std::string piece = Trim(std::string_view(text).substr(start, bar - start));
    size_t colon = piece.rfind(": ");
    if (colon != std::string::npos) {
      if (auto v = Number(Trim(piece.substr(colon + 2)))) {
        block->timers[Trim(piece.substr(0, colon))] = {*v, *v, {}};
      }
    }
    start = bar + 1;
  }
}

}  // namespace

std::vector<TimerBlock> ParseTimerBlocks(std::string_view log) {
  std::vector<TimerBlock> blocks;
  std::optional<TimerBlock> open;
  std::string all_ranks_name;
  std::string inline_text;  // an inline block's text, joined over wrapped lines
  auto close = [&] {
    if (open && open->format == TimerFormat::kInline) ReadInlinePieces(inline_text, &*open);
    if (open && !open->timers.empty()) blocks.push_back(std::move(*open));
    open.reset();
  };
  for (const LogLine& line : SplitLogLines(log)) {
    if (open && open->format == TimerFormat::kInline) {
      if (IsInlineContinuation(line.text)) {
        inline_text += " " + line.text;
        continue;
      }
    } else if (open && ReadBlockLine(line.text, &*open, &all_ranks_name)) {
      continue;
    }
    close();
    if (auto format = HeaderFormat(line.text)) {
      open = TimerBlock{line.number, *format, {}};
      all_ranks_name.clear();
    } else if (auto rest = InlineStart(line.text)) {
      open = TimerBlock{line.number, TimerFormat::kInline, {}};
      inline_text = *rest;
    }
  }
  close();
  return blocks;
}

void AttachTimerBlocks(const std::vector<TimerBlock>& blocks, LogParse* parse) {
  for (const TimerBlock& block : blocks) {
    IterationSample* owner = nullptr;
    for (IterationSample& s : parse->iterations) {
      // A 2021 inline block may share the record's last line.
      if (s.line <= block.line && (!owner || s.line > owner->line)) owner = &s;
    }
    if (!owner) continue;
    for (const auto& [name, reading] : block.timers) {
      owner->extra[std::string(kTimerMaxPrefix) + name] = reading.max_ms;
      if (block.format == TimerFormat::kMinMax || block.format == TimerFormat::kAllRanks) {
        owner->extra[std::string(kTimerMinPrefix) + name] = reading.min_ms;
      }
    }
  }
}

}  // namespace attune::megatron
