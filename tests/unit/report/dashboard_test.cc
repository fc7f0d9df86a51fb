// The dashboard's data (report/dashboard.h), report.html, the nice axes and the plot of
// throughput.svg, and REPORT.md's candidate tree.
#include "report/dashboard.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <regex>

#include "../campaign/campaign_fixtures.h"
#include "report/report.h"
#include "report/svg_axis.h"

namespace attune {
namespace {

using nlohmann::json;
using testing::LogBuilder;
using testing::TestMeasurement;
using testing::TestRecipe;

// Baseline 1000 tok/s over three runs; c001 (mbs 2) leads at 1250; c002 (from c001) refused by
// the gate; c003 (from c001) ran out of memory.
LogBuilder Campaign() {
  LogBuilder b(2.0);
  b.BaselineRun(1, 990).BaselineRun(2, 1000).BaselineRun(3, 1010);
  b.Propose("c001", 1, "2").Gate("c001", true);
  b.Request("t-c001-1", "c001", "candidate", TestRecipe("2"))
      .Finish("t-c001-1", 300, TestMeasurement(1250));
  b.Rank("c001", "new_leader", 1250, 1.25);
  b.Add(events::kLeaderChanged, json{{"from", "baseline"}, {"to", "c001"}, {"reason", "faster"}});
  b.Propose("c002", 2, "3", "c001").Gate("c002", false, "obj.global_batch").Rank("c002", "refused");
  b.Propose("c003", 3, "8", "c001").Gate("c003", true);
  Failure oom;
  oom.kind = FailureKind::kOom;
  b.Request("t-c003-1", "c003", "candidate", TestRecipe("8"))
      .Finish("t-c003-1", 60, std::nullopt, oom);
  b.Rank("c003", "failed");
  return b;
}

bool IsNiceStep(double step) {
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (std::fabs(mantissa - m) < 1e-9) return true;
  }
  return false;
}

TEST_CASE("axes step by 1, 2 or 5 times a power of ten and end on a whole step", "[report][svg]") {
  // The quotients of the old plot: 2862/4294/5725 tokens/s and 118.985/237.971 GPU-hours.
  for (double max : {5725.0 * 1.15, 237.971, 1.0, 0.03, 10781.0, 7.1, 123456.0}) {
    const NiceAxis a = MakeNiceAxis(max, 5);
    INFO("max " << max << " step " << a.step << " end " << a.max);
    CHECK(IsNiceStep(a.step));
    CHECK(a.max >= max);
    CHECK(a.max - a.step < max);
    const auto ticks = a.Ticks();
    CHECK(ticks.size() >= 3);
    CHECK(ticks.size() <= 8);
  }
  CHECK(MakeNiceAxis(10781, 5).Label(12000) == "12000");
  CHECK(MakeNiceAxis(237.971, 5).step == 50);
  CHECK(MakeNiceAxis(0.03, 5).Label(0.005) == "0.005");
  CHECK(MakeNiceAxis(0, 5).max == 1);  // an empty campaign still draws an axis
}

TEST_CASE(
    "throughput.svg: nice tick labels, clipped data, a legend, lever labels and a title that fits",
    "[report][svg]") {
  CampaignState state = Campaign().Fold();
  state.campaign_id = std::string(120, 'x');
  const std::string svg = RenderThroughputSvg(state);
  for (const char* anchor : {"middle", "end"}) {  // x labels, then y labels
    std::regex tick(std::string("text-anchor=\"") + anchor + R"(">([0-9.]+)</text>)");
    std::vector<double> values;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator();
         ++it) {
      values.push_back(std::stod((*it)[1]));
    }
    REQUIRE(values.size() >= 3);
    CHECK(values[0] == 0);
    for (size_t i = 1; i < values.size(); ++i) {
      CHECK(values[i] - values[i - 1] == Approx(values[1]));
      CHECK(IsNiceStep(values[1]));
    }
  }
  CHECK_THAT(svg, Catch::Contains("<clipPath id=\"plot\">"));
  CHECK_THAT(svg, Catch::Contains("<g clip-path=\"url(#plot)\">"));
  CHECK(svg.find("<polyline") > svg.find("<g clip-path"));
  CHECK_THAT(svg, Catch::Contains(">micro_batch_size</text>"));  // c001's step names its lever
  CHECK_THAT(svg, Catch::Contains("failed run"));
  CHECK_THAT(svg, Catch::Contains("candidate run"));
  // The title is cut with an ellipsis and its full text kept as a tooltip.
  std::smatch title;
  REQUIRE(std::regex_search(
      svg, title, std::regex("y=\"22\" font-size=\"14\" text-anchor=\"middle\">([^<]*)<")));
  CHECK(title[1].str().size() < 100);
  CHECK_THAT(title[1].str(), Catch::EndsWith("\u2026"));
  CHECK_THAT(svg, Catch::Contains("<title>Throughput vs GPU-hours: campaign " +
                                  std::string(120, 'x') + "</title>"));
}

TEST_CASE("REPORT.md draws the candidate tree: each candidate under its parent, with its lever",
          "[report]") {
  const std::string md = RenderReport(Campaign().Fold(), "");
  CHECK_THAT(md, Catch::Contains("## Candidate tree"));
  CHECK_THAT(
      md,
      Catch::Contains(
          "baseline 1000.0 tokens/s/GPU\n"
          "\u2514\u2500 c001 micro_batch_size: --micro-batch-size: 1 -> 2  [new_leader, leader] "
          "1250.0 tokens/s/GPU (+25.0% vs baseline)\n"
          "   \u251c\u2500 c002 micro_batch_size: --micro-batch-size: 1 -> 3  [refused "
          "(obj.global_batch)]\n"
          "   \u2514\u2500 c003 micro_batch_size: --micro-batch-size: 1 -> 8  [failed (oom)]\n"));
}

TEST_CASE("the dashboard's campaign data: runs, leader steps, leaderboard, burn-down, tree",
          "[report][serve]") {
  const CampaignState state = Campaign().Fold();
  const json page = DashboardCampaign(state);
  CHECK(page["runs"].size() == 5);  // three baseline runs, c001, c003's failure
  int failed = 0;
  for (const auto& r : page["runs"]) failed += r["ok"].get<bool>() ? 0 : 1;
  CHECK(failed == 1);
  REQUIRE(page["leader_steps"].size() == 2);
  CHECK(page["leader_steps"][1]["candidate"] == "c001");
  CHECK(page["leader_steps"][1]["lever"] == "micro_batch_size");
  const auto rows = Leaderboard(state);
  REQUIRE(page["leaderboard"].size() == rows.size());
  CHECK(page["leaderboard"][0]["candidate"] == "c001");
  CHECK(page["leaderboard"][0]["leader"] == true);
  CHECK(page["leaderboard"][1]["candidate"] == "baseline");
  CHECK(page["tree"].size() == 4);
  CHECK(page["tree"][2]["parent"] == "c001");
  CHECK(page["burn_down"].back()["charged_gpu_hours"].get<double>() ==
        Approx(state.ledger.charged));
  CHECK(page["summary"]["leader"] == "c001");
}

TEST_CASE("a candidate's detail: diffs against baseline and parent, gate rule, jobs",
          "[report][serve]") {
  const CampaignState state = Campaign().Fold();
  auto c002 = DashboardCandidate(state, "c002");
  REQUIRE(c002);
  CHECK((*c002)["parent"] == "c001");
  CHECK((*c002)["gate"]["pass"] == false);
  CHECK((*c002)["gate"]["rule"] == "obj.global_batch");
  CHECK((*c002)["changes_vs_parent"][0]["text"] == "--micro-batch-size: 2 -> 3");
  CHECK((*c002)["changes_vs_baseline"][0]["text"] == "--micro-batch-size: 1 -> 3");
  auto c003 = DashboardCandidate(state, "c003");
  REQUIRE(c003);
  CHECK((*c003)["jobs"][0]["failure"]["kind"] == "oom");
  CHECK(DashboardCandidate(state, "baseline"));
  CHECK_FALSE(DashboardCandidate(state, "c999"));
}

TEST_CASE("report.html inlines its data and scripts; nothing in the data can end a script",
          "[report][serve]") {
  LogBuilder b = Campaign();
  b.Propose("c004", 4, "</script><script>alert(1)</script>", "c001");
  const CampaignState state = b.Fold();
  const std::string html = RenderReportHtml(state, std::string(ATTUNE_SOURCE_DIR) + "/web");
  CHECK_THAT(html, Catch::Contains("window.ATTUNE_REPORT = {"));
  CHECK_THAT(html, Catch::Contains("window.attuneCharts"));  // app.js is inlined
  CHECK(html.find("src=\"http") == std::string::npos);
  // Only "</script" ends a script element: the proposal's text stays inside its JSON string.
  CHECK(html.find("</script><script>alert(1)") == std::string::npos);
  size_t closes = 0;
  for (size_t p = 0; (p = html.find("</script>", p)) != std::string::npos; ++p) ++closes;
  CHECK(closes == 3);  // the charting library, the data, the page script
  const std::string bare = RenderReportHtml(state, "/nonexistent");
  CHECK_THAT(bare, Catch::Contains("RESULTS.md and REPORT.md hold the same results"));
}

}  // namespace
}  // namespace attune
