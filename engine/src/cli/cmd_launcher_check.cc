// `attune launcher check NAME`: the launcher conformance suite. The engine's crash safety and its
// measurements rest on what engine/include/attune/launcher.h promises (jobs found again by name,
// idempotent Submit, Poll of an unknown name, the log readable while a job runs, cancellation,
// the time limit, times the engine can charge). This runs small real jobs through the plugin host
// on the user's own launcher options and says which promise fails.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/conformance.h"
#include "plugin/plugin_host.h"

namespace attune::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// The limit of a simulated probe job, which must not meet it (it may run for hours of its virtual
// clock). A real probe job gets --job-timeout plus two minutes: within a partition's maximum.
constexpr double kVirtualLimitS = 24 * 3600;

struct CheckOptions {
  std::string name;
  json with = json::object();
  double job_timeout_s = 300;  // how long a probe job may take to reach the state a clause waits for
  double time_limit_s = 5;     // the limit given to the job that must be stopped by it
  std::optional<Recipe> recipe;  // the probe for a launcher that models recipes (virtual time)
  std::optional<LaunchSpec> recipe_launch;
  std::shared_ptr<const Stack> stack;  // --stack: renders the recipe; a simulating launcher maps it
  std::string dir;             // the campaign directory the launcher keeps its state in
};

// The probes: one launcher (and a fresh one for the restart clause) on one directory.
class Probe {
 public:
  Probe(PluginHost& host, Env& env, CheckOptions options)
      : host_(host), env_(env), o_(std::move(options)) {
    std::random_device rd;
    std::ostringstream token;
    token << "lc" << std::hex << (rd() & 0xffffff);
    token_ = token.str();
  }

  Result<std::unique_ptr<Launcher>> Create() {
    PluginContext ctx = CliPluginContext(env_);
    ctx.config = o_.with;
    ctx.campaign_dir = o_.dir;
    return host_.CreateLauncher(o_.name, ctx);
  }

  std::string Name(const std::string& what) const { return token_ + "-" + what; }
  std::string JobDir(const std::string& what) const { return (fs::path(o_.dir) / "jobs" / Name(what)).string(); }

  // A job that runs `command` under /bin/sh (or the recipe's launch, for a launcher in virtual
  // time), with its own folder and log.
  JobSpec Job(const std::string& what, const std::string& command, double time_limit_s,
              const ClusterInfo& cluster) const {
    JobSpec spec;
    spec.name = Name(what);
    spec.key = what;
    spec.job_dir = JobDir(what);
    spec.log_path = spec.job_dir + "/job.log";
    fs::create_directories(spec.job_dir);
    if (o_.recipe) {
      spec.recipe = *o_.recipe;
      spec.launch = *o_.recipe_launch;
      spec.stack = o_.stack.get();
    } else {
      spec.recipe.stack = "probe";
      spec.recipe.entry = {"/bin/sh"};
      spec.recipe.topology = Topology{1, 1, cluster.device_type};
      spec.launch.argv = {"/bin/sh", "-c", command};
    }
    spec.nodes = o_.recipe ? o_.recipe->topology.nodes : 1;
    spec.devices = o_.recipe ? o_.recipe->topology.WorldSize() : 1;
    spec.time_limit_s = time_limit_s;
    spec.options = o_.with;
    return spec;
  }

  // Polls until `done` holds for the status (or the job's deadline); the last status seen.
  Result<JobStatus> WaitFor(Launcher& l, const std::string& name, const std::function<bool(const JobStatus&)>& done,
                            double timeout_s) const {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    const double interval = std::clamp(l.PollIntervalSeconds(), 0.05, 2.0);
    while (true) {
      ATTUNE_ASSIGN_OR_RETURN(JobStatus st, l.Poll(name));
      if (done(st) || Clock::now() >= deadline) return st;
      std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    }
  }
  Result<JobStatus> WaitTerminal(Launcher& l, const std::string& name) const {
    return WaitFor(l, name, [](const JobStatus& s) { return IsTerminal(s.state); }, o_.job_timeout_s);
  }

  // The limit of a probe job that must not meet it; the waits are bounded by --job-timeout.
  double GenerousLimit(const ClusterInfo& cluster) const {
    return cluster.virtual_time ? kVirtualLimitS : o_.job_timeout_s + 120;
  }
  const CheckOptions& options() const { return o_; }
  bool Virtual(const Launcher& l) const { return l.Cluster().virtual_time; }

 private:
  PluginHost& host_;
  Env& env_;
  CheckOptions o_;
  std::string token_;
};

std::string Describe(const JobStatus& s) {
  std::string out = JobStateName(s.state);
  if (s.exit_code) out += " (exit " + std::to_string(*s.exit_code) + ")";
  if (!s.reason.empty()) out += ": " + s.reason;
  return out;
}

int Lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// The clauses that need no job.
void AddStaticClauses(ConformanceSuite& s, Launcher& l, Probe& probe) {
  s.Run("cluster", [&] {
    ClusterInfo c = l.Cluster();
    if (c.devices_per_node < 1 || c.max_nodes < 1) {
      return Fail("Cluster() says " + std::to_string(c.devices_per_node) + " devices per node and " +
                  std::to_string(c.max_nodes) + " nodes; both must be >= 1");
    }
    if (c.device_type.empty()) return Fail("Cluster() names no device type");
    const double interval = l.PollIntervalSeconds();
    if (!std::isfinite(interval) || interval < 0) return Fail("PollIntervalSeconds() is " + std::to_string(interval));
    const double a = l.Now(), b = l.Now();
    if (!std::isfinite(a) || b < a) return Fail("Now() is not a finite, non-decreasing clock");
    return c.device_type + " x" + std::to_string(c.devices_per_node) + " per node, " +
           std::to_string(c.max_nodes) + " node(s), polled every " + fmt::format("{:g}", interval) + " s" +
           (c.virtual_time ? ", virtual time" : "");
  });
  s.Run("poll.unknown", [&] {
    auto st = l.Poll(probe.Name("never-submitted"));
    if (!st.ok()) return Fail("Poll of a name never submitted failed: " + st.status().message());
    if (st->state != JobState::kUnknown) {
      return Fail("Poll of a name never submitted says " + Describe(*st) +
                  "; it must be unknown, which is how a restarted engine knows it may submit");
    }
    auto log = l.ReadLog(probe.Name("never-submitted"));
    if (log.ok() && !log->empty()) return Fail("ReadLog of a name never submitted returned text");
    if (!log.ok() && log.status().code() != StatusCode::kNotFound) {
      return Fail("ReadLog of a name never submitted failed: " + log.status().message());
    }
    return std::string("unknown, and no log");
  });
}

// A job that ends well: its states, times, log, and that it is found again by name — by a second
// Submit and by a fresh launcher — without starting twice.
void AddRunClauses(ConformanceSuite& s, Launcher& l, Probe& probe) {
  const ClusterInfo cluster = l.Cluster();
  const std::string mark = probe.JobDir("ok") + "/started";
  JobSpec spec = probe.Job(
      "ok", "echo started >> '" + mark + "'; echo 'attune probe line 1'; sleep 1; echo 'attune probe line 2'",
      probe.GenerousLimit(cluster), cluster);
  bool finished = false;
  JobStatus end;
  std::string log_text;
  s.Run("run.success", [&] {
    auto submitted = l.Submit(spec);
    if (!submitted.ok()) return Fail("Submit failed: " + submitted.status().message());
    if (submitted->state == JobState::kUnknown) return Fail("Submit answered 'unknown' for the job it took");
    auto st = probe.WaitTerminal(l, spec.name);
    if (!st.ok()) return Fail("Poll failed: " + st.status().message());
    if (!IsTerminal(st->state)) return Fail(fmt::format("not finished after {:g} s: ", probe.options().job_timeout_s) + Describe(*st));
    end = *st;
    finished = true;
    auto log = l.ReadLog(spec.name);
    if (!log.ok()) return Fail("ReadLog failed: " + log.status().message());
    log_text = *log;
    if (!probe.Virtual(l) && st->state != JobState::kSucceeded) return Fail("a job that exits 0 ended " + Describe(*st));
    if (st->state == JobState::kSucceeded && st->exit_code && *st->exit_code != 0) {
      return Fail("succeeded with exit code " + std::to_string(*st->exit_code));
    }
    if (!st->start_time || !st->end_time || *st->end_time < *st->start_time) {
      return Fail("no start and end time (or the end before the start): the engine cannot charge it");
    }
    if (st->devices != spec.devices) {
      return Fail("the finished job reports " + std::to_string(st->devices) + " devices charged; it asked for " +
                  std::to_string(spec.devices));
    }
    if (!probe.Virtual(l) && (log_text.find("attune probe line 1") == std::string::npos ||
                              log_text.find("attune probe line 2") == std::string::npos)) {
      return Fail("the log does not hold what the job printed: '" + log_text.substr(0, 200) + "'");
    }
    return Describe(*st) + fmt::format(" after {:.1f} s on its clock, ", *st->end_time - *st->start_time) +
           std::to_string(st->devices) + " device(s) charged, log of " + std::to_string(log_text.size()) + " bytes";
  });
  s.Run("submit.idempotent", [&] {
    if (!finished) return Skip("run.success did not finish its job");
    auto again = l.Submit(spec);
    if (!again.ok()) return Fail("a second Submit of the finished job failed: " + again.status().message());
    if (again->state != end.state) {
      return Fail("a second Submit of a " + Describe(end) + " job answered " + Describe(*again) +
                  ": it must return the job's status and start nothing");
    }
    if (!probe.Virtual(l)) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      if (int n = Lines(mark); n != 1) return Fail("the job started " + std::to_string(n) + " times");
    }
    auto st = l.Poll(spec.name);
    if (!st.ok() || st->state != end.state || st->start_time != end.start_time || st->end_time != end.end_time) {
      return Fail("after a second Submit, Poll no longer reports the same finished job");
    }
    return std::string("the same job answered; it started once");
  });
  s.Run("restart", [&] {
    if (!finished) return Skip("run.success did not finish its job");
    auto fresh = probe.Create();
    if (!fresh.ok()) return Fail("a second launcher could not be created: " + fresh.status().message());
    auto st = (*fresh)->Poll(spec.name);
    if (!st.ok()) return Fail("a fresh launcher's Poll failed: " + st.status().message());
    if (st->state != end.state || st->start_time != end.start_time || st->end_time != end.end_time) {
      return Fail("a fresh launcher (a restarted engine) sees the job as " + Describe(*st) +
                  ", not the " + Describe(end) + " job with the same times");
    }
    auto log = (*fresh)->ReadLog(spec.name);
    if (!log.ok() || *log != log_text) return Fail("a fresh launcher reads a different log");
    auto again = (*fresh)->Submit(spec);
    if (!again.ok()) return Fail("a fresh launcher's Submit of the finished job failed: " + again.status().message());
    if (!probe.Virtual(l)) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      if (int n = Lines(mark); n != 1) return Fail("a fresh launcher started the job again (" + std::to_string(n) + " starts)");
    }
    return std::string("found by name with the same status, times and log; not started again");
  });
  s.Run("cancel.finished", [&] {
    if (!finished) return Skip("run.success did not finish its job");
    Status c = l.Cancel(spec.name);
    if (!c.ok()) return Fail("Cancel of a finished job failed: " + c.message() + " (it must be a no-op)");
    auto st = l.Poll(spec.name);
    if (!st.ok() || st->state != end.state || st->end_time != end.end_time) {
      return Fail("Cancel changed a finished job");
    }
    return std::string("a no-op");
  });
}

// Jobs that do not end well: a non-zero exit, one cancelled while it runs (its log read first),
// one stopped by its time limit.
void AddFailureClauses(ConformanceSuite& s, Launcher& l, Probe& probe) {
  const ClusterInfo cluster = l.Cluster();
  const bool virtual_time = probe.Virtual(l);
  const std::string no_process = "the launcher runs in virtual time (its jobs end when polled)";
  s.Run("run.failure", [&] {
    if (virtual_time) return Skip(no_process);
    JobSpec spec = probe.Job("fail", "echo 'attune probe failing'; exit 3", probe.GenerousLimit(cluster), cluster);
    auto submitted = l.Submit(spec);
    if (!submitted.ok()) return Fail("Submit failed: " + submitted.status().message());
    auto st = probe.WaitTerminal(l, spec.name);
    if (!st.ok()) return Fail("Poll failed: " + st.status().message());
    if (st->state != JobState::kFailed) return Fail("a job that exits 3 ended " + Describe(*st) + ", not failed");
    if (st->exit_code && *st->exit_code != 3) return Fail("exit code " + std::to_string(*st->exit_code) + ", not 3");
    return Describe(*st);
  });
  bool running = false;
  // Sleeps long enough for every wait of the suite, not much longer: a launcher that cannot cancel
  // leaves it behind.
  const std::string sleep = fmt::format("exec sleep {:.0f}", probe.options().job_timeout_s + 60);
  JobSpec sleeper = probe.Job("cancel", "echo 'attune probe running'; " + sleep, probe.GenerousLimit(cluster), cluster);
  s.Run("log.running", [&] {
    if (virtual_time) return Skip(no_process);
    auto submitted = l.Submit(sleeper);
    if (!submitted.ok()) return Fail("Submit failed: " + submitted.status().message());
    std::string text;
    auto st = probe.WaitFor(l, sleeper.name, [&](const JobStatus& js) {
      if (IsTerminal(js.state)) return true;
      if (js.state != JobState::kRunning) return false;
      auto log = l.ReadLog(sleeper.name);
      text = log.ok() ? *log : "";
      return text.find("attune probe running") != std::string::npos;
    }, probe.options().job_timeout_s);
    if (!st.ok()) return Fail("Poll failed: " + st.status().message());
    if (st->state != JobState::kRunning) return Fail("the sleeping job is " + Describe(*st) + ", not running");
    running = true;
    if (text.find("attune probe running") == std::string::npos) {
      return Fail("while the job runs, ReadLog does not show what it printed (the adaptive stop and "
                  "`attune status` read logs of running jobs)");
    }
    return std::string("running, and its log so far is readable");
  });
  s.Run("cancel.running", [&] {
    if (virtual_time) return Skip(no_process);
    if (!running) return Skip("log.running did not get its job running");
    const auto asked = Clock::now();
    Status c = l.Cancel(sleeper.name);
    if (!c.ok()) return Fail("Cancel failed: " + c.message());
    const double wait = probe.options().job_timeout_s;
    auto st = probe.WaitFor(l, sleeper.name, [](const JobStatus& js) { return IsTerminal(js.state); }, wait);
    if (!st.ok()) return Fail("Poll failed: " + st.status().message());
    if (!IsTerminal(st->state)) return Fail("still " + Describe(*st) + fmt::format(" {:g} s after Cancel", wait));
    if (st->state == JobState::kSucceeded) return Fail("a cancelled job reports success");
    if (!st->end_time) return Fail("a cancelled job has no end time: the engine cannot charge what it ran");
    if (Status again = l.Cancel(sleeper.name); !again.ok()) return Fail("a second Cancel failed: " + again.message());
    const double took = std::chrono::duration<double>(Clock::now() - asked).count();
    return Describe(*st) + fmt::format(" {:.1f} s after Cancel; a second Cancel is a no-op", took);
  });
  s.Run("time_limit", [&] {
    if (virtual_time) return Skip(no_process);
    const double limit = probe.options().time_limit_s;
    JobSpec spec = probe.Job("limit", "echo 'attune probe over its limit'; " + sleep, limit, cluster);
    auto submitted = l.Submit(spec);
    if (!submitted.ok()) return Fail("Submit failed: " + submitted.status().message());
    auto st = probe.WaitFor(l, spec.name, [](const JobStatus& js) { return IsTerminal(js.state); },
                            limit + probe.options().job_timeout_s);
    if (!st.ok()) return Fail("Poll failed: " + st.status().message());
    if (!IsTerminal(st->state)) {
      (void)l.Cancel(spec.name);
      return Fail(fmt::format("a job with a {:g} s limit still runs: ", limit) + Describe(*st));
    }
    if (st->state != JobState::kTimedOut) {
      return Fail("a job stopped by its limit ended " + Describe(*st) + ", not timed_out (the engine then misreads why)");
    }
    if (st->start_time && st->end_time) {
      return Describe(*st) + fmt::format(" after {:.1f} s (limit {:g} s; schedulers round limits up)",
                                         *st->end_time - *st->start_time, limit);
    }
    return Describe(*st);
  });
}

}  // namespace

int RunLauncherCheck(const std::vector<std::string>& args, Env& env) {
  ArgParser p("launcher check NAME [--with JSON|@FILE] [--stack S --recipe FILE] [--dir DIR] [--json]",
              "The launcher conformance suite: loads the launcher plugin through the plugin host with "
              "the given options (the workflow's launcher.with) and runs small real jobs through it: "
              "Poll of a name never submitted is unknown; a job that exits 0 succeeds with start and "
              "end times, devices and its log; a second Submit and a fresh launcher (a restarted "
              "engine) find it by name without starting it again; Cancel of a finished job is a "
              "no-op; a job that exits 3 fails with exit code 3; a running job's log is readable; "
              "Cancel stops a running job; the time limit stops a job as timed_out. A launcher in "
              "virtual time (sim) models recipes: give it --stack and --recipe, and the clauses that "
              "need a real process are skipped. Exit 0 when every clause holds, 1 when one fails.");
  p.Options()("with", po::value<std::string>()->default_value("{}"), "launcher options as JSON, or @FILE")(
      "stack", po::value<std::string>(), "the stack that renders --recipe")(
      "recipe", po::value<std::string>(), "a recipe the launcher can run (required in virtual time)")(
      "dir", po::value<std::string>(), "keep the launcher's state and the jobs' folders here (default: a temporary folder, removed)")(
      "job-timeout", po::value<double>()->default_value(300), "seconds a probe job may take (queueing included)")(
      "time-limit", po::value<double>()->default_value(5), "the time limit of the job that must be stopped by it")(
      "json", "machine-readable output")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("name");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  const bool as_json = p.Has("json");
  auto error = [&](const Status& s) { return ReportError(env, "launcher check", s, as_json); };
  if (!p.Has("name")) return error(Status::InvalidArgument("need NAME, a launcher plugin"));
  CheckOptions o;
  o.name = p.Get("name");
  auto with = ReadWithOption(p.Get("with"), "launcher");
  if (!with.ok()) return error(with.status());
  o.with = *with;
  o.job_timeout_s = p.vm()["job-timeout"].as<double>();
  o.time_limit_s = p.vm()["time-limit"].as<double>();
  if (!(o.job_timeout_s > 0) || !(o.time_limit_s > 0)) {
    return error(Status::InvalidArgument("--job-timeout and --time-limit must be > 0 seconds"));
  }
  auto host = LoadPlugins(env, p.GetList("plugin-path"));
  if (!host.ok()) return error(host.status());
  if (p.Has("recipe") != p.Has("stack")) return error(Status::InvalidArgument("--stack and --recipe go together"));
  if (p.Has("recipe")) {
    auto recipe = LoadRecipeFile(p.Get("recipe"));
    if (!recipe.ok()) return error(recipe.status());
    auto stack = (*host)->CreateStack(p.Get("stack"), CliPluginContext(env));
    if (!stack.ok()) return error(stack.status());
    auto launch = (*stack)->RenderLaunch(*recipe);
    if (!launch.ok()) return error(launch.status().WithContext("rendering " + p.Get("recipe")));
    o.recipe = *recipe;
    o.recipe_launch = *launch;
    o.stack = std::move(*stack);
  }
  auto dir = CheckDir::Make(p.Has("dir") ? p.Get("dir") : "", "launcher");
  if (!dir.ok()) return error(dir.status());
  o.dir = (*dir)->path();
  Probe probe(**host, env, o);
  auto launcher = probe.Create();
  if (!launcher.ok()) return error(launcher.status());
  if ((*launcher)->Cluster().virtual_time && !o.recipe) {
    return error(Status::InvalidArgument("launcher '" + o.name + "' runs in virtual time and models recipes: "
                                         "give it one with --stack NAME --recipe FILE"));
  }
  ConformanceSuite suite;
  AddStaticClauses(suite, **launcher, probe);
  AddRunClauses(suite, **launcher, probe);
  AddFailureClauses(suite, **launcher, probe);
  const int rc = ReportSuite(env, "launcher", o.name, suite, as_json);
  if (!(*dir)->temporary() && !as_json) *env.out << "state and job folders kept in " << o.dir << "\n";
  return rc;
}

}  // namespace attune::cli
