#include "triage.h"

#include <algorithm>
#include <cstdio>

#include "log_lines.h"
#include "log_parser.h"

namespace attune::megatron {
namespace {

std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

// Index (in `lines`) of the first line at or after the training marker, or lines.size().
size_t TrainingStart(const std::vector<LogLine>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& t = lines[i].text;
    if (t.rfind("training ...", 0) == 0 || t.find("[before the start of training step]") != std::string::npos ||
        t.rfind("iteration ", 0) == 0) {
      return i;
    }
  }
  return lines.size();
}

std::optional<Failure> MatchSignatures(const TriageSpec& spec, const std::vector<LogLine>& lines) {
  size_t training = TrainingStart(lines);
  for (const auto& sig : spec.signatures) {
    size_t limit = sig.before_training ? training : lines.size();
    for (size_t i = 0; i < limit; ++i) {
      const std::string& text = lines[i].text;
      if (text.empty()) continue;
      bool candidate = sig.literals.empty() ||
                       std::any_of(sig.literals.begin(), sig.literals.end(),
                                   [&](const std::string& l) { return text.find(l) != std::string::npos; });
      if (!candidate || !std::regex_search(text, sig.regex)) continue;
      Failure f;
      f.kind = sig.kind;
      f.signature = sig.id;
      f.evidence = lines[i].raw;
      f.line = lines[i].number;
      f.hint = sig.hint;
      f.infrastructure = sig.infrastructure;
      return f;
    }
  }
  return std::nullopt;
}

const LogLine* LastNonEmpty(const std::vector<LogLine>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!it->text.empty()) return &*it;
  }
  return nullptr;
}

Failure HangAt(const std::vector<LogLine>& lines, const std::string& why) {
  Failure f;
  f.kind = FailureKind::kHang;
  f.signature = "hang_no_progress";
  f.hint = why + "; the job stopped making progress without an error (a rank is stuck or a "
                 "collective is mismatched); retry once, then try another configuration";
  if (const LogLine* last = LastNonEmpty(lines)) {
    f.evidence = last->raw;
    f.line = last->number;
  }
  return f;
}

// Silence after the last iteration record, from timestamps in the log itself.
std::optional<double> TimestampedSilence(const std::vector<LogLine>& lines, int last_record_line) {
  std::optional<double> first, last;
  for (const auto& line : lines) {
    if (line.number < last_record_line || !line.timestamp_s) continue;
    if (!first) first = line.timestamp_s;
    last = line.timestamp_s;
  }
  if (!first || !last) return std::nullopt;
  return *last - *first;
}

// Seconds of the job the logged iterations account for.
double ProgressSeconds(const LogParse& parse) {
  double total = 0;
  int64_t previous = 0;
  for (const auto& s : parse.iterations) {
    int64_t steps = previous == 0 ? std::min<int64_t>(s.iteration, 100) : s.iteration - previous;
    total += std::max<int64_t>(steps, 1) * s.step_time_ms / 1000.0;
    previous = s.iteration;
  }
  return total;
}

std::optional<Failure> DetectHang(const TriageSpec& spec, const std::vector<LogLine>& lines,
                                  const LogParse& parse, const JobEnd& end) {
  if (!parse.iterations.empty()) {
    const auto& last = parse.iterations.back();
    if (last.train_iters > 0 && last.iteration >= last.train_iters) return std::nullopt;
    double step_s = last.step_time_ms / 1000.0;
    double threshold = std::max(spec.hang_min_silence_s, spec.hang_step_time_factor * step_s);
    if (auto silence = TimestampedSilence(lines, last.line); silence && *silence > threshold) {
      return HangAt(lines, "no iteration for " + Fmt(*silence) + " s after iteration " +
                               std::to_string(last.iteration) + " (step time " + Fmt(step_s) + " s)");
    }
    double unexplained = end.ran_seconds - ProgressSeconds(parse) - spec.hang_startup_allowance_s;
    if (end.ran_seconds > 0 && unexplained > threshold) {
      return HangAt(lines, "about " + Fmt(unexplained) + " s of the job's " + Fmt(end.ran_seconds) +
                               " s are not explained by logged iterations");
    }
    return std::nullopt;
  }
  double threshold = spec.hang_startup_allowance_s + spec.hang_min_silence_s;
  if (end.ran_seconds > threshold) {
    return HangAt(lines, "no iteration logged in " + Fmt(end.ran_seconds) + " s");
  }
  return std::nullopt;
}

Failure FromJobEnd(const std::vector<LogLine>& lines, const JobEnd& end) {
  Failure f;
  const std::string& s = end.launcher_state;
  if (s == "timed_out") {
    f.kind = FailureKind::kTimeLimit;
    f.hint = "the job ran past its time limit while still making progress; allow more time or fewer iterations";
  } else if (s == "cancelled") {
    f.kind = FailureKind::kCancelled;
  } else if (s == "node_failure" || s == "preempted") {
    f.kind = FailureKind::kNodeFailure;
    f.infrastructure = true;
    f.hint = "the launcher reported a node failure or preemption; retry the same recipe";
  } else if (end.exit_code != 0 && end.exit_code != -1) {
    f.kind = FailureKind::kUnknown;
    f.hint = "the job exited with code " + std::to_string(end.exit_code) + " and no known signature; read the log's end";
  } else {
    return f;
  }
  f.signature = "job_end_" + (s.empty() ? std::string("exit_code") : s);
  if (const LogLine* last = LastNonEmpty(lines)) {
    f.evidence = last->raw;
    f.line = last->number;
  }
  return f;
}

bool Completed(const LogParse& parse, const std::vector<LogLine>& lines) {
  if (!parse.iterations.empty()) {
    const auto& last = parse.iterations.back();
    if (last.train_iters > 0 && last.iteration >= last.train_iters) return true;
  }
  for (const auto& line : lines) {
    if (line.text.rfind("[after training is done]", 0) == 0 || line.text.rfind("[exiting program", 0) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

Failure TriageLog(const TriageSpec& spec, std::string_view log, const JobEnd& end) {
  auto lines = SplitLogLines(log);
  LogParse parse = ParseMegatronLog(log);
  // A clean exit after the last planned iteration is not a failure, whatever warnings the log
  // holds (an exit code alone is not enough: `cmd | tee log` exits 0 even when cmd fails).
  if (end.exit_code == 0 && Completed(parse, lines)) return Failure{};
  if (auto matched = MatchSignatures(spec, lines)) return *matched;
  if (auto hang = DetectHang(spec, lines, parse, end)) return *hang;
  return FromJobEnd(lines, end);
}

}  // namespace attune::megatron
