#include "steps/job_driver.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "api/placement.h"
#include "base/crash_point.h"
#include "campaign/events.h"
#include "gate/static_gate.h"
#include "measure/measure.h"

namespace attune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string JobDir(const RunContext& ctx, const std::string& name) {
  return (fs::path(ctx.log->dir()) / "jobs" / name).string();
}

}  // namespace

std::string TraceDirOf(const RunContext& ctx, const std::string& name) {
  return (fs::absolute(fs::path(JobDir(ctx, name))) / "traces").lexically_normal().string();
}

namespace {

std::string LogPath(const RunContext& ctx, const std::string& name) {
  return (fs::path(JobDir(ctx, name)) / "job.log").string();
}

Result<JobSpec> BuildSpec(RunContext& ctx, const JobRecord& job) {
  JobSpec spec;
  spec.name = job.name;
  const std::string prefix = ctx.state.campaign_id + "-";
  spec.key = job.name.rfind(prefix, 0) == 0 ? job.name.substr(prefix.size()) : job.name;
  spec.job_dir = JobDir(ctx, job.name);
  spec.log_path = LogPath(ctx, job.name);
  std::error_code ec;
  fs::create_directories(spec.job_dir, ec);
  if (ec) return Status::IoError("cannot create job directory " + spec.job_dir + ": " + ec.message());
  // The recipe with the benchmark changes recorded at the request (run-control settings only); the
  // recipe compared and shipped stays the candidate's.
  spec.recipe = job.run_recipe;
  ATTUNE_ASSIGN_OR_RETURN(spec.launch, ctx.stack->RenderLaunch(spec.recipe));
  spec.nodes = job.nodes;
  spec.devices = job.devices;
  spec.time_limit_s = job.time_limit_s;
  spec.options = ctx.workflow.launcher.with;
  spec.stack = ctx.stack.get();
  return spec;
}

// A job that never started (the stack could not render it, the launcher refused it) finishes at
// once with a launch or config error and costs nothing.
Status FinishUnstarted(RunContext& ctx, const JobRecord& job, FailureKind kind, const std::string& why) {
  Failure f;
  f.kind = kind;
  f.signature = kind == FailureKind::kConfigError ? "engine.render_failed" : "engine.submit_refused";
  f.evidence = why;
  f.hint = "the job was not started; no GPU time was charged";
  JobStatus st;
  st.name = job.name;
  st.state = JobState::kFailed;
  st.reason = why;
  return ctx.Append({NewEvent{events::kJobFinished,
                              json{{"job", job.name}, {"status", JobStatusToJson(st)},
                                   {"charged_gpu_hours", 0.0}, {"measurement", nullptr},
                                   {"failure", FailureToJson(f)}, {"diagnosis", json::array()},
                                   {"log_path", LogPath(ctx, job.name)},
                                   {"cancelled_by_engine", false}}}});
}

// Failures of the machinery around a job, not of its recipe: the campaign directory's disk, a
// scheduler that is down or too slow to answer. Recording them as the job's failure would rank a
// good candidate as failed (a full disk once failed the baseline and ended a campaign), so the
// campaign stops with the error instead, the job stays requested, and a resumed campaign submits
// it then. Launchers report what the recipe got wrong as InvalidArgument or FailedPrecondition.
bool IsInfrastructureError(const Status& s) {
  return s.code() == StatusCode::kIoError || s.code() == StatusCode::kUnavailable ||
         s.code() == StatusCode::kDeadlineExceeded;
}

// The job's log text up to its last complete line.
std::string_view CompleteLines(std::string_view text) {
  const size_t nl = text.rfind('\n');
  return nl == std::string_view::npos ? std::string_view() : text.substr(0, nl + 1);
}

// What a log prefix (complete lines) measures when it already pins the step time down: the
// stack's triage finds no failure in it as a run that ended well, the first losses the paired-loss
// check compares are logged, and the iterations the stack measured are steady (CheckSteady with the
// adaptive stop's minimum, to `target`). The adaptive stop decides on it while a job runs, to its
// precision; a job that its time limit ended is measured by it afterwards, to TimeLimitTarget.
struct SteadyLog {
  LogParse parse;
  Measurement measurement;
  SteadyCheck check;
};
std::optional<SteadyLog> SteadyPrefix(RunContext& ctx, const JobRecord& job, const std::string& prefix,
                                      double target) {
  if (prefix.empty()) return std::nullopt;
  const CampaignSettings& set = ctx.state.settings;
  SteadyLog out;
  out.parse = ctx.stack->ParseLog(prefix);
  if (out.parse.iterations.empty()) return std::nullopt;
  if (ctx.stack->Triage(prefix, JobEnd{0, JobStateName(JobState::kSucceeded), 0.0}).kind !=
      FailureKind::kNone) {
    return std::nullopt;
  }
  auto m = ctx.stack->Measure(out.parse, job.run_recipe);
  if (!m.ok() || static_cast<int>(m->first_losses.size()) < set.paired_losses) return std::nullopt;
  out.measurement = *m;
  // The iterations the stack measured are the last iterations_used records.
  std::vector<double> steps;
  const size_t used = std::min<size_t>(m->iterations_used, out.parse.iterations.size());
  for (size_t i = out.parse.iterations.size() - used; i < out.parse.iterations.size(); ++i) {
    steps.push_back(out.parse.iterations[i].step_time_ms / 1000.0);
  }
  out.check = CheckSteady(steps, set.early_stop_min_iterations, target);
  if (!out.check.stable) return std::nullopt;
  return out;
}

// The precision a job its time limit ended must reach to be measured: the adaptive stop's, or a
// third of the noise band when that is looser (a standard error of 1% and a drift between the
// halves within the 3% band). The adaptive stop can wait for more iterations; a job the limit
// ended cannot: at the stop's 0.5% one of eleven baseline runs of a scenario with 1.5% noise
// failed on drift (1.9% against 1.5%).
double TimeLimitTarget(const CampaignSettings& set) {
  return std::max(set.EarlyStopRelativeError(), set.noise_band / 3);
}

// For a run its time limit cut short while it made progress: what the whole run would have needed
// (the time it ran plus its remaining iterations at its recent step time) and the limit to ask
// for, with a quarter's margin. Empty when the log does not say how far it got or how far it had
// to go.
std::string TimeLimitAdvice(RunContext& ctx, const JobRecord& job, const LogParse& parse, double ran_s) {
  if (parse.iterations.size() < 2 || !(ran_s > 0)) return "";
  const IterationSample& last = parse.iterations.back();
  int64_t planned = ctx.stack->BenchmarkLength(job.run_recipe).value_or(0);
  if (planned <= 0) planned = last.train_iters;
  if (planned <= last.iteration) return "";
  std::vector<double> recent;  // the last ten steps, the first (warm-up) left out
  for (size_t i = std::max<size_t>(1, parse.iterations.size() - std::min<size_t>(10, parse.iterations.size()));
       i < parse.iterations.size(); ++i) {
    recent.push_back(parse.iterations[i].step_time_ms / 1000.0);
  }
  const double step_s = Median(recent);
  if (!(step_s > 0)) return "";
  const double needed_s = ran_s + static_cast<double>(planned - last.iteration) * step_s;
  const double ask_s = std::ceil(1.25 * needed_s / 60.0) * 60.0;
  return fmt::format(
      "it logged iteration {} of {} in {:.0f} s at about {:.1f} s per iteration, so the whole run needs "
      "about {:.0f} s: set `budget.job_time_limit_s` to at least {:.0f}, or shorten the recipe's "
      "benchmark run",
      last.iteration, planned, ran_s, step_s, needed_s, ask_s);
}

// Reads and judges a terminal job: measurement when it succeeded and measured, else a failure.
// A log that cannot be read for an infrastructure reason (I/O error, launcher unavailable) is an
// error, not an empty log: judging it would record a good run as failed for good.
// A job the engine cancelled (JobCancelRequested) does not count as a result. A job stopped early
// (JobStopRequested) is judged on the log as it stood when the stop was decided, as a run that
// ended well: how the launcher ended it afterwards is the engine's doing. A job its time limit
// ended whose log had already pinned the step time down (SteadyPrefix) is measured from that log
// (`measured_at_time_limit`): the iterations it ran are as good as an early-stopped job's, and
// recording a time-limit failure would throw away what was paid for.
Result<json> ResultData(RunContext& ctx, const JobRecord& job, const JobStatus& st) {
  const bool cancelled = job.cancel_requested;
  auto log_text = ctx.launcher->ReadLog(job.name);
  if (!log_text.ok() && IsInfrastructureError(log_text.status())) {
    return log_text.status().WithContext("reading the log of job " + job.name);
  }
  std::string text = log_text.ok() ? *log_text : "";
  const double ran_s = st.start_time && st.end_time ? *st.end_time - *st.start_time : 0.0;
  JobEnd end{st.exit_code.value_or(-1), JobStateName(st.state), ran_s};
  const bool stopped_early = job.stop_requested && !cancelled;
  if (stopped_early) {
    if (text.size() > static_cast<size_t>(job.stop_log_bytes)) text.resize(job.stop_log_bytes);
    end = JobEnd{0, JobStateName(JobState::kSucceeded), ran_s};
  }
  LogParse parse = ctx.stack->ParseLog(text);
  Failure failure = ctx.stack->Triage(text, end);
  json measurement = nullptr, diagnosis = json::array();
  if ((st.state == JobState::kSucceeded || stopped_early) && failure.kind == FailureKind::kNone) {
    auto m = ctx.stack->Measure(parse, job.run_recipe);
    if (m.ok()) {
      measurement = MeasurementToJson(*m);
      for (const auto& d : ctx.stack->Diagnose(job.run_recipe, *m, parse, ctx.state.cluster)) {
        diagnosis.push_back(DiagnosisToJson(d));
      }
    } else {
      failure.kind = FailureKind::kUnknown;
      failure.signature = "engine.no_measurement";
      failure.evidence = m.status().message();
      failure.hint = "the job exited 0 but its log holds too few iterations to measure";
    }
  } else if (failure.kind == FailureKind::kNone) {
    failure = FailureFromState(st);
  }
  bool measured_at_time_limit = false;
  // Only a job that was still making progress when its limit struck: a log that stopped well
  // before the limit is a hang (the stack's triage says so), and its steady start says nothing
  // about a recipe that then deadlocks.
  if (!cancelled && !stopped_early && st.state == JobState::kTimedOut &&
      failure.kind == FailureKind::kTimeLimit) {
    if (auto steady = SteadyPrefix(ctx, job, std::string(CompleteLines(text)), TimeLimitTarget(ctx.state.settings))) {
      measurement = MeasurementToJson(steady->measurement);
      diagnosis = json::array();
      for (const auto& d : ctx.stack->Diagnose(job.run_recipe, steady->measurement, steady->parse,
                                               ctx.state.cluster)) {
        diagnosis.push_back(DiagnosisToJson(d));
      }
      failure = Failure{};
      measured_at_time_limit = true;
    }
  }
  if (!measured_at_time_limit && failure.kind == FailureKind::kTimeLimit) {
    const std::string advice = TimeLimitAdvice(ctx, job, parse, ran_s);
    if (!advice.empty()) failure.hint = failure.hint.empty() ? advice : failure.hint + "; " + advice;
  }
  if (cancelled) failure.kind = FailureKind::kCancelled;
  json data{{"job", job.name},
            {"status", JobStatusToJson(st)},
            {"charged_gpu_hours", st.DeviceHours()},
            {"measurement", measurement},
            {"failure", failure.kind == FailureKind::kNone ? json() : FailureToJson(failure)},
            {"diagnosis", diagnosis},
            {"log_path", LogPath(ctx, job.name)},
            {"cancelled_by_engine", cancelled},
            {"stopped_early", stopped_early}};
  if (measured_at_time_limit) data["measured_at_time_limit"] = true;
  return data;
}

// Submits when the launcher does not know the job; records JobSubmitted once.
Status EnsureSubmitted(RunContext& ctx, const JobRecord& job, bool* finished_unstarted) {
  ATTUNE_ASSIGN_OR_RETURN(JobStatus st, ctx.launcher->Poll(job.name));
  if (st.state == JobState::kUnknown) {
    auto spec = BuildSpec(ctx, job);
    if (!spec.ok()) {
      if (IsInfrastructureError(spec.status())) return spec.status();
      *finished_unstarted = true;
      return FinishUnstarted(ctx, job, FailureKind::kConfigError, spec.status().message());
    }
    CrashPoint("job.requested");
    auto submitted = ctx.launcher->Submit(*spec);
    if (!submitted.ok()) {
      if (IsInfrastructureError(submitted.status())) return submitted.status();
      *finished_unstarted = true;
      return FinishUnstarted(ctx, job, FailureKind::kLaunchError, submitted.status().message());
    }
    st = *submitted;
  }
  if (job.submitted) return Status::Ok();
  CrashPoint("job.submitted");
  return ctx.Append({NewEvent{events::kJobSubmitted,
                              json{{"job", job.name}, {"launcher_job_id", st.launcher_job_id},
                                   {"status", JobStatusToJson(st)}}}});
}

// A cancellation the launcher could not confirm (the job did not stop in time, the launcher
// failed): said on stderr, and the job stays in flight. The stop goes on, so that the pause is
// still recorded (tests/integration/signals); a resumed campaign reconciles the job by name.
Status CancelUnconfirmed(RunContext& ctx, const std::string& name, const Status& why) {
  *ctx.options->err << "attune run: the cancellation of job " << name << " is not confirmed ("
                    << why.message() << "); it stays in flight and is reconciled when the campaign "
                    << "resumes\n";
  return Status::Ok();
}

// Cancels a running job on request and waits (bounded) for the launcher to confirm.
Status CancelAndRecord(RunContext& ctx, const std::string& name) {
  // Recorded first, so that a confirmation that comes only after a crash or an unconfirmed stop
  // is still known to be the engine's cancellation (it must not count as the job's result).
  if (const JobRecord* job = ctx.state.FindJob(name); job && !job->cancel_requested) {
    ATTUNE_RETURN_IF_ERROR(ctx.Append({NewEvent{events::kJobCancelRequested, json{{"job", name}}}}));
    CrashPoint("job.cancel_requested");
  }
  if (Status asked = ctx.launcher->Cancel(name); !asked.ok()) return CancelUnconfirmed(ctx, name, asked);
  for (int i = 0; i < 100; ++i) {
    Result<JobStatus> st = ctx.launcher->Poll(name);
    if (!st.ok()) return CancelUnconfirmed(ctx, name, st.status());
    if (IsTerminal(st->state)) {
      CrashPoint("job.cancel_confirmed");
      const JobRecord* job = ctx.state.FindJob(name);
      ATTUNE_ASSIGN_OR_RETURN(json data, ResultData(ctx, *job, *st));
      return ctx.Append({NewEvent{events::kJobFinished, std::move(data)}});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return CancelUnconfirmed(ctx, name, Status::DeadlineExceeded("it did not stop within 10 s"));
}

// A job the engine cancelled (JobCancelRequested) or stopped early (JobStopRequested) whose end is
// not recorded — just asked, or not yet confirmed when the engine stopped or crashed: asks the
// launcher again (Cancel is idempotent), waits for the end and records it; ResultData judges it
// by the request. It is never submitted again; a job the launcher no longer knows ended without
// launcher times (charged nothing). The first 10 s are polled closely, also while the campaign
// is being stopped; after that a stop leaves the job in flight for the resumed campaign.
Status FinishEndedByEngine(RunContext& ctx, const std::string& name) {
  const char* what = ctx.state.FindJob(name)->stop_requested ? "stop" : "cancel";
  if (Status asked = ctx.launcher->Cancel(name); !asked.ok()) {
    ctx.Say("job " + name + ": asking the launcher to " + what + " it failed (" + asked.message() +
            "); waiting for its end");
  }
  for (int polls = 0;; ++polls) {
    ATTUNE_ASSIGN_OR_RETURN(JobStatus st, ctx.launcher->Poll(name));
    if (st.state == JobState::kUnknown) {
      st.name = name;
      st.state = JobState::kCancelled;
      st.reason = std::string("asked by the engine to ") + what + "; the launcher no longer knows the job";
    }
    if (IsTerminal(st.state)) {
      CrashPoint("job.ended");
      ATTUNE_ASSIGN_OR_RETURN(json data, ResultData(ctx, *ctx.state.FindJob(name), st));
      return ctx.Append({NewEvent{events::kJobFinished, std::move(data)}});
    }
    if (polls < 100) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (ctx.StopRequested()) return StopStatus();
    ctx.SleepUnlessStopped(ctx.launcher->PollIntervalSeconds());
  }
}

// The adaptive stop (measure.early_stop) of a running job: reads its log so far and, when the
// steady iterations pin the median step time down (CheckSteady) with no failure in sight and the
// first losses the paired-loss check compares already logged, records JobStopRequested (with the
// length of the log the decision was made on) and stops the job. Returns whether it stopped it.
// A log that cannot be read now is simply read again at the next check.
Result<bool> MaybeStopEarly(RunContext& ctx, const JobRecord& job) {
  const std::string name = job.name;  // `job` lives in ctx.state, which Append replaces
  auto log_text = ctx.launcher->ReadLog(job.name);
  if (!log_text.ok()) return false;
  const std::string prefix(CompleteLines(*log_text));
  const std::optional<SteadyLog> steady = SteadyPrefix(ctx, job, prefix, ctx.state.settings.EarlyStopRelativeError());
  if (!steady) return false;
  const LogParse& parse = steady->parse;
  const SteadyCheck& check = steady->check;
  const double target = ctx.state.settings.EarlyStopRelativeError();
  const IterationSample& last = parse.iterations.back();
  const std::optional<int64_t> planned = ctx.stack->BenchmarkLength(job.run_recipe);
  ATTUNE_RETURN_IF_ERROR(ctx.Append(
      {NewEvent{events::kJobStopRequested,
                json{{"job", name},
                     {"reason", "steady"},
                     {"log_bytes", static_cast<int64_t>(prefix.size())},
                     {"iterations_logged", static_cast<int64_t>(parse.iterations.size())},
                     {"last_iteration", last.iteration},
                     {"planned_iterations", planned ? json(*planned) : json()},
                     {"iterations_used", check.iterations},
                     {"median_step_time_s", check.median_s},
                     {"relative_error", check.relative_error},
                     {"target", target},
                     {"drift", check.drift}}}}));
  CrashPoint("job.stop_requested");
  ATTUNE_RETURN_IF_ERROR(FinishEndedByEngine(ctx, name));
  return true;
}

}  // namespace

std::string JobName(const std::string& campaign_id, const JobAsk& ask, int attempt) {
  if (ask.purpose == JobPurpose::kVerify) {
    return fmt::format("{}-verify-{}-p{}-{}", campaign_id, ask.candidate, ask.pair, attempt);
  }
  if (ask.purpose == JobPurpose::kProfile) {
    return fmt::format("{}-profile-{}-{}", campaign_id, ask.candidate, attempt);
  }
  return fmt::format("{}-{}-{}", campaign_id, ask.candidate, attempt);
}

int JobDevices(const RunContext& ctx, const Recipe& recipe) {
  return std::max(1, ctx.stack->Devices(recipe));
}

int JobNodes(const RunContext& ctx, const Recipe& recipe) {
  return NodesFor(recipe, JobDevices(ctx, recipe), ctx.state.cluster.devices_per_node);
}

double JobReservation(const RunContext& ctx, const Recipe& recipe) {
  return ctx.state.ReservationFor(JobDevices(ctx, recipe));
}

bool CanAfford(const RunContext& ctx, const Recipe& recipe) {
  return ctx.state.ledger.Fits(JobReservation(ctx, recipe));
}

Result<std::optional<std::string>> TryRequestJob(RunContext& ctx, const JobAsk& ask) {
  const Recipe* recipe = ctx.state.RecipeOf(ask.candidate);
  if (!recipe) return Status::Internal("no recipe for '" + ask.candidate + "'");
  const double reservation = JobReservation(ctx, *recipe);
  if (!ctx.state.ledger.Fits(reservation)) return std::optional<std::string>();
  const int attempt = ctx.state.NextAttempt(ask.candidate, ask.purpose, ask.pair);
  const std::string name = JobName(ctx.state.campaign_id, ask, attempt);
  // The stack's benchmark form, decided once and recorded: a replay (or a newer plugin) launches
  // exactly what was decided here.
  ATTUNE_ASSIGN_OR_RETURN(Recipe run, ctx.stack->BenchmarkForm(*recipe));
  std::string trace_dir;
  if (ask.purpose == JobPurpose::kProfile) {
    trace_dir = TraceDirOf(ctx, name);
    ATTUNE_ASSIGN_OR_RETURN(run, ctx.stack->ProfileForm(run, trace_dir));
  }
  ATTUNE_RETURN_IF_ERROR(CheckBenchmarkForm(*ctx.stack, *recipe, run));
  json data{{"job", name},
            {"candidate", ask.candidate},
            {"purpose", JobPurposeName(ask.purpose)},
            {"step", ask.step},
            {"attempt", attempt},
            {"pair", ask.pair},
            {"recipe", RecipeToJson(*recipe)},
            {"benchmark_changes", ChangesToJson(Diff(*recipe, run))},
            {"nodes", JobNodes(ctx, *recipe)},
            {"devices", JobDevices(ctx, *recipe)},
            {"time_limit_s", ctx.state.TimeLimitForNextJob()},
            {"reserved_gpu_hours", reservation}};
  if (!trace_dir.empty()) data["trace_dir"] = trace_dir;
  ATTUNE_RETURN_IF_ERROR(ctx.Append({NewEvent{events::kJobRequested, data}}));
  return std::optional<std::string>(name);
}

// `name` is a copy: callers often name the job from ctx.state, which every Append replaces.
Status DriveJob(RunContext& ctx, std::string name) {
  const JobRecord* job = ctx.state.FindJob(name);
  if (!job) return Status::Internal("DriveJob: unknown job " + name);
  if (job->finished) return Status::Ok();
  if (job->cancel_requested || job->stop_requested) return FinishEndedByEngine(ctx, name);
  bool finished_unstarted = false;
  ATTUNE_RETURN_IF_ERROR(EnsureSubmitted(ctx, *job, &finished_unstarted));
  if (finished_unstarted) return Status::Ok();
  using Clock = std::chrono::steady_clock;
  const auto check_every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(ctx.state.settings.early_stop_check_every_s));
  Clock::time_point next_check = Clock::now() + check_every;
  while (true) {
    ATTUNE_ASSIGN_OR_RETURN(JobStatus st, ctx.launcher->Poll(name));
    job = ctx.state.FindJob(name);
    if (IsTerminal(st.state)) {
      CrashPoint("job.ended");
      ATTUNE_ASSIGN_OR_RETURN(json data, ResultData(ctx, *job, st));
      return ctx.Append({NewEvent{events::kJobFinished, std::move(data)}});
    }
    // A profiled job runs to its end: its traces are written when the profiling window closes.
    if (ctx.state.settings.early_stop && job->purpose != JobPurpose::kProfile &&
        st.state == JobState::kRunning && Clock::now() >= next_check) {
      next_check = Clock::now() + check_every;
      ATTUNE_ASSIGN_OR_RETURN(bool stopped, MaybeStopEarly(ctx, *job));
      if (stopped) return Status::Ok();
    }
    if (st.state == JobState::kUnknown) {
      // The launcher lost a submitted job: it did not run, so submitting again is safe.
      ATTUNE_RETURN_IF_ERROR(EnsureSubmitted(ctx, *job, &finished_unstarted));
      if (finished_unstarted) return Status::Ok();
      continue;
    }
    if (ctx.StopRequested()) {
      if (ctx.options->on_stop == OnStop::kCancel) ATTUNE_RETURN_IF_ERROR(CancelAndRecord(ctx, name));
      return StopStatus();
    }
    ctx.SleepUnlessStopped(ctx.launcher->PollIntervalSeconds());
  }
}

Status DriveInFlightJobs(RunContext& ctx) {
  std::vector<std::string> names;
  for (const auto* j : ctx.state.InFlightJobs()) names.push_back(j->name);
  for (const auto& name : names) {
    ctx.Say("reconciling job " + name);
    ATTUNE_RETURN_IF_ERROR(DriveJob(ctx, name));
  }
  return Status::Ok();
}

Failure FailureFromState(const JobStatus& st) {
  Failure f;
  f.evidence = st.reason.empty() ? std::string("launcher state: ") + JobStateName(st.state) : st.reason;
  switch (st.state) {
    case JobState::kTimedOut: f.kind = FailureKind::kTimeLimit; break;
    case JobState::kCancelled: f.kind = FailureKind::kCancelled; break;
    case JobState::kNodeFailure:
    case JobState::kPreempted:
      f.kind = FailureKind::kNodeFailure;
      f.infrastructure = true;
      break;
    case JobState::kOutOfMemory: f.kind = FailureKind::kHostOom; break;
    default: f.kind = FailureKind::kUnknown; break;
  }
  f.signature = std::string("launcher.") + JobStateName(st.state);
  return f;
}

}  // namespace attune
