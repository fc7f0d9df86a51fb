#include "triage.h"

#include "attune/support/log_lines.h"
#include "log_parser.h"

namespace attune::megatron {

using support::LogLine;
using support::SplitLogLines;

namespace {

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

Failure TriageLog(const TriageSpec& spec, std::string_view log, const JobEnd& end,
                  const std::vector<support::ProgressRecord>* progress) {
  return TriageLines(spec, SplitLogLines(log), end, progress);
}

Failure TriageLines(const TriageSpec& spec, const std::vector<LogLine>& lines, const JobEnd& end,
                    const std::vector<support::ProgressRecord>* progress) {
  LogParse parse = ParseMegatronLines(lines);
  support::TriageInput input;
  for (const auto& s : parse.iterations) {
    input.progress.push_back({s.line, s.iteration, s.train_iters, s.step_time_ms / 1000.0, ""});
  }
  if (progress && !progress->empty()) input.progress = *progress;
  input.completed = Completed(parse, lines);
  input.training_start = TrainingStart(lines);
  return support::TriageLines(spec, lines, input, end);
}

}  // namespace attune::megatron
