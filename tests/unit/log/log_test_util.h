// Helpers for event-log tests: temporary campaign directories and file damage.
#ifndef ATTUNE_TESTS_UNIT_LOG_LOG_TEST_UTIL_H_
#define ATTUNE_TESTS_UNIT_LOG_LOG_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "log/event_log.h"

namespace attune::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Options with a fixed clock (ts = 1700000000000 + seq of the call).
EventLogOptions FixedClockOptions(const std::string& campaign = "c1");

// Opens (creating) a log in `dir` and appends `n` events of type "Tick" with {"i": k}, one per
// Append, then closes it. REQUIREs success.
void WriteTicks(const std::string& dir, int n, const EventLogOptions& options = FixedClockOptions());

// Files in `dir` whose names end with `suffix` (".log", ".sst", ...), sorted.
std::vector<std::string> FilesEndingWith(const std::string& dir, const std::string& suffix);
// Files in `dir` whose names start with `prefix` ("MANIFEST-"), sorted.
std::vector<std::string> FilesStartingWith(const std::string& dir, const std::string& prefix);

// XORs the byte at `offset` (negative: from the end) with 0x5a.
void FlipByte(const std::string& file, int64_t offset);
void TruncateBy(const std::string& file, uint64_t bytes);
uint64_t FileSize(const std::string& file);

// Flushes the memtable of the RocksDB in `dir` into an SST (opened raw, without attune).
void FlushRaw(const std::string& dir);
// Overwrites one key of the RocksDB in `dir` with `value` (opened raw, without attune).
void PutRaw(const std::string& dir, const std::string& key, const std::string& value);
std::string GetRaw(const std::string& dir, const std::string& key);
// The stored values of events 1..last, read raw; then flushes the memtable into an SST.
std::vector<std::string> ExportAndFlushRaw(const std::string& dir, const std::string& campaign,
                                           uint64_t last);
void DeleteRaw(const std::string& dir, const std::vector<std::string>& keys);

}  // namespace attune::testing

#endif  // ATTUNE_TESTS_UNIT_LOG_LOG_TEST_UTIL_H_
