// Copyright attune authors.
//
// EventTail: follows the event log of a campaign that another process may be writing, for
// viewers (`attune serve`). The whole chain is verified once, when the tail opens (exactly as
// EventLog::Open with read_only does); after that each Poll() reads only what was appended since
// the last one, checking every new event's own hash and its link to the one before. An idle log
// costs one read of the 1 KiB acknowledged-watermark file per poll.
//
// It reads through a RocksDB secondary instance, which sees the writer's new WAL records without
// reopening the database. It never writes to the campaign directory and never takes its lock: a
// campaign can be started, paused and resumed while it is followed.
//
// Not thread-safe: one thread owns a tail.
#ifndef ATTUNE_ENGINE_LOG_EVENT_TAIL_H_
#define ATTUNE_ENGINE_LOG_EVENT_TAIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attune/status.h"
#include "log/event_log.h"

namespace attune {

class EventTail {
 public:
  // Verifies the log of `campaign_dir` and hands every event so far to `initial` (oldest first).
  // Errors are those of EventLog::Open (kNotFound, kCorruption naming what is damaged).
  static Result<std::unique_ptr<EventTail>> Open(const std::string& campaign_dir,
                                                 std::vector<EventRecord>* initial);
  ~EventTail();
  EventTail(const EventTail&) = delete;
  EventTail& operator=(const EventTail&) = delete;

  // The events acknowledged since the last call (or since Open), oldest first; empty when none.
  // kCorruption when a new event does not chain onto the last one seen.
  Result<std::vector<EventRecord>> Poll();

  const std::string& campaign_id() const { return campaign_id_; }
  uint64_t last_seq() const { return last_seq_; }

 private:
  EventTail() = default;
  Status OpenSecondary();
  Status ReadNew(std::vector<EventRecord>* out);

  std::string campaign_dir_;
  std::string log_dir_;
  std::string secondary_dir_;  // RocksDB's scratch folder for the secondary (its info log)
  std::string campaign_id_;
  uint64_t last_seq_ = 0;
  std::string last_hash_;
  struct Db;
  std::unique_ptr<Db> db_;
};

}  // namespace attune

#endif  // ATTUNE_ENGINE_LOG_EVENT_TAIL_H_
