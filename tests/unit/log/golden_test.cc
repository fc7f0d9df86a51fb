// Golden log: tests/fixtures/golden/log-v1/ is a campaign directory written by the first version
// of the log (RocksDB files + ACKED), and events.ndjson beside it holds the same events' stored
// values, byte for byte, one per line. Together they pin:
//  - the on-disk layout (keys, metadata keys, RocksDB options that must stay compatible): today's
//    EventLog must open the old directory, verify its chain and watermark, and append to it;
//  - the envelope bytes and the hash definition: every stored value must still pass today's
//    CheckEnvelope, and today's encoder must reproduce each old value exactly (a change in
//    canonicalization would make new logs unreadable by the documented spec).
// Regenerate only for a deliberate format change (and bump the envelope or event `v`):
//   ATTUNE_WRITE_GOLDEN=1 <build>/bin/log_test "[.golden-generate]"
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "log/envelope.h"
#include "log/event_log.h"
#include "log_test_util.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

const std::string kGoldenDir = std::string(ATTUNE_SOURCE_DIR) + "/tests/fixtures/golden/log-v1";
const std::string kGoldenNdjson =
    std::string(ATTUNE_SOURCE_DIR) + "/tests/fixtures/golden/log-v1.ndjson";

std::vector<std::vector<NewEvent>> GoldenBatches() {
  return {
      {NewEvent{"CampaignStarted",
                {{"workflow", {{"name", "golden"}, {"steps", {"baseline", "tune"}}}},
                 {"workflow_hash", "ab12"}}}},
      {NewEvent{"JobRequested", {{"job", "golden-baseline-1"}, {"gpus", 8}}},
       NewEvent{"JobSubmitted", {{"job", "golden-baseline-1"}, {"launcher_id", "4242"}}}},
      {NewEvent{"JobFinished",
                {{"job", "golden-baseline-1"},
                 {"step_time_s", 1.25},
                 {"tokens_per_s_per_gpu", 10342.5},
                 {"losses", {10.5, 9.875, 9.0625}},
                 {"note", "unicode: \u00e9\u00e8 \u2713, quote \" and backslash \\"}}}},
      {NewEvent{"ProposalRecorded", {{"changes", nlohmann::json::array()}, {"done", true}}, 2}},
  };
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string CopyGolden(const testing::TempDir& tmp) {
  std::string dir = tmp.Sub("golden");
  fs::copy(kGoldenDir, dir, fs::copy_options::recursive);
  return dir;
}

TEST_CASE("the golden log written by version 1 opens, verifies and accepts appends",
          "[log][golden]") {
  REQUIRE(fs::is_directory(kGoldenDir));
  testing::TempDir tmp;
  std::string dir = CopyGolden(tmp);
  auto report = VerifyEventLog(dir);
  REQUIRE(report.ok());
  CHECK(report->problems.empty());
  CHECK(report->events == 5);
  CHECK(report->acknowledged == 5);
  auto log = EventLog::Open(dir, testing::FixedClockOptions());
  INFO(log.status().ToString());
  REQUIRE(log.ok());
  CHECK((*log)->campaign_id() == "golden");
  auto events = (*log)->ReadFrom(1);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 5);
  CHECK((*events)[3].data["losses"][1] == 9.875);
  CHECK((*events)[4].v == 2);
  CHECK((*log)->Append({NewEvent{"Tick"}}).value() == 6);
}

TEST_CASE("the golden log's stored values equal the NDJSON export and today's encoding",
          "[log][golden]") {
  std::vector<std::string> lines = ReadLines(kGoldenNdjson);
  REQUIRE(lines.size() == 5);
  testing::TempDir tmp;
  auto log = EventLog::Open(CopyGolden(tmp), testing::FixedClockOptions());
  REQUIRE(log.ok());
  auto events = (*log)->ReadFrom(1);
  REQUIRE(events.ok());
  std::string prev;
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO("event " << i + 1);
    auto links = log::CheckEnvelope(lines[i]);
    REQUIRE(links.ok());
    CHECK(links->prev == prev);
    prev = std::string(links->hash);
    EventRecord again = (*events)[i];
    again.hash.clear();
    auto encoded = log::EncodeEnvelope(&again);
    REQUIRE(encoded.ok());
    CHECK(*encoded == lines[i]);
    CHECK(again.hash == (*events)[i].hash);
  }
}

TEST_CASE("write the golden log (run by hand for a deliberate format change)",
          "[.golden-generate]") {
  REQUIRE(std::getenv("ATTUNE_WRITE_GOLDEN") != nullptr);
  fs::remove_all(kGoldenDir);
  uint64_t last = 0;
  {
    auto log = EventLog::Open(kGoldenDir, testing::FixedClockOptions("golden"));
    REQUIRE(log.ok());
    for (const auto& batch : GoldenBatches()) REQUIRE((*log)->Append(batch).ok());
    last = (*log)->last_seq();
  }
  std::ofstream out(kGoldenNdjson, std::ios::binary | std::ios::trunc);
  for (const std::string& value : testing::ExportAndFlushRaw(kGoldenDir, "golden", last)) {
    out << value << "\n";
  }
  for (const auto& name : {"LOCK", "LOCK-attune"}) fs::remove(fs::path(kGoldenDir) / name);
  for (const auto& f : testing::FilesStartingWith(kGoldenDir, "LOG")) fs::remove(f);
  CHECK(fs::exists(fs::path(kGoldenDir) / "ACKED"));
}

}  // namespace
}  // namespace attune
