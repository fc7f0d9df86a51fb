// EventTail: following a log that another writer appends to, without folding it again.
#include "log/event_tail.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "log/envelope.h"
#include "log_test_util.h"

namespace attune {
namespace {

using testing::FixedClockOptions;
using testing::TempDir;

std::unique_ptr<EventTail> OpenTail(const std::string& dir, size_t expect_initial) {
  std::vector<EventRecord> initial;
  auto tail = EventTail::Open(dir, &initial);
  REQUIRE(tail.ok());
  CHECK(initial.size() == expect_initial);
  return std::move(tail).value();
}

void Append(EventLog& log, int n) {
  for (int i = 0; i < n; ++i) REQUIRE(log.Append({NewEvent{"Tick", {{"i", i}}}}).ok());
}

TEST_CASE("a tail sees what the writer appends after it opened, and nothing twice", "[log][tail]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), 5);
  auto tail = OpenTail(tmp.path(), 5);
  CHECK(tail->last_seq() == 5);
  CHECK(tail->campaign_id() == "c1");
  auto none = tail->Poll();
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto log = EventLog::Open(tmp.path(), FixedClockOptions());
  REQUIRE(log.ok());
  Append(**log, 3);
  auto fresh = tail->Poll();
  REQUIRE(fresh.ok());
  REQUIRE(fresh->size() == 3);
  CHECK((*fresh)[0].seq == 6);
  CHECK((*fresh)[2].seq == 8);
  auto again = tail->Poll();
  REQUIRE(again.ok());
  CHECK(again->empty());
}

TEST_CASE("a tail keeps following across a writer's restart (a resumed campaign)", "[log][tail]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), 3);
  auto tail = OpenTail(tmp.path(), 3);
  for (int round = 0; round < 3; ++round) {  // each open writes a new MANIFEST and WAL
    auto log = EventLog::Open(tmp.path(), FixedClockOptions());
    REQUIRE(log.ok());
    Append(**log, 2);
  }
  auto fresh = tail->Poll();
  REQUIRE(fresh.ok());
  REQUIRE(fresh->size() == 6);
  CHECK(fresh->back().seq == 9);
  CHECK(fresh->front().prev != "");
}

TEST_CASE("a tail refuses a new event that does not chain onto the last one it read",
          "[log][tail]") {
  TempDir tmp;
  testing::WriteTicks(tmp.path(), 3);
  auto tail = OpenTail(tmp.path(), 3);
  testing::WriteTicks(tmp.path(), 2);  // seq 4 and 5
  // Event 5 replaced by a copy of event 2: a valid envelope in the wrong place.
  testing::PutRaw(tmp.path(), log::EventKey("c1", 5),
                  testing::GetRaw(tmp.path(), log::EventKey("c1", 2)));
  auto fresh = tail->Poll();
  REQUIRE_FALSE(fresh.ok());
  CHECK(fresh.status().code() == StatusCode::kCorruption);
  CHECK_THAT(fresh.status().message(),
             Catch::Contains("event 5 does not chain onto the event before it"));
}

TEST_CASE("a tail of a folder without a campaign says so", "[log][tail]") {
  TempDir tmp;
  std::vector<EventRecord> initial;
  auto tail = EventTail::Open(tmp.Sub("nothing"), &initial);
  REQUIRE_FALSE(tail.ok());
  CHECK(tail.status().code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace attune
