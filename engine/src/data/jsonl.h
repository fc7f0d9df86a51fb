// Copyright attune authors.
//
// Streaming JSONL: a line reader with bounded memory (a fixed block buffer plus the longest line
// allowed), and the log of bad rows (counted by kind, reported with line numbers, never dropped
// silently).
#ifndef ATTUNE_ENGINE_DATA_JSONL_H_
#define ATTUNE_ENGINE_DATA_JSONL_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune::data {

enum class BadRowKind {
  kInvalidUtf8,     // the line is not UTF-8
  kInvalidJson,     // not one JSON value, or not an object
  kMissingField,    // the text field is absent or not a string
  kBadMessages,     // "messages" absent, or a message without a string role and content
  kTooLong,         // longer than the reader's limit; its bytes were skipped
};
std::string_view BadRowKindName(BadRowKind kind);
std::optional<BadRowKind> BadRowKindFromName(std::string_view name);

struct BadRow {
  uint64_t line = 0;
  BadRowKind kind = BadRowKind::kInvalidJson;
  std::string message;  // what was wrong, with the column when known
};

// Counts every bad row by kind; keeps the first `keep` for the report.
class BadRowLog {
 public:
  explicit BadRowLog(size_t keep = 1000) : keep_(keep) {}
  void Add(BadRow row);
  uint64_t Count() const { return total_; }
  uint64_t Count(BadRowKind kind) const { return by_kind_[static_cast<size_t>(kind)]; }
  const std::vector<BadRow>& Kept() const { return kept_; }
  // {"count": N, "by_kind": {...}, "first": [{"line", "kind", "message"}...]}
  nlohmann::json ToJson() const;

 private:
  size_t keep_;
  uint64_t total_ = 0;
  uint64_t by_kind_[5] = {};
  std::vector<BadRow> kept_;
};

// Reads a file line by line. Memory: a 1 MiB block plus the longest line (at most
// `max_line_bytes`); longer lines are skipped and reported as too long.
class LineReader {
 public:
  static Result<std::unique_ptr<LineReader>> Open(const std::string& path, size_t max_line_bytes);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line (without its '\n'), valid until the next call, and its 1-based number. False at
  // the end of the file. *too_long is true for a line over the limit (then *line is empty).
  bool Next(std::string_view* line, uint64_t* number, bool* too_long);
  // An IoError met while reading, if any (Next then returned false early).
  const Status& error() const { return error_; }

  uint64_t BytesRead() const { return consumed_; }
  uint64_t FileSize() const { return file_size_; }

 private:
  LineReader(std::FILE* f, uint64_t size, size_t max_line)
      : file_(f), file_size_(size), max_line_(max_line) {}
  bool Fill();

  std::FILE* file_;
  uint64_t file_size_;
  size_t max_line_;
  std::vector<char> block_ = std::vector<char>(1 << 20);
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::string long_line_;
  uint64_t line_ = 0;
  uint64_t consumed_ = 0;
  Status error_;
};

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_JSONL_H_
