// Copyright attune authors.
//
// EventLog: the append-only, hash-chained event log of one campaign, stored in RocksDB.
// docs/events.md is the format spec (keys, envelope, chain, recovery).
//
// Contract:
//  - One log per campaign directory. Open() takes an exclusive lock on the directory; a second
//    opener (another process, or another EventLog in this one) gets kFailedPrecondition naming
//    the pid that holds it.
//  - Append() writes all given events in one WriteBatch with sync=true; when it returns OK they
//    are durable ("acknowledged"). Sequence numbers start at 1 and have no gaps.
//  - Open() verifies the whole chain and refuses (kCorruption, with what happened and what to do)
//    when an event is missing, altered, or the log ends before the last acknowledged event
//    (RocksDB may silently drop a damaged WAL tail: the engine keeps an independent, synced
//    acknowledged-watermark file to notice).
//  - Not thread-safe: one engine thread owns it.
#ifndef ATTUNE_ENGINE_LOG_EVENT_LOG_H_
#define ATTUNE_ENGINE_LOG_EVENT_LOG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/status.h"

namespace attune {

// An event as stored: the JSON envelope {seq, type, v, ts, data, prev, hash}.
struct EventRecord {
  uint64_t seq = 0;
  std::string type;   // "JobRequested"
  int v = 1;          // the version of `type`'s data schema
  int64_t ts_ms = 0;  // wall clock when appended (informative only; never used for decisions)
  nlohmann::json data;
  std::string prev;   // hash of the previous event ("" for seq 1)
  std::string hash;   // SHA-256 over the canonical envelope without `hash`
};

// An event to append.
struct NewEvent {
  std::string type;
  nlohmann::json data = nlohmann::json::object();
  int v = 1;
};

// ATTUNE_LOG_MIN_FREE_BYTES when it is a number, else 8 MiB.
uint64_t DefaultMinFreeBytes();

struct EventLogOptions {
  bool create_if_missing = true;
  std::string campaign_id;  // used when creating (default: the directory's name plus 8 random hex
                            // digits); an existing log keeps its own
  // Wall clock for `ts` (tests pass a fixed one). Defaults to the system clock.
  std::function<int64_t()> now_ms;
  // Called after each acknowledged append with the last seq (the crash suite's side channel).
  std::function<void(uint64_t)> on_ack;
  bool read_only = false;   // open for inspection (attune status/events/verify): no lock, no writes
  // How DIR/ACKED is fdatasync'ed (docs/events.md "The acknowledged watermark"). The watermark
  // is rewritten after every Append in every mode, so a process crash never loses it.
  //   0 (default): synced after every Append, before it returns: never behind an acknowledged
  //                event, even after a power loss.
  //   -1:          synced by a background thread that starts right after every Append, so it
  //                overlaps the caller's next append; after a power loss it may lag by the
  //                appends acknowledged during one in-flight sync.
  //   N > 0:       synced only when the last sync is at least N ms old, and on close; after a
  //                power loss it may lag by everything appended since the last sync.
  int watermark_sync_interval_ms = 0;
  // On close, a writer flushes RocksDB's memtable into a table file so that the next open reads
  // tables instead of replaying the write-ahead log (faster restarts). false leaves the recent
  // events only in the WAL, as a crash does (the corruption tests use it).
  bool flush_on_close = true;
  // Below this much free space on the directory's file system an append is refused with a clear
  // message before RocksDB sees it (docs/crash-safety.md "Full disk"). Defaults to the environment
  // variable ATTUNE_LOG_MIN_FREE_BYTES, else 8 MiB; 0 disables the check (the full-disk tests use
  // it to reach RocksDB's own out-of-space paths).
  uint64_t min_free_bytes = DefaultMinFreeBytes();
};

struct VerifyReport;

// The folder of a campaign directory that holds its event log (RocksDB's files, the ACKED
// watermark, the lock): `<campaign_dir>/log`, so that the user's files (REPORT.md, RESULTS.md, the
// jobs) are what the campaign directory shows; or the campaign directory itself for a campaign
// written before the log moved into that subfolder (RocksDB's CURRENT or the ACKED watermark at
// its top), which still opens where it is.
std::string EventLogDirOf(const std::string& campaign_dir);

class EventLog {
 public:
  static Result<std::unique_ptr<EventLog>> Open(const std::string& dir,
                                                const EventLogOptions& options);
  ~EventLog();

  const std::string& campaign_id() const;
  const std::string& dir() const;
  uint64_t last_seq() const;

  // Appends atomically and durably; returns the seq of the last event appended.
  // Precondition: !events.empty(); not read_only.
  Result<uint64_t> Append(const std::vector<NewEvent>& events);

  // Every event with seq >= from_seq, in order (already verified at Open).
  Result<std::vector<EventRecord>> ReadFrom(uint64_t from_seq = 1) const;

  // Streams the events with seq >= from_seq, in order, without holding them all in memory.
  // Stops at the first non-OK Status returned by `visit` and returns it.
  Status ForEach(uint64_t from_seq, const std::function<Status(const EventRecord&)>& visit) const;

 private:
  class Impl;
  explicit EventLog(std::unique_ptr<Impl> impl);
  static Result<std::unique_ptr<EventLog>> OpenImpl(const std::string& dir,
                                                    const EventLogOptions& options);
  friend Result<VerifyReport> VerifyEventLog(const std::string& dir);
  std::unique_ptr<Impl> impl_;
};

// `attune verify`: checks a campaign directory without taking the lock. `problems` is empty when
// the log is intact.
struct VerifyReport {
  std::string campaign_id;
  uint64_t events = 0;
  uint64_t acknowledged = 0;   // the watermark
  std::vector<std::string> problems;
};
Result<VerifyReport> VerifyEventLog(const std::string& dir);

nlohmann::json EventRecordToJson(const EventRecord& e);

}  // namespace attune

#endif  // ATTUNE_ENGINE_LOG_EVENT_LOG_H_
