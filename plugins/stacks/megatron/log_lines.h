// Copyright attune authors.
//
// Line clean-up shared by the log parser and triage: splits a log into physical lines (LF, CRLF or
// lone CR), removes ANSI escape codes and peels the prefixes that launchers and copy-pasting add:
// Markdown quotes ("> "), torchrun tags ("[default7]:", "[rank3]:"), Slurm task ids ("0: "), Ray
// actor tags ("(pid=123)", "(Actor pid=1, ip=..)"), leading timestamps ("[2025-10-24 09:52:15]",
// bare "2025-10-24 09:52:15,123"), and wrapper loggers' fields ("[INFO]", "[Rank 0]:",
// "- megatron - INFO - ").
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_LOG_LINES_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_LOG_LINES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune::megatron {

struct LogLine {
  int number = 0;          // 1-based
  std::string raw;         // without line ending and ANSI codes, trailing spaces trimmed
  std::string text;        // prefixes removed, trimmed
  std::string source;      // the rank-ish prefixes removed ("3:", "[default7]:"), "" when none
  std::optional<double> timestamp_s;  // seconds since 1970 of a leading timestamp, when present
};

std::vector<LogLine> SplitLogLines(std::string_view log);

// Seconds since 1970 for "YYYY-MM-DD HH:MM:SS[.frac]" at the start of `s` (std::nullopt if not).
std::optional<double> ParseTimestamp(std::string_view s);

std::string Trim(std::string_view s);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_LOG_LINES_H_
