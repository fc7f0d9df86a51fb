// EventTail: one full verification at open, then incremental reads through a RocksDB secondary.
#include "log/event_tail.h"

#include <rocksdb/db.h>

#include <cstdlib>
#include <filesystem>

#include "log/envelope.h"
#include "log/rocks.h"
#include "log/watermark.h"

namespace attune {

namespace fs = std::filesystem;

struct EventTail::Db {
  std::unique_ptr<rocksdb::DB> db;
};

Result<std::unique_ptr<EventTail>> EventTail::Open(const std::string& campaign_dir,
                                                   std::vector<EventRecord>* initial) {
  EventLogOptions lo;
  lo.read_only = true;
  lo.create_if_missing = false;
  std::unique_ptr<EventTail> tail(new EventTail());
  {
    ATTUNE_ASSIGN_OR_RETURN(auto log, EventLog::Open(campaign_dir, lo));
    ATTUNE_ASSIGN_OR_RETURN(*initial, log->ReadFrom(1));
    tail->campaign_id_ = log->campaign_id();
  }
  tail->campaign_dir_ = campaign_dir;
  tail->log_dir_ = EventLogDirOf(campaign_dir);
  if (!initial->empty()) {
    tail->last_seq_ = initial->back().seq;
    tail->last_hash_ = initial->back().hash;
  }
  ATTUNE_RETURN_IF_ERROR(tail->OpenSecondary());
  return tail;
}

EventTail::~EventTail() {
  db_.reset();
  if (!secondary_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(secondary_dir_, ec);  // scratch only; a leftover folder in /tmp is harmless
  }
}

Status EventTail::OpenSecondary() {
  db_.reset();
  if (secondary_dir_.empty()) {
    std::string pattern = (fs::temp_directory_path() / "attune-tail-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return Status::IoError("cannot create a scratch folder under " +
                             fs::temp_directory_path().string() + " to follow " + campaign_dir_);
    }
    secondary_dir_ = pattern;
  }
  rocksdb::Options options;
  options.max_open_files = -1;  // required by secondary instances
  options.paranoid_checks = true;
  options.info_log_level = rocksdb::InfoLogLevel::FATAL_LEVEL;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenAsSecondary(options, log_dir_, secondary_dir_, &raw);
  if (!s.ok()) return log::FromRocks(s, "RocksDB cannot follow " + log_dir_);
  db_ = std::make_unique<Db>();
  db_->db.reset(raw);
  return Status::Ok();
}

Result<std::vector<EventRecord>> EventTail::Poll() {
  std::vector<EventRecord> out;
  ATTUNE_ASSIGN_OR_RETURN(auto mark, log::ReadWatermark(log_dir_));
  if (!mark || mark->seq <= last_seq_) return out;
  rocksdb::Status caught = db_->db->TryCatchUpWithPrimary();
  if (!caught.ok()) {
    // The writer restarted (a resumed campaign writes a new MANIFEST) or compacted files away:
    // open the secondary again. What was read stays verified; new events are checked below.
    ATTUNE_RETURN_IF_ERROR(OpenSecondary());
  }
  ATTUNE_RETURN_IF_ERROR(ReadNew(&out));
  return out;
}

Status EventTail::ReadNew(std::vector<EventRecord>* out) {
  std::string upper = log::EventKeyUpperBound(campaign_id_);
  rocksdb::Slice upper_slice(upper);
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(log::ScanOptions(&upper_slice)));
  const std::string where = "campaign directory " + campaign_dir_ + ": event ";
  for (it->Seek(log::EventKey(campaign_id_, last_seq_ + 1)); it->Valid(); it->Next()) {
    const uint64_t seq = log::SeqFromKey(it->key().ToStringView(), campaign_id_);
    if (seq != last_seq_ + 1) {
      return Status::Corruption(where + std::to_string(last_seq_ + 1) + " is missing (found " +
                                std::to_string(seq) + " next); run `attune verify` on it");
    }
    auto links = log::CheckEnvelope(it->value().ToStringView());
    if (!links.ok())
      return Status::Corruption(where + std::to_string(seq) + ": " + links.status().message());
    if (links->seq != seq || links->prev != last_hash_) {
      return Status::Corruption(
          where + std::to_string(seq) +
          " does not chain onto the event before it; run `attune verify` on it");
    }
    ATTUNE_ASSIGN_OR_RETURN(EventRecord record, log::DecodeEnvelope(it->value().ToStringView()));
    last_seq_ = seq;
    last_hash_ = record.hash;
    out->push_back(std::move(record));
  }
  return log::FromRocks(it->status(), "reading new events of " + log_dir_);
}

}  // namespace attune
