// The event log: Open (lock, recover, verify), Append (one synced batch, then the watermark),
// reads. The byte format lives in envelope.cc, RocksDB specifics in rocks.cc.
#include "log/event_log.h"

#include "base/crash_point.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <random>

#include "log/dir_lock.h"
#include "log/envelope.h"
#include "log/resource_advice.h"
#include "log/rocks.h"
#include "log/watermark.h"

namespace attune {

namespace fs = std::filesystem;
using log::OpenMode;

namespace {

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The directory's name, made valid, plus 8 random hex digits: two campaigns in folders of the same
// name (on one cluster, or on two machines sharing a scheduler) never share job names. Recorded
// once, at creation; nothing seeded depends on it.
std::string DefaultCampaignId(const std::string& dir) {
  std::string base = fs::path(dir).lexically_normal().filename().string();
  if (base.empty()) base = fs::path(dir).lexically_normal().parent_path().filename().string();
  std::string id;
  for (char c : base) id.push_back(log::IsValidCampaignId(std::string(1, c)) ? c : '-');
  if (id.empty()) id = "campaign";
  id.resize(std::min<size_t>(id.size(), 119));
  std::random_device random;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%08x", static_cast<unsigned>(random()));
  return id + suffix;
}

std::string RestoreAdvice(const std::string& dir) {
  return " attune refuses to continue with a damaged or shortened log. Run `attune verify " +
         dir + "` for details; restore the directory from a backup, or start a new campaign in "
               "another --dir.";
}

// A directory this process may not read: say so, rather than "not a campaign directory".
Status CheckReadable(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    return ec && ec != std::errc::no_such_file_or_directory
               ? Status::IoError("cannot reach " + dir + ": " + ec.message() +
                                          "; check the permissions of its parent directories")
               : Status::NotFound(dir + " does not exist");
  }
  if (fs::is_directory(dir, ec) && ::access(dir.c_str(), R_OK | X_OK) != 0) {
    return Status::IoError("permission denied: cannot read " + dir +
                                    "; run as its owner (or a user who may read it), or fix its "
                                    "permissions");
  }
  return Status::Ok();
}

// Parses a decimal uint64; false on anything else.
bool ParseDecimal(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// What Open found in the directory before touching RocksDB.
struct DirState {
  bool has_db = false;                     // CURRENT exists
  std::optional<log::Watermark> watermark; // DIR/ACKED, when present
};

Result<DirState> InspectDir(const std::string& dir) {
  DirState state;
  std::error_code ec;
  state.has_db = fs::exists(fs::path(dir) / "CURRENT", ec);
  ATTUNE_ASSIGN_OR_RETURN(state.watermark, log::ReadWatermark(dir));
  if (state.has_db && !state.watermark) {
    return Status::Corruption(
        "campaign directory " + dir + ": the acknowledged-event watermark file " + dir +
        "/ACKED is missing, so attune cannot tell whether events were lost." + RestoreAdvice(dir));
  }
  if (!state.has_db && state.watermark && state.watermark->seq > 0) {
    return Status::Corruption("campaign directory " + dir + ": RocksDB's CURRENT file is missing "
                              "but " + std::to_string(state.watermark->seq) +
                              " events were acknowledged." + RestoreAdvice(dir));
  }
  return state;
}

}  // namespace

class EventLog::Impl {
 public:
  std::string campaign_dir;  // what the user named
  std::string dir;           // where the log's files are: EventLogDirOf(campaign_dir)
  std::string campaign;
  EventLogOptions options;
  std::unique_ptr<log::DirLock> lock;
  std::unique_ptr<rocksdb::DB> db;
  std::unique_ptr<log::WatermarkWriter> watermark;
  uint64_t last_seq = 0;
  std::string last_hash;
  int64_t last_watermark_sync_ms = 0;
  Status poisoned;  // after a failed write nothing more is appended (a retried fsync can lie)

  Status OpenDb(const DirState& state);
  Status LoadCampaignId(bool creating);
  Status VerifyAgainstWatermark(const DirState& state);
  Status WriteWatermark();
  Result<std::vector<EventRecord>> Stamp(const std::vector<NewEvent>& events,
                                         rocksdb::WriteBatch* batch) const;
};

Status EventLog::Impl::OpenDb(const DirState& state) {
  OpenMode mode = options.read_only ? OpenMode::kReadOnly
                  : state.has_db    ? OpenMode::kWrite
                                    : OpenMode::kCreate;
  auto opened = log::OpenRocks(dir, mode);
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kCorruption) {
      return Status::Corruption("campaign directory " + dir + ": " + opened.status().message() +
                                "." + RestoreAdvice(dir));
    }
    return opened.status();
  }
  db = std::move(opened).value();
  return Status::Ok();
}

Status EventLog::Impl::LoadCampaignId(bool creating) {
  std::string stored;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), log::kMetaCampaignKey, &stored);
  if (s.ok()) {
    campaign = stored;
    return Status::Ok();
  }
  if (!s.IsNotFound()) return log::FromRocks(s, "reading the campaign id in " + dir);
  campaign = options.campaign_id.empty() ? DefaultCampaignId(campaign_dir) : options.campaign_id;
  if (!log::IsValidCampaignId(campaign)) {
    return Status::InvalidArgument("campaign id '" + campaign +
                                   "' may only contain letters, digits, '.', '_' and '-'");
  }
  if (!creating) return Status::Ok();  // read-only view of a log that never got its id
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return log::FromRocks(db->Put(wo, log::kMetaCampaignKey, campaign), "writing the campaign id");
}

Status EventLog::Impl::VerifyAgainstWatermark(const DirState& state) {
  uint64_t acked = state.watermark ? state.watermark->seq : 0;
  auto chain = log::VerifyChain(db.get(), campaign, acked);
  if (!chain.ok()) {
    return Status::Corruption("campaign directory " + dir + ": " + chain.status().message() +
                              "." + RestoreAdvice(dir));
  }
  last_seq = chain->last_seq;
  last_hash = chain->last_hash;
  if (acked > last_seq) {
    return Status::Corruption(
        "campaign directory " + dir + ": the log ends at event " + std::to_string(last_seq) +
        " but event " + std::to_string(acked) + " was acknowledged (" + dir +
        "/ACKED): RocksDB recovered the log to an earlier point and dropped " +
        std::to_string(acked - last_seq) + " acknowledged event(s), usually because its "
        "write-ahead log was damaged." + RestoreAdvice(dir));
  }
  if (acked > 0 && chain->hash_at_watermark != state.watermark->hash) {
    return Status::Corruption("campaign directory " + dir + ": event " + std::to_string(acked) +
                              " does not have the hash recorded when it was acknowledged "
                              "(the event was replaced)." + RestoreAdvice(dir));
  }
  std::string meta;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), log::kMetaLastSeqKey, &meta);
  if (!s.ok() && !s.IsNotFound()) return log::FromRocks(s, "reading the last seq");
  uint64_t meta_seq = 0;
  if (s.ok() && !ParseDecimal(meta, &meta_seq)) {
    return Status::Corruption("campaign directory " + dir + ": its last-seq metadata '" + meta +
                              "' is not a number." + RestoreAdvice(dir));
  }
  if (meta_seq != last_seq) {
    return Status::Corruption("campaign directory " + dir + ": the log holds events 1.." +
                              std::to_string(last_seq) + " but its metadata says " +
                              std::to_string(meta_seq) + "." + RestoreAdvice(dir));
  }
  return Status::Ok();
}

Result<std::unique_ptr<EventLog>> EventLog::Open(const std::string& dir,
                                                 const EventLogOptions& options) {
  auto opened = OpenImpl(dir, options);
  if (!opened.ok()) return log::WithResourceAdvice(opened.status(), dir);
  return opened;
}

namespace {

Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open " + dir + " to sync it: " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Status::IoError("cannot sync " + dir + ": " + std::strerror(err));
  return Status::Ok();
}

// True for the files a log writes into its folder: RocksDB's (CURRENT, IDENTITY, LOCK, LOG*,
// MANIFEST-*, OPTIONS-*, *.sst, 000123.log) and attune's (ACKED, LOCK-attune). Any of them at the
// top of a campaign directory makes it one of the earlier layout, damaged or not.
bool IsLogFile(const std::string& name) {
  static const char* const kNames[] = {"CURRENT", "IDENTITY", "LOCK", "ACKED", "LOCK-attune"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  if (name.rfind("MANIFEST-", 0) == 0 || name.rfind("OPTIONS-", 0) == 0) return true;
  if (name == "LOG" || name.rfind("LOG.old.", 0) == 0) return true;  // RocksDB's info log
  auto ends_with = [&](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".sst")) return true;
  if (ends_with(".log")) {
    std::string stem = name.substr(0, name.size() - 4);
    return !stem.empty() && stem.find_first_not_of("0123456789") == std::string::npos;
  }
  return false;
}

}  // namespace

std::string EventLogDirOf(const std::string& campaign_dir) {
  std::error_code ec;
  for (fs::directory_iterator it(campaign_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsLogFile(it->path().filename().string())) return campaign_dir;
  }
  return (fs::path(campaign_dir) / "log").string();
}

Result<std::unique_ptr<EventLog>> EventLog::OpenImpl(const std::string& campaign_dir,
                                                     const EventLogOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->campaign_dir = campaign_dir;
  impl->options = options;
  if (!impl->options.now_ms) impl->options.now_ms = SystemNowMs;
  std::error_code ec;
  if (!fs::is_directory(campaign_dir, ec)) {
    if (options.read_only || !options.create_if_missing) {
      return Status::NotFound("campaign directory " + campaign_dir + " does not exist");
    }
    fs::create_directories(campaign_dir, ec);
    if (ec) {
      return Status::IoError("cannot create campaign directory " + campaign_dir + ": " +
                             ec.message());
    }
  }
  ATTUNE_RETURN_IF_ERROR(CheckReadable(campaign_dir));
  const std::string dir = EventLogDirOf(campaign_dir);
  impl->dir = dir;
  if (!fs::is_directory(dir, ec)) {
    if (options.read_only || !options.create_if_missing) {
      return Status::NotFound(campaign_dir +
                              " is not an attune campaign directory (no event log in it)");
    }
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("cannot create the event log folder " + dir + ": " + ec.message());
    // The folder's entry must survive a power loss before anything in it is acknowledged.
    ATTUNE_RETURN_IF_ERROR(SyncDirectory(campaign_dir));
  }
  ATTUNE_RETURN_IF_ERROR(CheckReadable(dir));
  if (!options.read_only) {
    ATTUNE_ASSIGN_OR_RETURN(impl->lock, log::DirLock::Acquire(dir));
  }
  ATTUNE_ASSIGN_OR_RETURN(DirState state, InspectDir(dir));
  if (!state.has_db && (options.read_only || !options.create_if_missing)) {
    return Status::NotFound(dir + " is not an attune campaign directory (no event log in it)");
  }
  if (!options.read_only && !state.watermark) {
    // The watermark exists before the database, so a database without one is never legitimate.
    ATTUNE_ASSIGN_OR_RETURN(impl->watermark, log::WatermarkWriter::Create(dir));
    state.watermark = log::Watermark{};
  }
  ATTUNE_RETURN_IF_ERROR(impl->OpenDb(state));
  ATTUNE_RETURN_IF_ERROR(impl->LoadCampaignId(!options.read_only));
  ATTUNE_RETURN_IF_ERROR(impl->VerifyAgainstWatermark(state));
  if (!options.read_only && !impl->watermark) {
    ATTUNE_ASSIGN_OR_RETURN(impl->watermark,
                            log::WatermarkWriter::OpenExisting(dir, *state.watermark));
  }
  if (impl->watermark && options.watermark_sync_interval_ms < 0) {
    impl->watermark->StartBackgroundSync();
  }
  return std::unique_ptr<EventLog>(new EventLog(std::move(impl)));
}

EventLog::EventLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EventLog::~EventLog() {
  if (impl_->db && !impl_->options.read_only && impl_->options.flush_on_close &&
      impl_->poisoned.ok()) {
    // Best effort: every event is already durable in the WAL; a failed flush only means the
    // next open replays it.
    (void)impl_->db->Flush(rocksdb::FlushOptions());
  }
  if (impl_->db && !impl_->poisoned.ok()) {
    // After a failed write (disk full, I/O error) closing the DB makes RocksDB sync its WAL
    // writer again, which Debian's build answers with an assertion failure (SIGABRT) instead of
    // an error. Everything acknowledged is durable and the lock is released by the kernel at
    // exit, so the handle is deliberately leaked: the process is about to stop anyway.
    (void)impl_->db.release();
  }
}

const std::string& EventLog::campaign_id() const { return impl_->campaign; }
const std::string& EventLog::dir() const { return impl_->campaign_dir; }
uint64_t EventLog::last_seq() const { return impl_->last_seq; }

Result<std::vector<EventRecord>> EventLog::Impl::Stamp(const std::vector<NewEvent>& events,
                                                       rocksdb::WriteBatch* batch) const {
  std::vector<EventRecord> records;
  std::string prev = last_hash;
  int64_t now = options.now_ms();
  for (const NewEvent& e : events) {
    if (!log::IsValidEventType(e.type)) {
      return Status::InvalidArgument("event type '" + e.type +
                                     "' may only contain letters, digits and '_'");
    }
    EventRecord r{last_seq + records.size() + 1, e.type, e.v, now, e.data, prev, ""};
    ATTUNE_ASSIGN_OR_RETURN(std::string value, log::EncodeEnvelope(&r));
    batch->Put(log::EventKey(campaign, r.seq), value);
    prev = r.hash;
    records.push_back(std::move(r));
  }
  batch->Put(log::kMetaLastSeqKey, std::to_string(records.back().seq));
  return records;
}

Status EventLog::Impl::WriteWatermark() {
  int interval = options.watermark_sync_interval_ms;
  if (interval < 0) {
    ATTUNE_RETURN_IF_ERROR(watermark->Update(log::Watermark{last_seq, last_hash}, false));
    return watermark->SyncInBackground();
  }
  int64_t now = SystemNowMs();
  bool sync = interval <= 0 || now - last_watermark_sync_ms >= interval;
  ATTUNE_RETURN_IF_ERROR(watermark->Update(log::Watermark{last_seq, last_hash}, sync));
  if (sync) last_watermark_sync_ms = now;
  return Status::Ok();
}

namespace {

// The guard exists because Debian's RocksDB is built with assertions: a write that fails for lack
// of space and is then retried on the same file ends in an assertion (SIGABRT) inside RocksDB
// instead of an error. Refusing first keeps the common case a clear message.
constexpr uint64_t kDefaultMinFreeBytes = 8ull << 20;

Status CheckFreeSpace(const std::string& dir, uint64_t min_free_bytes) {
  if (min_free_bytes == 0) return Status::Ok();
  struct statvfs fs{};
  if (statvfs(dir.c_str(), &fs) != 0) return Status::Ok();  // unknown: let the write decide
  uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= min_free_bytes) return Status::Ok();
  return Status::IoError("the disk holding " + dir + " is full (" + std::to_string(free_bytes >> 10) +
                         " KiB free; attune keeps at least " + std::to_string(min_free_bytes >> 10) +
                         " KiB free to append safely). Every acknowledged event is intact: free "
                         "space, then run the same `attune run` again to resume");
}

}  // namespace

uint64_t DefaultMinFreeBytes() {
  const char* text = std::getenv("ATTUNE_LOG_MIN_FREE_BYTES");
  if (text == nullptr || *text == '\0') return kDefaultMinFreeBytes;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  return *end == '\0' ? value : kDefaultMinFreeBytes;
}

Result<uint64_t> EventLog::Append(const std::vector<NewEvent>& events) {
  Impl& m = *impl_;
  if (m.options.read_only) return Status::FailedPrecondition("the log was opened read-only");
  if (!m.poisoned.ok()) return m.poisoned;
  if (Status space = CheckFreeSpace(m.dir, m.options.min_free_bytes); !space.ok()) return space;
  if (events.empty()) return Status::InvalidArgument("Append needs at least one event");
  rocksdb::WriteBatch batch;
  ATTUNE_ASSIGN_OR_RETURN(std::vector<EventRecord> records, m.Stamp(events, &batch));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  CrashPoint("log.append.before");
  Status written = log::FromRocks(m.db->Write(wo, &batch), "appending to " + m.dir);
  CrashPoint("log.append.after");
  if (!written.ok()) {
    m.poisoned = log::WithResourceAdvice(
        Status::IoError(written.message() + "; the log is closed for writing"), m.dir,
        "restart attune to recover from what is durable");
    return m.poisoned;
  }
  m.last_seq = records.back().seq;
  m.last_hash = records.back().hash;
  Status marked = m.WriteWatermark();
  if (!marked.ok()) {
    m.poisoned = log::WithResourceAdvice(
        Status::IoError("events up to " + std::to_string(m.last_seq) +
                        " are durable but the watermark could not be written: " +
                        marked.message() + "; the log is closed for writing"),
        m.dir, "restart attune to recover from what is durable");
    return m.poisoned;
  }
  if (m.options.on_ack) m.options.on_ack(m.last_seq);
  return m.last_seq;
}

Status EventLog::ForEach(uint64_t from_seq,
                         const std::function<Status(const EventRecord&)>& visit) const {
  std::string upper = log::EventKeyUpperBound(impl_->campaign);
  rocksdb::Slice upper_slice(upper);
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(log::ScanOptions(&upper_slice)));
  for (it->Seek(log::EventKey(impl_->campaign, std::max<uint64_t>(from_seq, 1))); it->Valid();
       it->Next()) {
    auto record = log::DecodeEnvelope(it->value().ToStringView());
    if (!record.ok()) return record.status().WithContext("campaign directory " + impl_->dir);
    ATTUNE_RETURN_IF_ERROR(visit(*record));
  }
  return log::FromRocks(it->status(), "reading events of " + impl_->dir);
}

Result<std::vector<EventRecord>> EventLog::ReadFrom(uint64_t from_seq) const {
  std::vector<EventRecord> out;
  ATTUNE_RETURN_IF_ERROR(ForEach(from_seq, [&out](const EventRecord& r) {
    out.push_back(r);
    return Status::Ok();
  }));
  return out;
}

Result<VerifyReport> VerifyEventLog(const std::string& campaign_dir) {
  ATTUNE_RETURN_IF_ERROR(CheckReadable(campaign_dir));
  const std::string dir = EventLogDirOf(campaign_dir);
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / "CURRENT", ec) && !fs::exists(fs::path(dir) / "ACKED", ec)) {
    return Status::NotFound(campaign_dir + " is not an attune campaign directory (no event log in it)");
  }
  ATTUNE_RETURN_IF_ERROR(CheckReadable(dir));
  VerifyReport report;
  auto mark = log::ReadWatermark(dir);
  if (!mark.ok()) report.problems.push_back(mark.status().message());
  if (mark.ok() && *mark) report.acknowledged = (*mark)->seq;
  if (mark.ok() && *mark && (*mark)->seq == 0 && !fs::exists(fs::path(dir) / "CURRENT", ec)) {
    return Status::NotFound(campaign_dir + " has no event log yet: its first `attune run` stopped before "
                            "the event log was created (nothing was acknowledged, nothing is "
                            "lost); run it again to start the campaign");
  }
  EventLogOptions options;
  options.read_only = true;
  auto opened = EventLog::Open(campaign_dir, options);
  if (!opened.ok()) {
    report.problems.push_back(opened.status().message());
    return report;
  }
  report.events = (*opened)->last_seq();
  report.campaign_id = (*opened)->campaign_id();
  // Open read every event; this also reads every block of every table file, including the
  // ones that hold no events, so damage anywhere in the directory is reported.
  rocksdb::Status checksums = (*opened)->impl_->db->VerifyChecksum();
  if (!checksums.ok()) report.problems.push_back("RocksDB checksum check: " + checksums.ToString());
  return report;
}

nlohmann::json EventRecordToJson(const EventRecord& e) {
  return {{"seq", e.seq}, {"type", e.type}, {"v", e.v},       {"ts", e.ts_ms},
          {"data", e.data}, {"prev", e.prev}, {"hash", e.hash}};
}

}  // namespace attune
