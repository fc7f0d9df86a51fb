// `attune status DIR`: the folded campaign state (read-only; works while a run holds the lock).
#include <ostream>

#include "cli/args.h"
#include "log/event_log.h"

#include "steps/campaign_runner.h"

namespace attune::cli {

namespace {

// Without the steps layer, the log itself still says something useful.
Result<nlohmann::json> LogOnlyStatus(const std::string& dir) {
  EventLogOptions options;
  options.read_only = true;
  ATTUNE_ASSIGN_OR_RETURN(auto log, EventLog::Open(dir, options));
  nlohmann::json status = {{"campaign_id", log->campaign_id()}, {"events", log->last_seq()}};
  if (log->last_seq() > 0) {
    ATTUNE_ASSIGN_OR_RETURN(auto last, log->ReadFrom(log->last_seq()));
    status["last_event"] = {{"seq", last.back().seq}, {"type", last.back().type}};
  }
  return status;
}

}  // namespace

int RunStatus(const std::vector<std::string>& args, Env& env) {
  ArgParser p("status DIR [--json]", "Shows the state of the campaign in DIR.");
  p.Options()("json", "the folded state as JSON");
  p.Positional("dir");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  if (!p.Has("dir")) return ReportError(env, "status", Status::InvalidArgument("missing DIR"), json);
  auto status = CampaignStatusJson(p.Get("dir"));
  if (!status.ok()) return ReportError(env, "status", status.status(), json);
  if (json) {
    *env.out << status->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    PrintCampaignStatus(*status, *env.out);
  }
  (void)LogOnlyStatus;
  return kExitOk;
}

}  // namespace attune::cli
