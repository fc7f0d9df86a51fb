// Copyright attune authors.
#include "data/jsonl.h"

#include <cerrno>
#include <cstring>

namespace attune::data {
namespace {

constexpr std::string_view kKindNames[] = {"invalid_utf8", "invalid_json", "missing_field",
                                           "bad_messages", "too_long"};

}  // namespace

std::string_view BadRowKindName(BadRowKind kind) { return kKindNames[static_cast<size_t>(kind)]; }

std::optional<BadRowKind> BadRowKindFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kKindNames); ++i) {
    if (kKindNames[i] == name) return static_cast<BadRowKind>(i);
  }
  return std::nullopt;
}

void BadRowLog::Add(BadRow row) {
  ++total_;
  ++by_kind_[static_cast<size_t>(row.kind)];
  if (kept_.size() < keep_) kept_.push_back(std::move(row));
}

nlohmann::json BadRowLog::ToJson() const {
  nlohmann::json by_kind = nlohmann::json::object();
  for (size_t i = 0; i < std::size(kKindNames); ++i) {
    if (by_kind_[i] > 0) by_kind[std::string(kKindNames[i])] = by_kind_[i];
  }
  nlohmann::json first = nlohmann::json::array();
  for (const BadRow& r : kept_) {
    first.push_back({{"line", r.line}, {"kind", BadRowKindName(r.kind)}, {"message", r.message}});
  }
  return {{"count", total_}, {"by_kind", by_kind}, {"first", first}};
}

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path,
                                                     size_t max_line_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::NotFound(path + ": cannot open: " + std::strerror(errno));
  uint64_t size = 0;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    long at = std::ftell(f);
    size = at > 0 ? static_cast<uint64_t>(at) : 0;
    std::fseek(f, 0, SEEK_SET);
  }
  return std::unique_ptr<LineReader>(new LineReader(f, size, max_line_bytes));
}

LineReader::~LineReader() { std::fclose(file_); }

bool LineReader::Fill() {
  if (eof_) return false;
  size_t n = std::fread(block_.data(), 1, block_.size(), file_);
  if (n == 0) {
    if (std::ferror(file_)) error_ = Status::IoError(std::string("read failed: ") + std::strerror(errno));
    eof_ = true;
    return false;
  }
  begin_ = 0;
  end_ = n;
  return true;
}

bool LineReader::Next(std::string_view* line, uint64_t* number, bool* too_long) {
  long_line_.clear();
  *too_long = false;
  bool any = false;  // a byte of this line was seen
  for (;;) {
    if (begin_ == end_ && !Fill()) break;
    any = true;
    const char* start = block_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    size_t take = nl ? static_cast<const char*>(nl) - start : end_ - begin_;
    consumed_ += take + (nl ? 1 : 0);
    if (nl && long_line_.empty() && !*too_long) {
      // The common case: the whole line is inside the block, no copy.
      begin_ += take + 1;
      *line = std::string_view(start, take);
      *number = ++line_;
      return true;
    }
    if (!*too_long && long_line_.size() + take > max_line_) {
      *too_long = true;
      long_line_.clear();
      long_line_.shrink_to_fit();  // because the point of the limit is bounded memory
    }
    if (!*too_long) long_line_.append(start, take);
    begin_ += take + (nl ? 1 : 0);
    if (nl) break;
  }
  if (!any && long_line_.empty() && !*too_long) return false;
  *line = std::string_view(long_line_);
  *number = ++line_;
  return true;
}

}  // namespace attune::data
