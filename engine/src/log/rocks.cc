#include "log/rocks.h"

#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <string_view>

#include "log/envelope.h"

namespace attune::log {
namespace {

// RocksDB's own diagnostics: only fatal ones, on standard error. Its default logger writes a LOG
// file into the campaign directory, and once a write to that file has failed (a full disk) the
// next message aborts the process inside Debian's assertion-enabled RocksDB; a logger that owns no
// file cannot fail that way. Errors reach the user as the Status of the call that failed, so
// RocksDB's background chatter about them (flush retries, space recovery) is not repeated.
class StderrLogger final : public rocksdb::Logger {
 public:
  StderrLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::FATAL_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    std::vsnprintf(line, sizeof line, format, ap);
    std::string_view text(line);
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    std::fprintf(stderr, "attune: rocksdb: %.*s\n", static_cast<int>(text.size()), text.data());
  }
};

rocksdb::Options MakeOptions(OpenMode mode) {
  rocksdb::Options options;
  options.create_if_missing = mode == OpenMode::kCreate;
  options.error_if_exists = mode == OpenMode::kCreate;
  options.paranoid_checks = true;
  // kPointInTimeRecovery (the default) silently drops everything after a damaged WAL record;
  // this mode drops only a torn tail and refuses mid-log damage (docs/events.md).
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  // Lets RocksDB notice a missing or truncated (synced) WAL on its own.
  options.track_and_verify_wals_in_manifest = true;
  // Opening every table file at open makes a deleted SST an open error, not a late read error.
  options.max_open_files = -1;
  options.info_log = std::make_shared<StderrLogger>();
  options.info_log_level = rocksdb::InfoLogLevel::FATAL_LEVEL;
  return options;
}

}  // namespace

Status FromRocks(const rocksdb::Status& s, const std::string& context) {
  if (s.ok()) return Status::Ok();
  std::string text = context + ": " + s.ToString();
  bool missing = s.IsPathNotFound() || s.ToString().find("No such file") != std::string::npos;
  if (s.IsCorruption() || missing) return Status::Corruption(text);
  return Status::IoError(text);
}

Result<std::unique_ptr<rocksdb::DB>> OpenRocks(const std::string& dir, OpenMode mode) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = mode == OpenMode::kReadOnly
                          ? rocksdb::DB::OpenForReadOnly(MakeOptions(mode), dir, &raw)
                          : rocksdb::DB::Open(MakeOptions(mode), dir, &raw);
  if (!s.ok()) return FromRocks(s, "RocksDB cannot open " + dir);
  return std::unique_ptr<rocksdb::DB>(raw);
}

rocksdb::ReadOptions ScanOptions(const rocksdb::Slice* upper_bound) {
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = upper_bound;
  ro.fill_cache = false;  // a replay reads everything once; caching it would only cost memory
  ro.readahead_size = 4 << 20;
  ro.verify_checksums = true;
  ro.async_io = false;
  return ro;
}

namespace {

Status CheckOne(uint64_t expected, std::string_view key_campaign, const rocksdb::Iterator& it,
                const std::string& prev_hash, EnvelopeLinks* links) {
  uint64_t key_seq = SeqFromKey(it.key().ToStringView(), key_campaign);
  std::string where = "event " + std::to_string(expected);
  if (key_seq != expected) {
    return Status::Corruption("expected event " + std::to_string(expected) + " but found " +
                              (key_seq == 0 ? std::string("a malformed key")
                                            : "event " + std::to_string(key_seq)) +
                              ": events are missing");
  }
  auto checked = CheckEnvelope(it.value().ToStringView());
  if (!checked.ok()) return checked.status().WithContext(where);
  *links = *checked;
  if (links->seq != expected) {
    return Status::Corruption(where + ": its envelope says seq " + std::to_string(links->seq));
  }
  if (links->prev != prev_hash) {
    return Status::Corruption(where + ": its 'prev' does not match the hash of event " +
                              std::to_string(expected - 1) +
                              " (an earlier event was altered or replaced)");
  }
  return Status::Ok();
}

}  // namespace

Result<ChainEnd> VerifyChain(rocksdb::DB* db, const std::string& campaign,
                             uint64_t watermark_seq,
                             const std::function<Status(uint64_t, std::string_view)>& visit) {
  std::string upper = EventKeyUpperBound(campaign);
  rocksdb::Slice upper_slice(upper);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ScanOptions(&upper_slice)));
  ChainEnd end;
  for (it->Seek(EventKeyPrefix(campaign)); it->Valid(); it->Next()) {
    EnvelopeLinks links;
    ATTUNE_RETURN_IF_ERROR(CheckOne(end.last_seq + 1, campaign, *it, end.last_hash, &links));
    end.last_seq = links.seq;
    end.last_hash.assign(links.hash);
    if (end.last_seq == watermark_seq) end.hash_at_watermark = end.last_hash;
    if (visit) ATTUNE_RETURN_IF_ERROR(visit(end.last_seq, it->value().ToStringView()));
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), "reading event " + std::to_string(end.last_seq + 1));
  }
  return end;
}

}  // namespace attune::log
