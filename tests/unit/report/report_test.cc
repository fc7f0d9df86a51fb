// Report rendering: structure and numbers of RESULTS.md, REPORT.md, the SVG and lessons.md, and
// that rendering is a pure function of the state.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../campaign/campaign_fixtures.h"
#include "report/report.h"

namespace attune {
namespace {

using testing::LogBuilder;
using testing::TestMeasurement;
using testing::TestRecipe;
using nlohmann::json;

// Baseline 1000 tok/s; c001 (mbs 2) leads at 1250; c002 refused; c003 (mbs 8) OOM; then a
// verified speedup of 1.24x over three pairs.
LogBuilder TunedCampaign() {
  LogBuilder b(2.0);
  b.BaselineRun(1, 990).BaselineRun(2, 1000).BaselineRun(3, 1010);
  b.Propose("c001", 1, "2").Gate("c001", true);
  b.Request("t-c001-1", "c001", "candidate", TestRecipe("2")).Finish("t-c001-1", 300, TestMeasurement(1250));
  b.Rank("c001", "new_leader", 1250, 1.25);
  b.Add(events::kLeaderChanged, json{{"from", "baseline"}, {"to", "c001"}, {"reason", "faster"}});
  b.Propose("c002", 2, "3", "c001").Gate("c002", false, "obj.global_batch").Rank("c002", "refused");
  b.Propose("c003", 3, "8", "c001").Gate("c003", true);
  Failure oom;
  oom.kind = FailureKind::kOom;
  oom.evidence = "torch.OutOfMemoryError: CUDA out of memory";
  b.Request("t-c003-1", "c003", "candidate", TestRecipe("8")).Finish("t-c003-1", 60, std::nullopt, oom);
  b.Rank("c003", "failed");
  b.Add(events::kPairedLossChecked, json{{"candidate", "c001"}, {"pass", true}, {"tolerance", 0.02},
                                         {"compared", 3}, {"max_rel_diff", 0.001}, {"reason", "ok"}});
  b.Add(events::kSpeedupMeasured, json{{"leader", "c001"}, {"ratios", {1.22, 1.24, 1.26}},
                                       {"median", 1.24}, {"min", 1.22}, {"max", 1.26}});
  return b;
}

TEST_CASE("RESULTS.md ranks measured entries fastest first, then the rest", "[report]") {
  const std::string md = RenderResults(TunedCampaign().Fold());
  CHECK_THAT(md, Catch::Contains("| rank | candidate | change | tokens/s/GPU | speedup | GPU-hours | verdict |"));
  CHECK_THAT(md, Catch::Contains("| 1 | c001 | --micro-batch-size: 1 -> 2 | 1250.0 | 1.250x |"));
  CHECK_THAT(md, Catch::Contains("| 2 | baseline | (baseline) | 1000.0 | 1.000x | 0.6000 | baseline |"));
  CHECK_THAT(md, Catch::Contains("| - | c002 |"));
  CHECK_THAT(md, Catch::Contains("refused (obj.global_batch)"));
  CHECK_THAT(md, Catch::Contains("failed (oom)"));
  CHECK(md.find("c001") < md.find("| 2 | baseline"));
  CHECK(md.find("c002") < md.find("c003"));
  CHECK_THAT(md, Catch::Contains("Verified speedup of c001: 1.240x (min 1.220x, max 1.260x) over 3 paired runs"));
}

TEST_CASE("REPORT.md shows the shipped recipe, its launch, evidence and rationales", "[report]") {
  const std::string md = RenderReport(TunedCampaign().Fold(), "python3 pretrain_gpt.py --micro-batch-size 2");
  CHECK_THAT(md, Catch::Contains("Ship **c001**"));
  CHECK_THAT(md, Catch::Contains("- `--micro-batch-size: 1 -> 2`"));
  CHECK_THAT(md, Catch::Contains("**1.240x** (median of 3 runs"));
  CHECK_THAT(md, Catch::Contains("spread 1.220x to 1.260x"));
  CHECK_THAT(md, Catch::Contains("```yaml\n"));
  CHECK_THAT(md, Catch::Contains("--micro-batch-size"));
  CHECK_THAT(md, Catch::Contains("```sh\npython3 pretrain_gpt.py --micro-batch-size 2\n```"));
  CHECK_THAT(md, Catch::Contains("Paired-loss check of c001: pass"));
  CHECK_THAT(md, Catch::Contains("use memory headroom"));
  CHECK_THAT(md, Catch::Contains("## Budget"));
}

TEST_CASE("a verified speedup the pairs do not establish is reported as not established",
          "[report]") {
  // The clean case first: three pairs, all faster, the median well outside the 3% band.
  const CampaignState clean = TunedCampaign().Fold();
  REQUIRE(QuoteSpeedup(clean));
  CHECK(QuoteSpeedup(clean)->Caveat().empty());
  CHECK_THAT(RenderReport(clean, ""), !Catch::Contains("not established"));
  CHECK_THAT(RenderResults(clean), !Catch::Contains("not established"));

  SECTION("a pair that ran the leader slower than the baseline") {
    LogBuilder b = TunedCampaign();
    b.Add(events::kSpeedupMeasured, json{{"leader", "c001"},
                                         {"ratios", {0.88, 1.83}},
                                         {"median", 1.355},
                                         {"min", 0.88},
                                         {"max", 1.83}});
    const CampaignState s = b.Fold();
    const std::string report = RenderReport(s, "");
    CHECK_THAT(report, Catch::Contains("**1.355x** (median of 2 runs"));
    CHECK_THAT(report,
               Catch::Contains("**The speedup is not established: in 1 of 2 paired runs the "
                               "leader ran no faster than the baseline.**"));
    CHECK_THAT(report, Catch::Contains("more `repeats` on its `verify` step"));
    CHECK_THAT(RenderResults(s),
               Catch::Contains("over 2 paired runs; not established: in 1 of 2 paired "
                               "runs the leader ran no faster than the baseline."));
  }
  SECTION("every pair faster, but the median inside the noise band") {
    LogBuilder b = TunedCampaign();
    b.Add(events::kSpeedupMeasured, json{{"leader", "c001"},
                                         {"ratios", {1.01, 1.02, 1.025}},
                                         {"median", 1.02},
                                         {"min", 1.01},
                                         {"max", 1.025}});
    const std::string report = RenderReport(b.Fold(), "");
    CHECK_THAT(report,
               Catch::Contains("not established: the median is inside the noise band of ±3.0%"));
  }
  SECTION("the band is the campaign's, widened by the baseline's own spread") {
    LogBuilder b(2.0);
    b.BaselineRun(1, 900).BaselineRun(2, 1000).BaselineRun(3, 1100);  // 20% spread
    b.Propose("c001", 1, "2").Gate("c001", true);
    b.Request("t-c001-1", "c001", "candidate", TestRecipe("2"))
        .Finish("t-c001-1", 300, TestMeasurement(1300));
    b.Rank("c001", "new_leader", 1300, 1.3);
    b.Add(events::kLeaderChanged, json{{"from", "baseline"}, {"to", "c001"}, {"reason", "faster"}});
    b.Add(events::kSpeedupMeasured, json{{"leader", "c001"},
                                         {"ratios", {1.12, 1.15, 1.18}},
                                         {"median", 1.15},
                                         {"min", 1.12},
                                         {"max", 1.18}});
    auto q = QuoteSpeedup(b.Fold());
    REQUIRE(q);
    CHECK(q->noise_band == Approx(0.2));
    CHECK_THAT(q->Caveat(), Catch::Contains("inside the noise band of ±20.0%"));
  }
}

TEST_CASE("a campaign where nothing won says to ship the baseline", "[report]") {
  LogBuilder b;
  b.BaselineRun(1, 1000);
  const std::string md = RenderReport(b.Fold(), "");
  CHECK_THAT(md, Catch::Contains("ship the baseline"));
  CHECK_THAT(md, Catch::Contains("The baseline is unchanged"));
  CHECK(md.find("```sh") == std::string::npos);
}

TEST_CASE("the SVG plots runs as dots, failures as crosses and the leader as a line", "[report]") {
  const std::string svg = RenderThroughputSvg(TunedCampaign().Fold());
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  size_t dots = 0, crosses = 0;
  for (size_t p = 0; (p = svg.find("<circle", p)) != std::string::npos; ++p) ++dots;
  for (size_t p = 0; (p = svg.find("stroke=\"#c33\"", p)) != std::string::npos; ++p) ++crosses;
  CHECK(dots == 4);     // three baseline runs and c001
  CHECK(crosses == 1);  // c003's OOM
  CHECK(svg.find("<polyline") != std::string::npos);
}

TEST_CASE("lessons.md uses the lever/effect line format of past_tuning_projects", "[report]") {
  const std::string md = RenderLessons(TunedCampaign().Fold());
  CHECK_THAT(md, Catch::Contains("stack: megatron\n"));
  CHECK_THAT(md, Catch::Contains("speedup: 1.240x\n"));
  CHECK_THAT(md, Catch::Contains("shipped_change: --micro-batch-size: 1 -> 2\n"));
  CHECK_THAT(md, Catch::Contains("- lever: micro_batch_size effect: +25.0% outcome: new_leader"));
  CHECK_THAT(md, Catch::Contains("outcome: failed change: `--micro-batch-size: 1 -> 8` — oom: torch.OutOfMemoryError"));
}

TEST_CASE("rendering is a pure function of the state", "[report][replay]") {
  const auto a = RenderAllReports(TunedCampaign().Fold(), "cmd");
  const auto b = RenderAllReports(TunedCampaign().Fold(), "cmd");
  CHECK(a == b);
  CHECK(a.size() == 5);  // RESULTS.md, REPORT.md, throughput.svg, lessons.md, report.html
}

TEST_CASE("WriteFileAtomic replaces the file and leaves no temporary behind", "[report]") {
  const auto dir = std::filesystem::temp_directory_path() / ("attune_report_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "R.md").string();
  REQUIRE(WriteFileAtomic(path, "one").ok());
  REQUIRE(WriteFileAtomic(path, "two").ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "two");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  auto bad = WriteFileAtomic((dir / "missing" / "x").string(), "z");
  CHECK(bad.code() == StatusCode::kIoError);
  CHECK_THAT(bad.message(), Catch::Contains("cannot create"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attune
