// One test per corruption mode: each damaged directory is refused on open with kCorruption and a
// message that says what happened and what to do; none opens with fewer events.
#include <catch2/catch.hpp>
#include <filesystem>

#include "attune/hash.h"
#include "log/envelope.h"
#include "log/event_log.h"
#include "log_test_util.h"

namespace attune {
namespace {

namespace fs = std::filesystem;
using testing::FixedClockOptions;
using testing::TempDir;

constexpr int kEvents = 50;

// Opens for writing; returns the status (the log is closed again at once).
Status OpenStatus(const std::string& dir) {
  auto log = EventLog::Open(dir, FixedClockOptions());
  return log.status();
}

// Asserts that open refuses with kCorruption, the message contains `what`, and the standard
// advice; and that `attune verify` (VerifyEventLog) reports a problem too.
void RequireRefused(const std::string& dir, const std::string& what) {
  Status s = OpenStatus(dir);
  INFO(s.ToString());
  REQUIRE(s.code() == StatusCode::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains(what));
  CHECK_THAT(s.message(), Catch::Contains("attune verify"));
  auto report = VerifyEventLog(dir);
  REQUIRE(report.ok());
  CHECK_FALSE(report->problems.empty());
}

std::string OnlyFile(const std::vector<std::string>& files) {
  REQUIRE(files.size() == 1);
  return files.front();
}

// Re-encodes event `seq` with new data (a consistent envelope with a fresh hash).
std::string ForgedEvent(const std::string& dir, uint64_t seq, const std::string& prev) {
  EventRecord r{seq, "Tick", 1, 1, {{"i", 999}}, prev, ""};
  auto value = log::EncodeEnvelope(&r);
  REQUIRE(value.ok());
  return *value;
}

TEST_CASE("an intact log verifies with no problems", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  REQUIRE(OpenStatus(tmp.path()).ok());
  auto report = VerifyEventLog(tmp.path());
  REQUIRE(report.ok());
  CHECK(report->problems.empty());
  CHECK(report->events == kEvents);
  CHECK(report->acknowledged == kEvents);
}

TEST_CASE("a flipped byte in the middle of the WAL is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  std::string wal = OnlyFile(testing::FilesEndingWith(tmp.Sub("log"), ".log"));
  testing::FlipByte(wal, static_cast<int64_t>(testing::FileSize(wal) / 2));
  RequireRefused(tmp.path(), "campaign directory " + tmp.path());
}

TEST_CASE("a flipped byte in the last WAL record is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  std::string wal = OnlyFile(testing::FilesEndingWith(tmp.Sub("log"), ".log"));
  testing::FlipByte(wal, -30);
  RequireRefused(tmp.path(), "campaign directory " + tmp.path());
}

TEST_CASE("a truncated WAL (lost acknowledged tail) is refused against the watermark",
          "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  std::string wal = OnlyFile(testing::FilesEndingWith(tmp.Sub("log"), ".log"));
  testing::TruncateBy(wal, 100);
  RequireRefused(tmp.path(), "was acknowledged");
}

TEST_CASE("a deleted WAL file is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  fs::remove(OnlyFile(testing::FilesEndingWith(tmp.Sub("log"), ".log")));
  RequireRefused(tmp.path(), "campaign directory " + tmp.path());
}

TEST_CASE("a flipped byte in an SST data block is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  testing::FlushRaw(tmp.path());
  std::string sst = OnlyFile(testing::FilesEndingWith(tmp.Sub("log"), ".sst"));
  testing::FlipByte(sst, 200);
  RequireRefused(tmp.path(), "orrupt");
}

TEST_CASE("a deleted SST file is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  testing::FlushRaw(tmp.path());
  fs::remove(OnlyFile(testing::FilesEndingWith(tmp.Sub("log"), ".sst")));
  RequireRefused(tmp.path(), "campaign directory " + tmp.path());
}

TEST_CASE("a deleted MANIFEST is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  for (const auto& f : testing::FilesStartingWith(tmp.Sub("log"), "MANIFEST-")) fs::remove(f);
  RequireRefused(tmp.path(), "campaign directory " + tmp.path());
}

TEST_CASE("a deleted CURRENT file is refused, never recreated as an empty log",
          "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  fs::remove(tmp.Sub("log/CURRENT"));
  RequireRefused(tmp.path(), "CURRENT file is missing");
  CHECK_FALSE(fs::exists(tmp.Sub("log/CURRENT")));
}

TEST_CASE("a deleted watermark file is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  fs::remove(tmp.Sub("log/ACKED"));
  RequireRefused(tmp.path(), "ACKED is missing");
}

TEST_CASE("an event value changed in place is refused by its hash", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  std::string key = log::EventKey("c1", 10);
  std::string value = testing::GetRaw(tmp.path(), key);
  value.replace(value.find("\"i\":9"), 5, "\"i\":8");
  testing::PutRaw(tmp.path(), key, value);
  RequireRefused(tmp.path(), "event 10: its bytes do not match its hash");
}

TEST_CASE("an event rewritten with a fresh hash breaks the chain at the next event",
          "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  auto original = log::DecodeEnvelope(testing::GetRaw(tmp.path(), log::EventKey("c1", 10)));
  REQUIRE(original.ok());
  testing::PutRaw(tmp.path(), log::EventKey("c1", 10), ForgedEvent(tmp.path(), 10, original->prev));
  RequireRefused(tmp.path(), "event 11: its 'prev' does not match the hash of event 10");
}

TEST_CASE("the last event rewritten with a fresh hash is refused by the watermark",
          "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  auto original = log::DecodeEnvelope(testing::GetRaw(tmp.path(), log::EventKey("c1", kEvents)));
  REQUIRE(original.ok());
  testing::PutRaw(tmp.path(), log::EventKey("c1", kEvents),
                  ForgedEvent(tmp.path(), kEvents, original->prev));
  RequireRefused(tmp.path(), "does not have the hash recorded when it was acknowledged");
}

TEST_CASE("a log that ends before the acknowledged watermark is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  // Remove the last three events consistently (keys and metadata), as a recovery to an earlier
  // point would.
  {
    std::string v = testing::GetRaw(tmp.path(), log::kMetaLastSeqKey);
    REQUIRE(v == std::to_string(kEvents));
  }
  testing::PutRaw(tmp.path(), log::kMetaLastSeqKey, std::to_string(kEvents - 3));
  testing::DeleteRaw(tmp.path(), {log::EventKey("c1", kEvents), log::EventKey("c1", kEvents - 1),
                                  log::EventKey("c1", kEvents - 2)});
  RequireRefused(tmp.path(), "the log ends at event 47 but event 50 was acknowledged");
}

TEST_CASE("a missing event in the middle is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  testing::DeleteRaw(tmp.path(), {log::EventKey("c1", 20)});
  RequireRefused(tmp.path(), "expected event 20 but found event 21: events are missing");
}

TEST_CASE("a last-seq metadata that disagrees with the events is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  testing::PutRaw(tmp.path(), log::kMetaLastSeqKey, "60");
  RequireRefused(tmp.path(), "its metadata says 60");
}

TEST_CASE("a damaged watermark file is refused", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  testing::FlipByte(tmp.Sub("log/ACKED"), 20);
  testing::FlipByte(tmp.Sub("log/ACKED"), 512 + 20);
  Status s = OpenStatus(tmp.path());
  CHECK(s.code() == StatusCode::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains("watermark) is damaged"));
}

TEST_CASE("one torn watermark slot falls back to the other", "[log][corruption]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), kEvents);
  testing::FlipByte(tmp.Sub("log/ACKED"), 20);
  CHECK(OpenStatus(tmp.path()).ok());
}

}  // namespace
}  // namespace attune
