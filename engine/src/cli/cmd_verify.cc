// `attune verify DIR`: check a campaign's log (chain, watermark, RocksDB checksums).
#include <ostream>

#include "cli/args.h"
#include "log/event_log.h"

namespace attune::cli {

int RunVerify(const std::vector<std::string>& args, Env& env) {
  ArgParser p("verify DIR [--json]",
              "Checks the event log in DIR without taking its lock: every event's hash and "
              "chain link, the acknowledged watermark, and every RocksDB block checksum. "
              "Exit 0 when intact, 1 when damaged.");
  p.Options()("json", "machine-readable report");
  p.Positional("dir");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  if (!p.Has("dir")) return ReportError(env, "verify", Status::InvalidArgument("missing DIR"), json);
  auto report = VerifyEventLog(p.Get("dir"));
  if (!report.ok()) return ReportError(env, "verify", report.status(), json);
  bool intact = report->problems.empty();
  if (json) {
    *env.out << nlohmann::json{{"ok", intact},
                               {"campaign_id", report->campaign_id},
                               {"events", report->events},
                               {"acknowledged", report->acknowledged},
                               {"problems", report->problems}}
                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
  } else if (intact) {
    *env.out << p.Get("dir") << ": ok: " << report->events << " events, chain intact, "
             << report->acknowledged << " acknowledged\n";
  } else {
    *env.out << p.Get("dir") << ": DAMAGED\n";
    for (const auto& problem : report->problems) *env.out << "  - " << problem << "\n";
  }
  return intact ? kExitOk : kExitFailed;
}

}  // namespace attune::cli
