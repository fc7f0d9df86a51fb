// Copyright attune authors.
//
// The RocksDB side of the event log: how a campaign's database is opened, how its errors are
// translated into attune Status values, and the streaming chain check used by Open and verify.
#ifndef ATTUNE_ENGINE_LOG_ROCKS_H_
#define ATTUNE_ENGINE_LOG_ROCKS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <rocksdb/db.h>

#include "attune/status.h"
#include "log/event_log.h"

namespace attune::log {

enum class OpenMode { kCreate, kWrite, kReadOnly };

// Opens the database in `dir`. Recovery mode is kTolerateCorruptedTailRecords (docs/events.md
// "Recovery mode"): a torn last record (a crash during an unacknowledged write) is dropped, any
// other damaged record refuses the open.
Result<std::unique_ptr<rocksdb::DB>> OpenRocks(const std::string& dir, OpenMode mode);

// Translates a RocksDB status. Corruption and missing files become kCorruption.
Status FromRocks(const rocksdb::Status& s, const std::string& context);

// Read options for a full scan of `campaign`: bounded, no cache pollution, large readahead.
// `upper_bound` must outlive the returned options' use.
rocksdb::ReadOptions ScanOptions(const rocksdb::Slice* upper_bound);

// Where the chain ended, and the hash found at the watermark's seq (for the watermark check).
struct ChainEnd {
  uint64_t last_seq = 0;
  std::string last_hash;
  std::string hash_at_watermark;
};

// Streams every event of `campaign` and checks: keys are seq 1, 2, 3... without gaps; each value
// is a canonical envelope whose hash matches its bytes; its seq matches its key; its prev is the
// previous event's hash. Holds one event at a time. `visit` (optional) sees each raw value.
Result<ChainEnd> VerifyChain(rocksdb::DB* db, const std::string& campaign,
                             uint64_t watermark_seq,
                             const std::function<Status(uint64_t, std::string_view)>& visit = {});

}  // namespace attune::log

#endif  // ATTUNE_ENGINE_LOG_ROCKS_H_
