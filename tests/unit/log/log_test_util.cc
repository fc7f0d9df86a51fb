#include "log_test_util.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include <rocksdb/db.h>

#include "log/envelope.h"

namespace attune::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  path_ = (fs::temp_directory_path() /
           ("attune-test-" + std::to_string(getpid()) + "-" + std::to_string(rd())))
              .string();
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

EventLogOptions FixedClockOptions(const std::string& campaign) {
  EventLogOptions options;
  options.campaign_id = campaign;
  auto tick = std::make_shared<int64_t>(1700000000000);
  options.now_ms = [tick] { return ++*tick; };
  // Leave the events in the WAL, as a crash would, so the WAL tests have a WAL to damage.
  options.flush_on_close = false;
  return options;
}

void WriteTicks(const std::string& dir, int n, const EventLogOptions& options) {
  auto log = EventLog::Open(dir, options);
  REQUIRE(log.ok());
  for (int k = 0; k < n; ++k) {
    auto seq = (*log)->Append({NewEvent{"Tick", {{"i", k}}}});
    REQUIRE(seq.ok());
  }
}

std::vector<std::string> FilesEndingWith(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> FilesStartingWith(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t FileSize(const std::string& file) { return fs::file_size(file); }

void FlipByte(const std::string& file, int64_t offset) {
  uint64_t size = FileSize(file);
  uint64_t at = offset >= 0 ? static_cast<uint64_t>(offset) : size - static_cast<uint64_t>(-offset);
  REQUIRE(at < size);
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(&c, 1);
  REQUIRE(f.good());
}

void TruncateBy(const std::string& file, uint64_t bytes) {
  fs::resize_file(file, FileSize(file) - bytes);
}

namespace {
std::unique_ptr<rocksdb::DB> OpenRaw(const std::string& dir) {
  rocksdb::Options options;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, EventLogDirOf(dir), &db);  // a campaign dir
  INFO(s.ToString());
  REQUIRE(s.ok());
  return std::unique_ptr<rocksdb::DB>(db);
}
}  // namespace

void FlushRaw(const std::string& dir) {
  auto db = OpenRaw(dir);
  REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
}

void PutRaw(const std::string& dir, const std::string& key, const std::string& value) {
  auto db = OpenRaw(dir);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  REQUIRE(db->Put(wo, key, value).ok());
}

std::string GetRaw(const std::string& dir, const std::string& key) {
  auto db = OpenRaw(dir);
  std::string value;
  REQUIRE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
  return value;
}

std::vector<std::string> ExportAndFlushRaw(const std::string& dir, const std::string& campaign,
                                           uint64_t last) {
  auto db = OpenRaw(dir);
  std::vector<std::string> values;
  for (uint64_t seq = 1; seq <= last; ++seq) {
    std::string value;
    REQUIRE(db->Get(rocksdb::ReadOptions(), log::EventKey(campaign, seq), &value).ok());
    values.push_back(value);
  }
  REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
  return values;
}

void DeleteRaw(const std::string& dir, const std::vector<std::string>& keys) {
  auto db = OpenRaw(dir);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  for (const auto& key : keys) REQUIRE(db->Delete(wo, key).ok());
}

}  // namespace attune::testing
