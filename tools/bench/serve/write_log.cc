// attune_write_log DIR --campaign-id ID < EVENTS.ndjson: appends events ({"type", "v", "data"} per
// line) to the campaign log in DIR (created when missing), 1000 per batch; an empty line appends
// what was read so far at once (so a caller can feed it live, as a running campaign would). The
// serve benchmark (serve_bench.py) uses it to write a 10,000-candidate campaign in seconds and to
// grow it while clients watch; `attune status` and `attune verify` read the result like any other
// campaign.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "log/event_log.h"

int main(int argc, char** argv) {
  if (argc != 4 || std::string(argv[2]) != "--campaign-id") {
    std::cerr << "usage: attune_write_log DIR --campaign-id ID < EVENTS.ndjson\n";
    return 2;
  }
  attune::EventLogOptions options;
  options.campaign_id = argv[3];
  options.watermark_sync_interval_ms = 1000;
  auto log = attune::EventLog::Open(argv[1], options);
  if (!log.ok()) {
    std::cerr << "attune_write_log: " << log.status().message() << "\n";
    return 1;
  }
  std::vector<attune::NewEvent> batch;
  size_t line_no = 0;
  auto flush = [&]() {
    if (batch.empty()) return true;
    auto appended = (*log)->Append(batch);
    batch.clear();
    if (!appended.ok()) std::cerr << "attune_write_log: " << appended.status().message() << "\n";
    return appended.ok();
  };
  for (std::string line; std::getline(std::cin, line);) {
    ++line_no;
    if (line.empty()) {
      if (!flush()) return 1;
      continue;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("type") || !j.contains("data")) {
      std::cerr << "attune_write_log: stdin:" << line_no
                << ": expected {\"type\", \"v\", \"data\"}\n";
      return 2;
    }
    batch.push_back(attune::NewEvent{j["type"].get<std::string>(), j["data"], j.value("v", 1)});
    if (batch.size() == 1000 && !flush()) return 1;
  }
  if (!flush()) return 1;
  std::cout << (*log)->last_seq() << " events in " << argv[1] << "\n";
  return 0;
}
