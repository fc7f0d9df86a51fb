#include "steps/run_context.h"

#include <chrono>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "api/utf8.h"
#include "campaign/events.h"

namespace attune {

Status RunContext::Append(std::vector<NewEvent> events) {
  // Events carry text from outside (job logs, triage evidence, agent answers, plugin messages).
  // Invalid UTF-8 is replaced (and counted) here, before the log stores it and the fold reads it,
  // so that the stored event and the state folded from it agree and a stray byte cannot make an
  // event unstorable.
  // Likewise a non-finite number (JSON has none) is stored as null: it is made null here so that
  // the state folded now is the state a replay will fold.
  for (NewEvent& e : events) {
    const size_t replaced = MakeValidUtf8(e.data);
    if (replaced > 0 && e.data.is_object()) e.data["invalid_utf8_bytes"] = replaced;
    const size_t non_finite = ReplaceNonFinite(e.data);
    if (non_finite > 0 && e.data.is_object()) e.data["non_finite_numbers"] = non_finite;
  }
  // Fold first, on a copy: an event the fold refuses is never stored, so a campaign can never
  // hold an event that stops every later replay.
  const uint64_t first = log->last_seq() + 1;
  CampaignState next = state;
  std::vector<EventRecord> records;
  for (size_t i = 0; i < events.size(); ++i) {
    EventRecord record;
    record.seq = first + i;
    record.type = events[i].type;
    record.v = events[i].v;
    record.data = events[i].data;
    Status folded = next.Apply(record);
    // The events were built by this engine, so a fold error is a bug, not bad input.
    if (!folded.ok()) {
      return Status::Internal("the engine refused to store an event its fold rejects (nothing was "
                              "stored): " + folded.message());
    }
    records.push_back(std::move(record));
  }
  ATTUNE_ASSIGN_OR_RETURN(uint64_t last, log->Append(events));
  state = std::move(next);
  for (const EventRecord& record : records) {
    if (options->json) {
      *options->out << nlohmann::json{{"seq", record.seq}, {"type", record.type}, {"data", record.data}}.dump()
                    << "\n";
    } else {
      *options->out << fmt::format("[{:>4}] {}", record.seq, SummarizeEvent(record.type, record.data))
                    << "\n";
    }
  }
  options->out->flush();
  if (last != state.last_seq) return Status::Internal("log and state disagree on the last seq");
  return Status::Ok();
}

bool RunContext::StopRequested() const {
  return options->stop_requested && options->stop_requested->load();
}

void RunContext::SleepUnlessStopped(double seconds) const {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end && !StopRequested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void RunContext::Say(const std::string& line) const {
  if (!options->json) *options->out << line << "\n" << std::flush;
}

Status StopStatus() { return Status::Aborted("stop requested"); }

bool IsStop(const Status& s) { return s.code() == StatusCode::kAborted; }

namespace {

std::string Tps(const nlohmann::json& m) {
  if (!m.is_object()) return "";
  return fmt::format(" {:.1f} tokens/s/GPU", m.value("tokens_per_s_per_gpu", 0.0));
}

}  // namespace

std::string SummarizeEvent(const std::string& type, const nlohmann::json& d) {
  using namespace events;
  if (type == kCampaignStarted) return "campaign " + d.value("campaign_id", "") + " started";
  if (type == kCampaignResumed) return "campaign resumed";
  if (type == kWorkflowAmended) {
    return "workflow amended (" + std::to_string(d.value("changes", nlohmann::json::array()).size()) +
           " changes)";
  }
  if (type == kStepStarted) return "step " + d.value("step", "") + " started";
  if (type == kStepFinished) return "step " + d.value("step", "") + " finished: " + d.value("outcome", "");
  if (type == kProposalRecorded) {
    if (d.value("done", false)) return "agent: nothing promising left";
    auto changes = ChangesFromJson(d.value("changes", nlohmann::json::array()));
    return d.value("candidate", "") + " proposed: " + (changes.ok() ? DescribeChanges(*changes) : "?") +
           " (" + d.value("lever_id", "") + ")";
  }
  if (type == kAgentFailed) return "agent failed: " + d.value("error", "");
  if (type == kGateVerdict) {
    return d.value("candidate", "") + (d.value("pass", false) ? " passes the gate" : " refused by the gate: ") +
           (d.value("pass", false) ? "" : d.value("rule_id", "") + ": " + d.value("reason", ""));
  }
  if (type == kJobRequested) {
    return fmt::format("job {} requested ({} GPU-hours reserved)", d.value("job", ""),
                       d.value("reserved_gpu_hours", 0.0));
  }
  if (type == kJobSubmitted) return "job " + d.value("job", "") + " submitted";
  if (type == kJobFinished) {
    std::string state = d.value("status", nlohmann::json::object()).value("state", "");
    std::string failure = d.contains("failure") && d.at("failure").is_object()
                              ? " " + d.at("failure").value("kind", "")
                              : "";
    if (d.value("stopped_early", false)) state = "stopped early";
    if (d.value("measured_at_time_limit", false)) state = "timed out, measured from its log";
    return fmt::format("job {} {}{}{} ({:.4f} GPU-hours)", d.value("job", ""), state, failure,
                       Tps(d.value("measurement", nlohmann::json())), d.value("charged_gpu_hours", 0.0));
  }
  if (type == kCandidateRanked) {
    std::string vs = d.contains("speedup_vs_leader") && d.at("speedup_vs_leader").is_number()
                         ? fmt::format(" ({:+.1f}% vs leader)", (d.at("speedup_vs_leader").get<double>() - 1) * 100)
                         : "";
    return d.value("candidate", "") + ": " + d.value("outcome", "") + vs;
  }
  if (type == kLeaderChanged) {
    return "leader " + d.value("from", "") + " -> " + d.value("to", "") + " (" + d.value("reason", "") + ")";
  }
  if (type == kPairedLossChecked) {
    return "paired-loss check of " + d.value("candidate", "") + ": " +
           (d.value("pass", false) ? "pass" : "FAIL") + " — " + d.value("reason", "");
  }
  if (type == kSpeedupMeasured) {
    return fmt::format("verified speedup of {}: {:.3f}x (min {:.3f}, max {:.3f})", d.value("leader", ""),
                       d.value("median", 0.0), d.value("min", 0.0), d.value("max", 0.0));
  }
  if (type == kProfileAnalyzed) {
    const std::string error = d.value("error", "");
    if (!error.empty()) return "profile of job " + d.value("job", "") + ": no analysis: " + error;
    return fmt::format("profile of job {}: {} trace(s), {} finding(s)", d.value("job", ""), d.value("traces", 0),
                       d.value("diagnoses", nlohmann::json::array()).size());
  }
  if (type == kJobCancelRequested) return "job " + d.value("job", "") + ": cancellation requested";
  if (type == kJobStopRequested) {
    return fmt::format("job {}: step time steady at iteration {} (median {:.4g} s, known to ±{:.2f}%); stopping it",
                       d.value("job", ""), d.value("last_iteration", int64_t{0}),
                       d.value("median_step_time_s", 0.0), 100 * d.value("relative_error", 0.0));
  }
  if (type == kCampaignPaused) return "campaign paused: " + d.value("reason", "");
  if (type == kCampaignFinished) return "campaign finished";
  if (type == kReportWritten) return "report written";
  return type;
}

}  // namespace attune
