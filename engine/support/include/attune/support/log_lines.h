// Copyright attune authors.
//
// The one line normaliser every stack's log parser and triage read through. A training log as
// users have it is the output of many processes, wrapped by launchers and loggers and sometimes
// pasted through Markdown; SplitLogLines turns it into records:
//
//   - physical lines split at LF, CRLF or a lone CR (each redraw of a carriage-return progress
//     bar is its own record, numbered with the physical line it is on);
//   - ANSI colour codes removed;
//   - prefixes peeled and recorded: Markdown quotes ("> "), Slurm task labels ("3: " from
//     srun --label), torchrun tags ("[default7]:", "[rank3]:"), Ray actor tags ("(TrainActor
//     pid=4242, ip=10.0.0.1)", "(raylet)"), timestamps ("[2025-10-24 09:52:15]", a bare
//     "2025-10-24 09:52:15,123", NeMo's "[NeMo I 2025-01-02 03:04:05 file:12]"), Python logging
//     fields ("INFO:root:", " - name - LEVEL - ", " | LEVEL | name | "), "[INFO]" and "[Rank N]:";
//   - Ray's "[repeated 7x across cluster]" suffix removed and kept as a count;
//   - records that several processes wrote onto one line split apart: a second "terminate called
//     after throwing", "Traceback (most recent call last):", a torchrun/rank tag or a Ray actor
//     tag ("… (RolloutManager pid=17) …", as pasted logs join lines) glued after another record,
//     or a logger's timestamp right after a progress bar's closing "]", starts a record of its own.
//
// Each record keeps the rank (or process) that printed it where the prefixes say so.
#ifndef ATTUNE_SUPPORT_LOG_LINES_H_
#define ATTUNE_SUPPORT_LOG_LINES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune::support {

struct LogLine {
  int number = 0;          // 1-based physical line (LF-separated), as an editor shows it
  std::string raw;         // the record as written (ANSI removed, trailing spaces trimmed)
  std::string text;        // prefixes removed, trimmed
  std::string source;      // the process prefixes removed ("3:", "[default7]:", "(A pid=1)"), "" if none
  std::optional<int> rank; // from "N:" (srun), "[rankN]:", "[Rank N]:" or "[defaultN]:" (local rank)
  std::string actor;       // Ray actor (or process) name from "(Name pid=…)", "" when none
  int repeat = 1;          // Ray's "[repeated Nx across cluster]" count (1 when not repeated)
  std::optional<double> timestamp_s;  // seconds since 1970 of a leading timestamp, when present

  // "rank 3", "TrainActor pid=4242", "[default7]", or "" when the line names no process.
  std::string Process() const;
};

std::vector<LogLine> SplitLogLines(std::string_view log);

// The most of one record a parser or a signature may give std::regex. libstdc++ matches
// recursively, about one stack frame per character a repetition consumes: a line of tens of
// kilobytes (a config dump, a printed tensor, a dict of every metric) would overflow the stack
// and take the engine with it. Records are not cut; regexes see their first kRegexWindow bytes,
// and parsers read longer records without regexes or not at all.
inline constexpr size_t kRegexWindow = 4096;

// Seconds since 1970 for "YYYY-MM-DD[ T]HH:MM:SS[.,frac]" at the start of `s` (std::nullopt if
// not).
std::optional<double> ParseTimestamp(std::string_view s);

std::string Trim(std::string_view s);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_LOG_LINES_H_
