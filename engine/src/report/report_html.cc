// report.html: the dashboard's campaign page as one file, with the page's script, the charting
// library, the styles and the campaign's data inlined, so that it opens from disk with no server
// and no network (clusters are often offline; the file can be mailed or archived).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attune/support/markup.h"
#include "campaign/events.h"
#include "report/dashboard.h"
#include "report/report.h"

namespace attune {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kMaxDetails = 1000;

std::string ReadOrEmpty(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Inside <script> and <style>, "</" could end the element early; "<\/" means the same to
// JavaScript and JSON strings, and CSS never needs "</".
std::string ForScript(std::string text) {
  for (size_t p = 0; (p = text.find("</", p)) != std::string::npos; p += 3)
    text.replace(p, 2, "<\\/");
  return text;
}

json ReportData(const CampaignState& state) {
  json page = DashboardCampaign(state);
  page["name"] = state.campaign_id;
  page["seq"] = state.last_seq;
  page["state"] = state.finished ? "finished" : state.paused ? "paused" : "report";
  page["damage"] = "";
  page["last_event_ms"] = 0;  // wall-clock values stay out of reports (byte-stable on replay)
  page["recent_events"] = json::array();
  // Every candidate's detail, or for a very large campaign those of the leaderboard's first
  // kMaxDetails rows (the file stays a few megabytes; the others show their row and tree node).
  json candidates = json::object();
  const auto board = Leaderboard(state);
  for (size_t i = 0; i < board.size() && i < kMaxDetails; ++i) {
    if (auto d = DashboardCandidate(state, board[i].id)) candidates[board[i].id] = *d;
  }
  return json{{"page", page}, {"candidates", candidates}};
}

}  // namespace

std::string RenderReportHtml(const CampaignState& state, const std::string& web_dir) {
  const fs::path web(web_dir);
  const std::string app_js = ReadOrEmpty(web / "app.js");
  const std::string app_css = ReadOrEmpty(web / "app.css");
  const std::string uplot_js =
      ReadOrEmpty(web / "vendor/node_modules/uplot/dist/uPlot.iife.min.js");
  const std::string uplot_css = ReadOrEmpty(web / "vendor/node_modules/uplot/dist/uPlot.min.css");
  std::string out =
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>attune report: " +
      support::XmlEscape(state.campaign_id) + "</title>\n";
  out += "<style>\n" + ForScript(uplot_css) + "\n" + ForScript(app_css) + "\n</style>\n";
  if (!uplot_js.empty()) {
    // uPlot's MIT licence travels with every copy of it.
    std::string license = ReadOrEmpty(web / "vendor/node_modules/uplot/LICENSE");
    for (size_t p = 0; (p = license.find("*/", p)) != std::string::npos;)
      license.replace(p, 2, "* /");
    out += "<script>\n/* uPlot, inlined by attune.\n" + ForScript(license) + "*/\n" +
           ForScript(uplot_js) + "\n</script>\n";
  }
  out +=
      "</head>\n<body>\n<header><span class=\"brand\">attune</span> <span id=\"crumb\"></span> "
      "<span id=\"live\" class=\"live\"></span></header>\n<main id=\"app\">";
  out += app_js.empty()
             ? "<p>The page script (web/app.js) was not found when this report was written; "
               "RESULTS.md and REPORT.md hold the same results.</p>"
             : "<noscript>This report draws with JavaScript; RESULTS.md and REPORT.md hold "
               "the same results as text.</noscript>";
  out += "</main>\n<script>\nwindow.ATTUNE_REPORT = " +
         ForScript(ReportData(state).dump(-1, ' ', false, json::error_handler_t::replace)) +
         ";\n</script>\n";
  if (!app_js.empty()) out += "<script>\n" + ForScript(app_js) + "\n</script>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace attune
