// Copyright attune authors.
//
// The acknowledged watermark: DIR/ACKED holds the seq and hash of the last event that Append()
// reported durable. It is independent of RocksDB, so a log that RocksDB recovered to an earlier
// point (a damaged WAL tail is dropped silently by some recovery modes) is noticed on open.
//
// File layout (docs/events.md): two 512-byte slots, written alternately in place with pwrite +
// fdatasync. A slot is one text line "attune-acked 1 <seq> <hash|-> <check>\n" padded with
// '\0', where <check> is the first 16 hex digits of SHA-256 of the text before " <check>".
// A torn write damages only the slot being written; the reader takes the valid slot with the
// highest seq. The file is created atomically (temp file, fsync, rename, fsync of the directory).
//
// Not thread-safe.
#ifndef ATTUNE_ENGINE_LOG_WATERMARK_H_
#define ATTUNE_ENGINE_LOG_WATERMARK_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "attune/status.h"

namespace attune::log {

inline constexpr char kWatermarkFile[] = "ACKED";

struct Watermark {
  uint64_t seq = 0;
  std::string hash;  // of event `seq`; "" when seq is 0
};

// Reads DIR/ACKED. std::nullopt when the file does not exist; kCorruption when it exists but
// neither slot is valid.
Result<std::optional<Watermark>> ReadWatermark(const std::string& dir);

class WatermarkWriter {
 public:
  // Creates DIR/ACKED holding seq 0 (fails if it exists).
  static Result<std::unique_ptr<WatermarkWriter>> Create(const std::string& dir);
  // Opens an existing DIR/ACKED for updates; `current` is what ReadWatermark returned.
  static Result<std::unique_ptr<WatermarkWriter>> OpenExisting(const std::string& dir,
                                                               const Watermark& current);
  ~WatermarkWriter();

  // Writes the next slot; with `sync`, fdatasyncs it before returning.
  Status Update(const Watermark& mark, bool sync);
  // fdatasyncs the file if an update has not been synced yet.
  Status Sync();

  // Background mode: after this, SyncInBackground() hands the fdatasync to a thread that starts
  // it at once, so the caller's next write (its next WAL sync) overlaps it.
  void StartBackgroundSync();
  // Wakes the background thread; returns the error of an earlier background sync, if any.
  Status SyncInBackground();

 private:
  WatermarkWriter(int fd, std::string path, uint64_t writes);
  void BackgroundLoop();
  int fd_;
  std::string path_;
  uint64_t writes_;  // selects the slot: writes_ % 2
  bool dirty_ = false;
  // Background mode only.
  std::thread syncer_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool pending_ = false;  // guarded by mu_
  bool stop_ = false;     // guarded by mu_
  Status background_error_;  // guarded by mu_
};

}  // namespace attune::log

#endif  // ATTUNE_ENGINE_LOG_WATERMARK_H_
