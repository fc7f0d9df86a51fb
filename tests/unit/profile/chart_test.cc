// The per-rank breakdown table and stacked bars.
#include <catch2/catch.hpp>

#include "profile/breakdown_chart.h"
#include "trace_builder.h"

namespace attune::profile {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

TEST_CASE("a rank's bar splits its window into parts that add up", "[profile][chart]") {
  TempDir dir;
  // compute [0,10); NCCL [5,25); memcpy [24,30); idle [30,40) ended by a kernel launched late.
  TraceBuilder b;
  b.Rank(1, 2).Kernel("gemm", 0, 10, 1).Launch(1, -2).Kernel("nccl_ar", 5, 20, 2).Launch(2, -1)
      .Memcpy(24, 6).Kernel("gemm", 40, 10, 3).Launch(3, 35);
  auto report = AnalyzeTraces({b.Save(dir, "t.json")}, {});
  REQUIRE(report.ok());
  auto bars = BarsOf(*report);
  REQUIRE(bars.size() == 1);
  const RankBar& bar = bars[0];
  CHECK(bar.label == "rank 1");
  CHECK(bar.window_ns == 50'000);
  CHECK(bar.compute_ns == 20'000);
  CHECK(bar.exposed_communication_ns == 15'000);  // [10,25)
  CHECK(bar.memory_only_ns == 5'000);             // [25,30)
  CHECK(bar.launch_bound_idle_ns == 10'000);      // [30,40), launched at 35
  CHECK(bar.other_idle_ns == 0);
  CHECK(bar.compute_ns + bar.exposed_communication_ns + bar.memory_only_ns +
            bar.launch_bound_idle_ns + bar.other_idle_ns == bar.window_ns);

  auto again = BarsFromJson(BarsToJson(bars));
  REQUIRE(again.size() == 1);
  CHECK(again[0].memory_only_ns == bar.memory_only_ns);
  CHECK(again[0].label == bar.label);

  std::string md = RenderBreakdownMarkdown(bars);
  CHECK_THAT(md, Catch::Contains("| rank 1 | 0.05 | 40.0% | 30.0% | 10.0% | 20.0% | 0.0% |"));
  std::string svg = RenderBreakdownSvg(bars);
  CHECK_THAT(svg, Catch::StartsWith("<svg"));
  CHECK_THAT(svg, Catch::Contains("rank 1: exposed communication 30.0%"));
  CHECK(RenderBreakdownSvg(bars) == svg);  // byte-stable
}

TEST_CASE("bars read from damaged JSON keep what is there", "[profile][chart]") {
  CHECK(BarsFromJson(nlohmann::json::object()).empty());
  auto bars = BarsFromJson(nlohmann::json::parse(R"([{"label": "rank 0", "window_ns": 10}, 3])"));
  REQUIRE(bars.size() == 1);
  CHECK(bars[0].window_ns == 10);
  CHECK(bars[0].compute_ns == 0);
}

}  // namespace
}  // namespace attune::profile
