// The streaming trace reader: formats it accepts, and a clear message for each kind of bad file.
#include <catch2/catch.hpp>

#include <vector>

#include "profile/trace_reader.h"
#include "test_files.h"
#include "trace_builder.h"

namespace attune::profile {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

std::vector<TraceEvent> ReadAll(const std::string& path, Result<TraceHeader>* header) {
  std::vector<TraceEvent> events;
  *header = ReadTrace(path, [&](const TraceEvent& e) { events.push_back(e); });
  return events;
}

TEST_CASE("a Kineto trace reads the same plain and gzip-compressed", "[profile][reader]") {
  TempDir dir;
  TraceBuilder b;
  b.Rank(3, 8).Kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 1661203463048756, 1808, 42,
                      {{"Collective name", "allreduce"}, {"In msg nelems", 1024}, {"dtype", "Float"}});
  for (bool gzip : {false, true}) {
    Result<TraceHeader> header = Status::Internal("unread");
    auto events = ReadAll(b.Save(dir, gzip ? "t.json.gz" : "t.json", gzip), &header);
    REQUIRE(header.ok());
    CHECK(header->distributed_info["rank"] == 3);
    REQUIRE(events.size() == 1);
    CHECK(events[0].cat == "kernel");
    CHECK(events[0].ts_ns == 1661203463048756000);  // integer µs → ns, exactly
    CHECK(events[0].dur_ns == 1808000);
    CHECK(events[0].correlation == 42);
    CHECK(events[0].collective == "allreduce");
    CHECK(events[0].in_nelems == 1024);
    CHECK(events[0].dtype == "Float");
  }
}

TEST_CASE("fractional microseconds and string pids are kept", "[profile][reader]") {
  TempDir dir;
  std::string path = dir.File("legacy.json");
  testing::WriteText(path, R"([{"name": "aten::mm", "ph": "X", "ts": 4458677009853.422,
      "dur": 2.5, "tid": 1, "pid": "CPU functions", "args": {"Call stack": [["a", {"b": [1]}]]}},
      {"name": "x", "ph": "X", "ts": 4458676522690.655, "dur": 0.0015, "tid": 1, "pid": 1},
      {"name": "y", "ph": "X", "ts": 1.5e3, "dur": 12.34567, "tid": 1, "pid": 1}])");
  Result<TraceHeader> header = Status::Internal("unread");
  auto events = ReadAll(path, &header);
  REQUIRE(header.ok());
  CHECK(header->legacy_array);
  REQUIRE(events.size() == 3);
  CHECK(events[0].ts_ns == 4458677009853422);
  // Decimal text is read exactly (a double would give ...690654.5 → 690655 or 690654).
  CHECK(events[1].ts_ns == 4458676522690655);
  CHECK(events[1].dur_ns == 2);  // 1.5 ns rounds half up
  CHECK(events[2].ts_ns == 1'500'000);  // exponent form
  CHECK(events[2].dur_ns == 12346);
  CHECK(events[0].dur_ns == 2500);
  CHECK(events[0].pid == "CPU functions");
  CHECK(events[0].tid == "1");
  CHECK(events[0].cat.empty());
}

TEST_CASE("a truncated trace is refused with the line and column where it ends", "[profile][reader]") {
  TempDir dir;
  TraceBuilder b;
  for (int i = 0; i < 50; ++i) b.Kernel("k", i * 10, 5, i);
  std::string text = b.Text();
  std::string path = dir.File("cut.json.gz");
  testing::WriteGzip(path, text.substr(0, text.size() / 2));
  Result<TraceHeader> header = Status::Internal("unread");
  ReadAll(path, &header);
  REQUIRE_FALSE(header.ok());
  CHECK(header.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(header.status().message(), Catch::Contains(path));
  CHECK_THAT(header.status().message(), Catch::Contains("truncated"));
  CHECK_THAT(header.status().message(), Catch::Contains("line 1, column"));
}

TEST_CASE("invalid JSON says where", "[profile][reader]") {
  TempDir dir;
  std::string path = dir.File("bad.json");
  testing::WriteText(path, "{\"traceEvents\": [\n  {\"ph\": \"X\",, \"ts\": 1}\n]}");
  Result<TraceHeader> header = Status::Internal("unread");
  ReadAll(path, &header);
  REQUIRE_FALSE(header.ok());
  CHECK_THAT(header.status().message(), Catch::Contains("JSON is invalid at line 2, column"));
}

TEST_CASE("a damaged gzip stream is named as such", "[profile][reader]") {
  TempDir dir;
  TraceBuilder b;
  for (int i = 0; i < 2000; ++i) b.Kernel("kernel_" + std::to_string(i), i * 10, 5, i);
  std::string whole = dir.File("whole.json.gz");
  testing::WriteGzip(whole, b.Text());
  std::string bytes = testing::ReadWholeFile(whole);
  std::string cut = dir.File("cut.json.gz");
  testing::WriteText(cut, bytes.substr(0, bytes.size() / 2));
  Result<TraceHeader> header = Status::Internal("unread");
  ReadAll(cut, &header);
  REQUIRE_FALSE(header.ok());
  CHECK_THAT(header.status().message(), Catch::Contains("gzip stream is damaged or truncated"));
}

TEST_CASE("files that are not traces are refused with what was expected", "[profile][reader]") {
  TempDir dir;
  struct Case {
    std::string text, expected;
  };
  for (const Case& c : std::vector<Case>{
           {"", "the file is empty"},
           {"{\"foo\": 1}", "without \"traceEvents\""},
           {"{\"traceEvents\": {\"a\": 1}}", "\"traceEvents\" is an object"},
           {"{\"traceEvents\": 3}", "\"traceEvents\" is a number"},
           {"42", "the document is a single number"}}) {
    std::string path = dir.File("x.json");
    testing::WriteText(path, c.text);
    Result<TraceHeader> header = Status::Internal("unread");
    ReadAll(path, &header);
    REQUIRE_FALSE(header.ok());
    CHECK_THAT(header.status().message(), Catch::Contains(c.expected));
  }
  Result<TraceHeader> header = Status::Internal("unread");
  ReadAll(dir.File("missing.json"), &header);
  CHECK(header.status().code() == StatusCode::kNotFound);
}

}  // namespace
}  // namespace attune::profile
