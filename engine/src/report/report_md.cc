// REPORT.md: what to ship (recipe and launch), how much faster it is and how sure we are, why it
// is the same training objective, and what was tried on the way.
#include <fmt/format.h>

#include "campaign/events.h"
#include "plugin/plugin_host.h"
#include "report/report.h"
#include "report/report_util.h"

namespace attune {
namespace ri = report_internal;

namespace {

// The campaign never measured its baseline: nothing was compared, so nothing can be recommended.
std::string BaselineFailedSection(const CampaignState& state) {
  std::string out = "## Result\n\n";
  const auto jobs = state.JobsOf(events::kBaselineId, JobPurpose::kBaseline);
  double spent = 0;
  for (const JobRecord* j : jobs) spent += j->charged_gpu_hours;
  out += fmt::format("**The baseline was never measured**: {} baseline run{} ended without a "
                     "measurement, so no candidate could be compared with it and nothing here is "
                     "a recommendation. The baseline runs spent {} GPU-hours.\n\n",
                     jobs.size(), jobs.size() == 1 ? "" : "s", ri::Fixed(spent, 3));
  const JobRecord* last = nullptr;
  for (const JobRecord* j : jobs) {
    if (j->finished && j->failure) last = j;
  }
  if (last) {
    const Failure& f = *last->failure;
    out += fmt::format("Why (job `{}`): **{}**", last->name, FailureKindName(f.kind));
    if (!f.evidence.empty()) {
      out += fmt::format(", from line {} of its log:\n\n```\n{}\n```\n\n", f.line, f.evidence);
    } else {
      out += ".\n\n";
    }
    if (!f.hint.empty()) out += "What to do: " + f.hint + ". ";
  }
  if (last && last->failure->kind == FailureKind::kTimeLimit) {
    // The recipe ran; the workflow's limit was too short for it (the job driver's hint says by
    // how much when the log tells).
    out += "Then start a new campaign with a longer `budget.job_time_limit_s` or a shorter "
           "benchmark run.\n\n";
  } else {
    out += "Fix the recipe so that it runs as it is (`attune log triage` on the job's log shows the "
           "evidence), then start a new campaign.\n\n";
  }
  return out;
}

std::string ResultSection(const CampaignState& state) {
  if (!state.MeasurementOf(events::kBaselineId)) return BaselineFailedSection(state);
  std::string out = "## Result\n\n";
  const Recipe* leader = state.RecipeOf(state.leader_id);
  if (state.leader_id == events::kBaselineId || !leader) {
    out += "No candidate beat the baseline by more than the noise band; ship the baseline.\n\n";
  } else {
    out += fmt::format("Ship **{}**. Changes against the baseline:\n\n", state.leader_id);
    for (const auto& c : Diff(state.baseline, *leader)) out += "- `" + DescribeChange(c) + "`\n";
    out += "\n";
  }
  if (auto q = QuoteSpeedup(state)) {
    if (q->pairs > 0) {
      out += fmt::format("Measured speedup: **{}** (median of {} runs made side by side with the "
                         "baseline, alternating; spread {} to {}).\n\n",
                         ri::Times(q->median), q->pairs, ri::Times(q->min), ri::Times(q->max));
      if (const std::string caveat = q->Caveat(); !caveat.empty()) {
        out += fmt::format(
            "**The speedup is {}.** The runs vary more on this cluster than the "
            "difference between the two recipes, so this number may not hold. "
            "Before relying on it, run the campaign again with more `repeats` on its "
            "`verify` step, or on a quieter machine.\n\n",
            caveat);
      }
    } else {
      out += fmt::format("Measured speedup: **{}** (from tuning runs; not re-measured side by "
                         "side).\n\n", ri::Times(q->median));
    }
  }
  return out;
}

std::string ShipSection(const CampaignState& state, const std::string& launch_command) {
  const Recipe* leader = state.RecipeOf(state.leader_id);
  const bool measured = state.MeasurementOf(events::kBaselineId).has_value();
  std::string out = measured ? "## Shipped recipe\n\n```yaml\n"
                             : "## The recipe as given (it did not run; nothing to ship)\n\n```yaml\n";
  out += RecipeToYaml(leader ? *leader : state.baseline);
  if (out.back() != '\n') out += '\n';
  out += "```\n\n";
  if (!launch_command.empty()) out += "Launch:\n\n```sh\n" + launch_command + "\n```\n\n";
  return out;
}

// Jobs that their time limit ended after their logs had pinned the step time down: measured from
// what they logged, with the limit to raise (or the benchmark form to shorten) named.
std::string TimeLimitParagraph(const CampaignState& state) {
  int n = 0;
  double hours = 0, limit = 0;
  for (const auto& j : state.jobs) {
    if (!j.finished || !j.measured_at_time_limit) continue;
    ++n;
    hours += j.charged_gpu_hours;
    limit = std::max(limit, j.time_limit_s);
  }
  if (n == 0) return "";
  return fmt::format(
      "{} job{} reached {} time limit (up to {} s) after {} log{} had already pinned the median step "
      "time down as the adaptive stop would; each was measured from the iterations it logged "
      "rather than recorded as failed. Together they were charged {} GPU-hours. To let such jobs "
      "end on their own, raise `budget.job_time_limit_s` or shorten the recipe's benchmark run.\n\n",
      n, n == 1 ? "" : "s", n == 1 ? "its" : "their", ri::Fixed(limit, 0), n == 1 ? "its" : "their",
      n == 1 ? "" : "s", ri::Fixed(hours, 4));
}

// The adaptive stop: which jobs it ended, after how many iterations, with what precision.
std::string EarlyStopParagraph(const CampaignState& state) {
  int stopped = 0, finished = 0;
  int64_t fewest = 0, most = 0;
  double worst_error = 0, hours = 0;
  for (const auto& j : state.jobs) {
    if (!j.finished) continue;
    ++finished;
    if (!j.stopped_early) continue;
    const int64_t at = j.stop.value("last_iteration", int64_t{0});
    fewest = stopped ? std::min(fewest, at) : at;
    most = stopped ? std::max(most, at) : at;
    worst_error = std::max(worst_error, j.stop.value("relative_error", 0.0));
    hours += j.charged_gpu_hours;
    ++stopped;
  }
  if (!state.settings.early_stop && stopped == 0) return "";
  const std::string rule = fmt::format(
      "once at least {} steady iterations knew its median step time to ±{}% (standard error) and "
      "the step time no longer drifted",
      state.settings.early_stop_min_iterations, ri::Fixed(100 * state.settings.EarlyStopRelativeError(), 2));
  if (stopped == 0) {
    return "The adaptive stop was on (a job is stopped " + rule + "); no job was stopped early.\n\n";
  }
  return fmt::format(
      "{} of {} finished jobs were stopped early by the adaptive stop, {}: after iteration {}{}, "
      "the worst to ±{}%. Each was measured on the log as it stood at that decision. Together they "
      "were charged {} GPU-hours.\n\n",
      stopped, finished, rule, fewest, most != fewest ? fmt::format("–{}", most) : "",
      ri::Fixed(100 * worst_error, 2), ri::Fixed(hours, 4));
}

// What the stack's benchmark form changed for the jobs (the first job of the shipped recipe, or of
// the baseline), so that nobody mistakes the measured run for the shipped one.
std::string BenchmarkSection(const CampaignState& state) {
  const JobRecord* shown = nullptr;
  for (const auto& j : state.jobs) {
    if (j.candidate == state.leader_id) {
      shown = &j;
      break;
    }
    if (!shown && j.candidate == events::kBaselineId) shown = &j;
  }
  if (!shown) return "";
  std::string out = "## How the jobs were benchmarked\n\n";
  if (shown->benchmark_changes.empty()) {
    out += "Each job ran its recipe as it is.\n\n";
  } else {
    out += "Each job ran a short form of its recipe: the stack changed only run-control settings "
           "(how long it runs, logging, checkpointing, evaluation). The shipped recipe above keeps "
           "them as given. For `" + shown->candidate + "`:\n\n";
    for (const auto& c : shown->benchmark_changes) out += "- `" + DescribeChange(c) + "`\n";
    out += "\n";
  }
  return out + EarlyStopParagraph(state) + TimeLimitParagraph(state);
}

std::string GateSection(const CampaignState& state) {
  std::string out = "## Correctness evidence\n\n";
  const auto* c = state.FindCandidate(state.leader_id);
  if (!c) return out + "The baseline is unchanged; no gate applies.\n\n";
  out += fmt::format("- Static gate: {} (rule `{}`): {}\n", c->gate_pass ? "pass" : "refused",
                     c->rule_id, c->gate_reason);
  for (const auto& p : state.paired_loss_checks) {
    out += fmt::format("- Paired-loss check of {}: {} ({} losses, max relative difference {}, "
                       "tolerance {}): {}\n",
                       p.candidate, p.pass ? "pass" : "FAIL", p.compared, ri::Fixed(p.max_rel_diff, 5),
                       ri::Fixed(p.tolerance, 4), p.reason);
  }
  for (const auto& l : state.leader_changes) {
    if (l.reason == "paired_loss_mismatch") {
      out += fmt::format("- Leader {} was reverted to {}: its losses did not match the baseline's.\n",
                         l.from, l.to);
    }
  }
  return out + "\n";
}

std::string TriedSection(const CampaignState& state) {
  std::string out = "## What was tried and why\n\n";
  if (state.candidates.empty()) return out + "Nothing was proposed.\n\n";
  out += "| # | candidate | lever | change | outcome | vs leader | rationale |\n";
  out += "|---:|---|---|---|---|---:|---|\n";
  for (const auto& c : state.candidates) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", c.index, c.id, c.lever_id,
                       ri::Cell(DescribeChanges(c.changes)), ri::Cell(ri::VerdictText(state, c)),
                       c.speedup_vs_leader ? ri::Percent(*c.speedup_vs_leader) : "-",
                       ri::Cell(c.rationale));
  }
  return out + "\n";
}

// Why tuning ended: each tune step's outcome and its recorded reason.
std::string StoppedParagraph(const CampaignState& state) {
  std::string out;
  for (const StepRecord& step : state.steps) {
    if (step.uses != "tune" || !step.finished) continue;
    out += fmt::format("Tuning step `{}` ended: **{}**{}.\n", step.id, step.outcome,
                       step.reason.empty() ? "" : " — " + step.reason);
  }
  return out.empty() ? "" : "\n" + out;
}

std::string BudgetSection(const CampaignState& state) {
  std::string limits = fmt::format("devices × {} s", ri::Fixed(state.settings.job_time_limit_s, 0));
  if (state.settings.time_limit_factor > 0) {
    double shortest = state.settings.job_time_limit_s;
    for (const auto& j : state.jobs) shortest = std::min(shortest, j.time_limit_s);
    limits = fmt::format("devices × its time limit: {} s until the baseline measured, then {}× the "
                         "baseline's longest run, at least {} s and at most {} s (the shortest "
                         "limit given was {} s)",
                         ri::Fixed(state.settings.job_time_limit_s, 0),
                         ri::Fixed(state.settings.time_limit_factor, 1), ri::Fixed(kMinDerivedTimeLimitS, 0),
                         ri::Fixed(state.settings.job_time_limit_s, 0), ri::Fixed(shortest, 0));
  }
  return fmt::format(
      "## Budget\n\n{} of {} GPU-hours charged ({} jobs, {} failed); {} left. Every job reserved "
      "its worst case ({}) before it was submitted.\n",
      ri::Fixed(state.ledger.charged, 4), ri::Fixed(state.ledger.total, 4), state.jobs.size(),
      state.FailedJobs(), ri::Fixed(state.ledger.Left(), 4), limits) + StoppedParagraph(state);
}

}  // namespace

std::string RenderReport(const CampaignState& state, const std::string& launch_command) {
  std::string out = fmt::format("# Tuning report: campaign {}\n\n", state.campaign_id);
  out += fmt::format("Stack `{}` on `{}` ({}), agent `{}`, seed {}, workflow sha256 `{}`.\n\n",
                     state.stack_name, state.launcher_name, state.cluster.device_type,
                     state.agent_name, state.seed, state.workflow_hash);
  out += ResultSection(state);
  out += ShipSection(state, launch_command);
  out += BenchmarkSection(state);
  out += GateSection(state);
  out += TriedSection(state);
  out += ri::CandidateTreeSection(state);
  out += BudgetSection(state);
  out += ProfileSection(state);
  out += "\nThe throughput plot is in `throughput.svg`; the leaderboard in `RESULTS.md`.\n";
  return out;
}

std::map<std::string, std::string> RenderAllReports(const CampaignState& state,
                                                    const std::string& launch_command) {
  std::map<std::string, std::string> files{{"RESULTS.md", RenderResults(state)},
                                           {"REPORT.md", RenderReport(state, launch_command)},
                                           {"throughput.svg", RenderThroughputSvg(state)},
                                           {"lessons.md", RenderLessons(state)},
                                           {"report.html", RenderReportHtml(state, DefaultDataDir() + "/web")}};
  if (LatestProfile(state)) files["profile.svg"] = RenderProfileSvg(state);
  return files;
}

}  // namespace attune
