// `attune events DIR [--json] [--follow]`: print the event log (read-only).
#include <chrono>
#include <csignal>
#include <ctime>
#include <iomanip>
#include <ostream>
#include <thread>

#include "cli/args.h"
#include "log/event_log.h"

namespace attune::cli {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void OnInterrupt(int) { g_interrupted = 1; }

std::string FormatTime(int64_t ts_ms) {
  std::time_t t = static_cast<std::time_t>(ts_ms / 1000);
  std::tm tm = {};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void PrintEvent(const EventRecord& e, bool json, std::ostream& out) {
  if (json) {
    out << EventRecordToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  std::string data = e.data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (data.size() > 160) data = data.substr(0, 157) + "...";
  out << std::setw(6) << e.seq << "  " << FormatTime(e.ts_ms) << "  " << std::left
      << std::setw(22) << e.type << std::right << " " << data << "\n";
}

// Prints events after `*next - 1`; reopens the log read-only each time so that a writer's new
// events become visible.
Status PrintFrom(const std::string& dir, bool json, uint64_t* next, std::ostream& out) {
  EventLogOptions options;
  options.read_only = true;
  ATTUNE_ASSIGN_OR_RETURN(auto log, EventLog::Open(dir, options));
  return log->ForEach(*next, [&](const EventRecord& e) {
    PrintEvent(e, json, out);
    *next = e.seq + 1;
    return Status::Ok();
  });
}

}  // namespace

int RunEvents(const std::vector<std::string>& args, Env& env) {
  ArgParser p("events DIR [--json] [--follow]",
              "Prints the events of the campaign in DIR, oldest first. The log is verified "
              "(hash chain, watermark) before anything is printed.");
  p.Options()("json", "one JSON envelope per line (NDJSON)")(
      "follow,f", "keep printing new events until Ctrl-C")(
      "from", po::value<uint64_t>()->default_value(1), "first seq to print");
  p.Positional("dir");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  if (!p.Has("dir")) return ReportError(env, "events", Status::InvalidArgument("missing DIR"), json);
  uint64_t next = p.vm()["from"].as<uint64_t>();
  Status s = PrintFrom(p.Get("dir"), json, &next, *env.out);
  if (!s.ok()) return ReportError(env, "events", s, json);
  if (!p.Has("follow")) return kExitOk;
  std::signal(SIGINT, OnInterrupt);
  while (!g_interrupted) {
    env.out->flush();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    s = PrintFrom(p.Get("dir"), json, &next, *env.out);
    if (!s.ok()) return ReportError(env, "events", s, json);
  }
  return kExitOk;
}

}  // namespace attune::cli
