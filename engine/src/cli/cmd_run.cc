// `attune run WORKFLOW [--dir DIR]`: start or resume a campaign (the steps layer does the work).
#include <csignal>
#include <atomic>
#include <filesystem>
#include <ostream>

#include "cli/args.h"
#include "log/dir_lock.h"
#include "log/envelope.h"
#include "log/event_log.h"

#include "steps/campaign_runner.h"

namespace attune::cli {

namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void OnStopSignal(int) { g_stop_requested.store(true); }

// SIGINT/SIGTERM only set a flag: the campaign pauses at a safe point and records it. The flag is
// polled, so a system call the signal lands in is restarted rather than failed (SA_RESTART).
// SIGPIPE is ignored: a Ctrl-C also kills the reader of `attune run | tee log`, and the progress
// line printed after that must fail as a write, not kill the engine before it has cancelled its
// jobs and recorded the pause (tests/integration/signals). Jobs get default dispositions back
// (the job wrapper resets them).
void InstallStopHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

// Says early, and the same way with or without the steps layer, that another attune holds DIR.
// The lock is released again at once: RunCampaign takes it for the campaign's lifetime.
Status CheckNotLocked(const std::string& dir) {
  std::error_code ec;
  const std::string log_dir = EventLogDirOf(dir);
  if (!std::filesystem::is_directory(log_dir, ec)) return Status::Ok();
  return log::DirLock::Acquire(log_dir).status();
}

std::string DefaultDir(const std::string& workflow) {
  return "runs/" + std::filesystem::path(workflow).stem().string();
}

}  // namespace

int RunRun(const std::vector<std::string>& args, Env& env) {
  ArgParser p("run WORKFLOW [--dir DIR] [--plugin-path DIR] [--on-stop leave|cancel] [--json]\n"
              "       attune run --dir DIR --amend-workflow FILE",
              "Starts a campaign of WORKFLOW in DIR (default runs/<workflow file name>), or "
              "resumes the campaign already in DIR (then WORKFLOW may be omitted; the campaign "
              "runs the workflow it started with, and says which settings of a WORKFLOW passed "
              "again differ). --amend-workflow records an explicit amendment first: the budget, "
              "the agent's options and steps not yet started may change. WORKFLOW is validated "
              "before anything is recorded (invalid: exit 2). Ctrl-C pauses it cleanly (exit 3).");
  p.Options()("dir", po::value<std::string>(), "campaign directory")(
      "campaign-id", po::value<std::string>(),
      "a new campaign's id, the prefix of its job names (letters, digits, '.', '_', '-'; "
      "default: the directory's name plus 8 random hex digits); on resume it must match")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory")(
      "on-stop", po::value<std::string>()->default_value("leave"),
      "on Ctrl-C: leave running jobs running (resume finds them) or cancel them")(
      "json", "progress as NDJSON on stdout")(
      "amend-workflow", po::value<std::string>(),
      "resume after recording FILE as the campaign's workflow (budget, agent options and steps "
      "not yet started may change)")(
      "ack-file", po::value<std::string>(), "crash-test side channel: acknowledged seqs");
  p.Positional("workflow");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  std::string on_stop = p.Get("on-stop");
  if (on_stop != "leave" && on_stop != "cancel") {
    return ReportError(env, "run", Status::InvalidArgument(
                                       "--on-stop must be 'leave' or 'cancel', not '" + on_stop +
                                       "'"), json);
  }
  if (p.Has("amend-workflow") && !p.Has("dir")) {
    return ReportError(env, "run", Status::InvalidArgument(
                                       "--amend-workflow needs --dir DIR (the campaign to amend)"),
                       json);
  }
  if (!p.Has("workflow") && !p.Has("dir")) {
    return ReportError(env, "run", Status::InvalidArgument(
                                       "give a WORKFLOW to start, or --dir DIR to resume"), json);
  }
  if (p.Has("campaign-id") && (p.Get("campaign-id").empty() || !log::IsValidCampaignId(p.Get("campaign-id")))) {
    return ReportError(env, "run", Status::InvalidArgument(
                                       "--campaign-id '" + p.Get("campaign-id") +
                                       "' may only contain letters, digits, '.', '_' and '-' (at "
                                       "most 128 characters)"), json);
  }
  std::string dir = p.Has("dir") ? p.Get("dir") : DefaultDir(p.Get("workflow"));
  Status unlocked = CheckNotLocked(dir);
  if (!unlocked.ok()) return ReportError(env, "run", unlocked, json);
  RunOptions options;
  options.workflow_path = p.Get("workflow");
  options.amend_workflow_path = p.Get("amend-workflow");
  options.campaign_dir = dir;
  options.campaign_id = p.Get("campaign-id");
  options.plugin_paths = env.plugin_paths;
  for (const auto& path : p.GetList("plugin-path")) options.plugin_paths.push_back(path);
  options.on_stop = on_stop == "cancel" ? OnStop::kCancel : OnStop::kLeaveRunning;
  options.json = json;
  options.out = env.out;
  options.err = env.err;
  options.stop_requested = &g_stop_requested;
  options.ack_file = p.Get("ack-file");
  options.attune_binary = env.binary;
  InstallStopHandlers();
  return RunCampaign(options);
}

}  // namespace attune::cli
