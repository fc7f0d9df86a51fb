// The event log's normal behaviour: append, reopen, replay, chain, lock, read-only.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "attune/hash.h"
#include "log/envelope.h"
#include "log/event_log.h"
#include "log_test_util.h"

namespace attune {
namespace {

using testing::FixedClockOptions;
using testing::TempDir;

TEST_CASE("appended events are replayed in order after a reopen", "[log]") {
  TempDir tmp;
  {
    auto log = EventLog::Open(tmp.path(), FixedClockOptions());
    REQUIRE(log.ok());
    CHECK((*log)->Append({NewEvent{"CampaignStarted", {{"name", "q"}}}}).value() == 1);
    auto last = (*log)->Append({NewEvent{"JobRequested", {{"job", "a"}}},
                                NewEvent{"JobSubmitted", {{"job", "a"}}, 2}});
    REQUIRE(last.ok());
    CHECK(*last == 3);
  }
  auto log = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(log.ok());
  CHECK((*log)->last_seq() == 3);
  CHECK((*log)->campaign_id() == "c1");
  auto events = (*log)->ReadFrom(1);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 3);
  CHECK((*events)[0].type == "CampaignStarted");
  CHECK((*events)[0].prev.empty());
  CHECK((*events)[1].prev == (*events)[0].hash);
  CHECK((*events)[2].prev == (*events)[1].hash);
  CHECK((*events)[2].v == 2);
  CHECK((*events)[2].data["job"] == "a");
  CHECK((*log)->Append({NewEvent{"Tick"}}).value() == 4);
}

TEST_CASE("ReadFrom starts at the given seq and ForEach can stop early", "[log]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), 10);
  auto log = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(log.ok());
  auto tail = (*log)->ReadFrom(8);
  REQUIRE(tail.ok());
  REQUIRE(tail->size() == 3);
  CHECK(tail->front().seq == 8);
  int seen = 0;
  Status stopped = (*log)->ForEach(1, [&seen](const EventRecord& r) {
    ++seen;
    return r.seq == 4 ? Status::Aborted("enough") : Status::Ok();
  });
  CHECK(stopped.code() == StatusCode::kAborted);
  CHECK(seen == 4);
}

TEST_CASE("a second opener of a campaign directory is refused with the holder's pid", "[log]") {
  TempDir tmp;
  auto first = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(first.ok());
  auto second = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(second.status().message(),
             Catch::Contains("is in use by attune pid " + std::to_string(getpid())));
}

TEST_CASE("a read-only open works while a writer holds the directory", "[log]") {
  TempDir tmp;
  auto writer = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Append({NewEvent{"Tick"}}).ok());
  EventLogOptions ro;
  ro.read_only = true;
  auto reader = EventLog::Open(tmp.path(), ro);
  REQUIRE(reader.ok());
  CHECK((*reader)->last_seq() == 1);
  CHECK((*reader)->Append({NewEvent{"Tick"}}).status().code() ==
        StatusCode::kFailedPrecondition);
}

TEST_CASE("a read-only open of a directory without a log is not found", "[log]") {
  TempDir tmp;
  EventLogOptions ro;
  ro.read_only = true;
  auto opened = EventLog::Open(tmp.Sub("nothing"), ro);
  CHECK(opened.status().code() == StatusCode::kNotFound);
  auto empty_dir = EventLog::Open(tmp.path(), ro);
  CHECK(empty_dir.status().code() == StatusCode::kNotFound);
}

TEST_CASE("event types and campaign ids are restricted to safe characters", "[log]") {
  TempDir tmp;
  auto log = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(log.ok());
  CHECK((*log)->Append({NewEvent{"bad type"}}).status().code() == StatusCode::kInvalidArgument);
  CHECK((*log)->last_seq() == 0);
  auto bad = EventLog::Open(tmp.Sub("x"), FixedClockOptions("a/b"));
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("on_ack reports each acknowledged seq", "[log]") {
  TempDir tmp;
  std::vector<uint64_t> acked;
  auto options = FixedClockOptions();
  options.on_ack = [&acked](uint64_t seq) { acked.push_back(seq); };
  auto log = EventLog::Open(tmp.path(), options);
  REQUIRE(log.ok());
  REQUIRE((*log)->Append({NewEvent{"A"}, NewEvent{"B"}}).ok());
  REQUIRE((*log)->Append({NewEvent{"C"}}).ok());
  CHECK(acked == std::vector<uint64_t>{2, 3});
}

TEST_CASE("the envelope is canonical JSON whose hash covers it without the hash", "[log][format]") {
  EventRecord r{7, "JobFinished", 1, 1700000000123, {{"b", 2}, {"a", "x"}}, "", ""};
  auto value = log::EncodeEnvelope(&r);
  REQUIRE(value.ok());
  std::string body = R"({"seq":7,"type":"JobFinished","v":1,"ts":1700000000123,)"
                     R"("data":{"a":"x","b":2},"prev":"")";
  CHECK(*value == body + R"(,"hash":")" + r.hash + R"("})");
  CHECK(r.hash == Sha256Hex(body + "}"));
  auto links = log::CheckEnvelope(*value);
  REQUIRE(links.ok());
  CHECK(links->seq == 7);
  CHECK(links->prev.empty());
  auto decoded = log::DecodeEnvelope(*value);
  REQUIRE(decoded.ok());
  CHECK(decoded->data == r.data);
  CHECK(decoded->hash == r.hash);
}

TEST_CASE("event keys sort numerically by seq", "[log][format]") {
  CHECK(log::EventKey("c", 255) < log::EventKey("c", 256));
  CHECK(log::EventKey("c", 1).size() == 10);
  CHECK(log::SeqFromKey(log::EventKey("c", 0x0102030405060708ull), "c") == 0x0102030405060708ull);
  CHECK(log::SeqFromKey("other", "c") == 0);
  CHECK(log::EventKey("c", UINT64_MAX) < log::EventKeyUpperBound("c"));
}

TEST_CASE("a background-synced watermark is complete after close", "[log]") {
  TempDir tmp;
  auto options = FixedClockOptions();
  options.watermark_sync_interval_ms = -1;
  testing::WriteTicks(tmp.path(), 30, options);
  auto report = VerifyEventLog(tmp.path());
  REQUIRE(report.ok());
  CHECK(report->problems.empty());
  CHECK(report->acknowledged == 30);
}

TEST_CASE("a batched watermark still gives a verified log after a clean close", "[log]") {
  TempDir tmp;
  auto options = FixedClockOptions();
  options.watermark_sync_interval_ms = 1000;
  testing::WriteTicks(tmp.path(), 20, options);
  auto report = VerifyEventLog(tmp.path());
  REQUIRE(report.ok());
  CHECK(report->problems.empty());
  CHECK(report->events == 20);
  CHECK(report->acknowledged == 20);
}

}  // namespace
}  // namespace attune

namespace attune {
namespace {

TEST_CASE("a cleanly closed writer leaves its events in table files and reopens", "[log]") {
  testing::TempDir tmp;
  auto options = testing::FixedClockOptions();
  options.flush_on_close = true;
  testing::WriteTicks(tmp.path(), 12, options);
  CHECK_FALSE(testing::FilesEndingWith(tmp.Sub("log"), ".sst").empty());
  auto log = EventLog::Open(tmp.path(), testing::FixedClockOptions());
  REQUIRE(log.ok());
  CHECK((*log)->last_seq() == 12);
  CHECK((*log)->ReadFrom(12).value().front().data["i"] == 11);
}

TEST_CASE("below the free-space guard an append is refused with advice and loses nothing", "[log]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), 3);
  EventLogOptions guarded = FixedClockOptions();
  guarded.min_free_bytes = uint64_t{1} << 62;  // more than any disk has: the guard always trips
  {
    auto log = EventLog::Open(tmp.path(), guarded);
    REQUIRE(log.ok());
    auto refused = (*log)->Append({NewEvent{"Tick", {{"i", 4}}}});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == StatusCode::kIoError);
    CHECK_THAT(refused.status().message(), Catch::Contains("is full") &&
                                               Catch::Contains("Every acknowledged event is intact") &&
                                               Catch::Contains("run the same `attune run` again"));
    CHECK((*log)->last_seq() == 3);
  }
  auto log = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(log.ok());
  CHECK((*log)->last_seq() == 3);
  CHECK((*log)->Append({NewEvent{"Tick", {{"i", 4}}}}).value() == 4);
}

TEST_CASE("the free-space guard defaults to ATTUNE_LOG_MIN_FREE_BYTES, else 8 MiB", "[log]") {
  ::unsetenv("ATTUNE_LOG_MIN_FREE_BYTES");
  CHECK(DefaultMinFreeBytes() == (uint64_t{8} << 20));
  ::setenv("ATTUNE_LOG_MIN_FREE_BYTES", "0", 1);
  CHECK(DefaultMinFreeBytes() == 0);
  ::setenv("ATTUNE_LOG_MIN_FREE_BYTES", "12x", 1);  // not a number: the default
  CHECK(DefaultMinFreeBytes() == (uint64_t{8} << 20));
  ::unsetenv("ATTUNE_LOG_MIN_FREE_BYTES");
}

TEST_CASE("verify tells an interrupted first start apart from damage", "[log]") {
  TempDir tmp;
  {
    // The watermark is created before the database: a first start stopped in between leaves
    // only ACKED at seq 0.
    auto log = EventLog::Open(tmp.path(), FixedClockOptions());
    REQUIRE(log.ok());
  }
  for (const auto& entry : std::filesystem::directory_iterator(tmp.Sub("log"))) {
    if (entry.path().filename() != "ACKED") std::filesystem::remove_all(entry.path());
  }
  auto report = VerifyEventLog(tmp.path());
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::kNotFound);
  CHECK_THAT(report.status().message(), Catch::Contains("no event log yet") &&
                                            Catch::Contains("nothing is lost"));
  auto log = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(log.ok());
  CHECK((*log)->Append({NewEvent{"Tick"}}).value() == 1);
}

TEST_CASE("the log lives in the campaign directory's log/ folder; the top keeps the user's files",
          "[log][layout]") {
  TempDir tmp;
  {
    auto log = EventLog::Open(tmp.path(), FixedClockOptions());
    REQUIRE(log.ok());
    CHECK((*log)->dir() == tmp.path());
    REQUIRE((*log)->Append({NewEvent{"Tick"}}).ok());
  }
  CHECK(EventLogDirOf(tmp.path()) == tmp.Sub("log"));
  CHECK(std::filesystem::exists(tmp.Sub("log/CURRENT")));
  CHECK(std::filesystem::exists(tmp.Sub("log/ACKED")));
  std::vector<std::string> top;
  for (const auto& entry : std::filesystem::directory_iterator(tmp.path())) {
    top.push_back(entry.path().filename().string());
  }
  CHECK(top == std::vector<std::string>{"log"});
  auto report = VerifyEventLog(tmp.path());
  REQUIRE(report.ok());
  CHECK(report->events == 1);
}

TEST_CASE("a campaign of the earlier layout (the log at the top) opens where it is, damaged or not",
          "[log][layout]") {
  TempDir tmp;
  {
    auto log = EventLog::Open(tmp.path(), FixedClockOptions());
    REQUIRE(log.ok());
    REQUIRE((*log)->Append({NewEvent{"Tick"}, NewEvent{"Tick"}}).ok());
  }
  // Move the log's files to the top, as an earlier attune wrote them.
  for (const auto& entry : std::filesystem::directory_iterator(tmp.Sub("log"))) {
    std::filesystem::rename(entry.path(), tmp.Sub(entry.path().filename().string()));
  }
  std::filesystem::remove(tmp.Sub("log"));
  CHECK(EventLogDirOf(tmp.path()) == tmp.path());
  {
    auto log = EventLog::Open(tmp.path(), FixedClockOptions());
    REQUIRE(log.ok());
    CHECK((*log)->last_seq() == 2);
    CHECK((*log)->Append({NewEvent{"Tick"}}).value() == 3);
  }
  CHECK_FALSE(std::filesystem::exists(tmp.Sub("log")));
  // Without CURRENT and ACKED, its other files still mark it: refused as damaged, never taken for
  // a new campaign in log/.
  std::filesystem::remove(tmp.Sub("CURRENT"));
  std::filesystem::remove(tmp.Sub("ACKED"));
  CHECK(EventLogDirOf(tmp.path()) == tmp.path());
  auto damaged = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE_FALSE(damaged.ok());
  CHECK(damaged.status().code() == StatusCode::kCorruption);
  CHECK_FALSE(std::filesystem::exists(tmp.Sub("log")));
}

}  // namespace
}  // namespace attune
