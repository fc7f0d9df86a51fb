#include "attune/support/log_triage.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "attune/support/yaml_schema.h"

namespace attune::support {
namespace {

// ---- triage.yaml ---------------------------------------------------------------------------

using yaml::Bool;
using yaml::CheckKeys;
using yaml::Fail;
using yaml::RequiredStr;
using yaml::SchemaError;
using yaml::Str;
using yaml::Where;

// A number of 0 or more (hang settings).
double NonNegative(const std::string& source, const YAML::Node& node, const std::string& path) {
  double d = yaml::Num(source, node, path);
  if (d < 0) Fail(source, node, path, "expected a number of 0 or more, found '" + node.Scalar() + "'");
  return d;
}

TriageSignature ParseSignature(const std::string& source, const YAML::Node& n, const std::string& p) {
  CheckKeys(source, n, p, {"id", "kind", "regex", "hint", "infrastructure", "before_training"});
  TriageSignature s;
  s.id = RequiredStr(source, n, "id", p);
  std::string kind = RequiredStr(source, n, "kind", p);
  auto parsed = FailureKindFromName(kind);
  if (!parsed || *parsed == FailureKind::kNone) {
    Fail(source, n["kind"], p + ".kind",
         "unknown failure kind '" + kind + "' (expected oom, host_oom, nccl_timeout, nccl_error, "
         "illegal_memory, hang, config_error, launch_error, node_failure or unknown)");
  }
  s.kind = *parsed;
  s.pattern = RequiredStr(source, n, "regex", p);
  try {
    s.regex = std::regex(s.pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    Fail(source, n["regex"], p + ".regex", std::string("invalid regular expression: ") + e.what());
  }
  s.literals = RequiredLiterals(s.pattern);
  s.hint = RequiredStr(source, n, "hint", p);
  if (n["infrastructure"]) s.infrastructure = Bool(source, n["infrastructure"], p + ".infrastructure");
  if (n["before_training"]) s.before_training = Bool(source, n["before_training"], p + ".before_training");
  return s;
}

TriageSpec ParseRoot(const std::string& source, const YAML::Node& root) {
  CheckKeys(source, root, "(top)", {"version", "hang", "signatures"});
  if (!root["version"]) Fail(source, root, "version", "missing 'version: 1'");
  if (Str(source, root["version"], "version") != "1") Fail(source, root["version"], "version", "unsupported version (expected 1)");
  TriageSpec spec;
  if (const YAML::Node& h = root["hang"]) {
    CheckKeys(source, h, "hang", {"step_time_factor", "startup_allowance_s", "min_silence_s"});
    if (h["step_time_factor"]) spec.hang_step_time_factor = NonNegative(source, h["step_time_factor"], "hang.step_time_factor");
    if (h["startup_allowance_s"]) spec.hang_startup_allowance_s = NonNegative(source, h["startup_allowance_s"], "hang.startup_allowance_s");
    if (h["min_silence_s"]) spec.hang_min_silence_s = NonNegative(source, h["min_silence_s"], "hang.min_silence_s");
  }
  const YAML::Node& sigs = root["signatures"];
  if (!sigs || !sigs.IsSequence()) Fail(source, sigs ? sigs : root, "signatures", "expected a list of signatures");
  std::set<std::string> ids;
  for (size_t i = 0; i < sigs.size(); ++i) {
    std::string p = "signatures[" + std::to_string(i) + "]";
    TriageSignature s = ParseSignature(source, sigs[i], p);
    if (!ids.insert(s.id).second) Fail(source, sigs[i]["id"], p + ".id", "duplicate signature id '" + s.id + "'");
    spec.signatures.push_back(std::move(s));
  }
  return spec;
}

// ---- literal pre-check ---------------------------------------------------------------------

// Splits at '|' outside groups and classes.
std::vector<std::string> TopLevelAlternatives(const std::string& p) {
  std::vector<std::string> out(1);
  int depth = 0;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      out.back() += p.substr(i, 2);
      ++i;
      continue;
    }
    if (c == '[') in_class = true;
    if (c == ']') in_class = false;
    if (!in_class && c == '(') ++depth;
    if (!in_class && c == ')') --depth;
    if (!in_class && depth == 0 && c == '|') {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  return out;
}

// The longest run of characters the alternative must contain literally.
std::string LongestLiteral(const std::string& alt) {
  std::string best, run;
  auto end_run = [&] {
    if (run.size() > best.size()) best = run;
    run.clear();
  };
  int depth = 0;
  for (size_t i = 0; i < alt.size(); ++i) {
    char c = alt[i];
    if (c == '(' || c == '[') { end_run(); ++depth; continue; }
    if (c == ')' || c == ']') { --depth; continue; }
    if (depth > 0) continue;
    if (c == '?' || c == '*' || c == '{') {  // the previous character is optional
      if (!run.empty()) run.pop_back();
      end_run();
      continue;
    }
    if (c == '\\' && i + 1 < alt.size()) {
      char e = alt[++i];
      if (std::isalnum(static_cast<unsigned char>(e))) { end_run(); continue; }  // \d, \s, \b ...
      run += e;
      continue;
    }
    if (std::string("^$.+").find(c) != std::string::npos) { end_run(); continue; }
    run += c;
  }
  end_run();
  return best;
}

// ---- triage --------------------------------------------------------------------------------

std::string Fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

void SetEvidence(const LogLine& line, Failure* f) {
  f->evidence = line.raw;
  f->line = line.number;
  f->process = line.Process();
}

const LogLine* LastNonEmpty(const std::vector<LogLine>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!it->text.empty()) return &*it;
  }
  return nullptr;
}

Failure HangAt(const LogLine* evidence, const std::string& why) {
  Failure f;
  f.kind = FailureKind::kHang;
  f.signature = kSilentHangSignature;
  f.hint = why + "; the job stopped making progress without an error (a rank is stuck or a "
                 "collective is mismatched); retry once, then try another configuration";
  f.infrastructure = true;  // until the same recipe hangs again (kSilentHangSignature)
  if (evidence) SetEvidence(*evidence, &f);  // the last line: the job was alive until then
  return f;
}

// What the log holds from the last training record's physical line on.
struct AfterLastRecord {
  std::optional<double> record_time;    // its timestamp, or the first timestamp at or after it
  std::optional<double> last_time;      // the last timestamp any process printed after it
  int other_lines = 0;                  // non-empty records after it
  std::string other_process;            // a process that printed one of them
};

AfterLastRecord Scan(const std::vector<LogLine>& lines, int record_line) {
  AfterLastRecord a;
  for (const auto& line : lines) {
    if (line.number < record_line) continue;
    if (line.timestamp_s) {
      if (!a.record_time) a.record_time = line.timestamp_s;
      a.last_time = line.timestamp_s;
    }
    if (line.number > record_line && !line.text.empty()) {
      ++a.other_lines;
      if (a.other_process.empty()) a.other_process = line.Process();
    }
  }
  return a;
}

// Seconds of the job the logged steps account for.
double ProgressSeconds(const std::vector<ProgressRecord>& progress) {
  double total = 0;
  int64_t previous = 0;
  for (const auto& r : progress) {
    int64_t steps = previous == 0 ? std::min<int64_t>(r.step, 100) : r.step - previous;
    total += static_cast<double>(std::max<int64_t>(steps, 1)) * r.step_time_s;
    previous = r.step;
  }
  return total;
}

// The step time to judge silence by: the median of the logged ones (the last alone may be an
// outlier).
double TypicalStepSeconds(const std::vector<ProgressRecord>& progress) {
  std::vector<double> times;
  for (const auto& r : progress) {
    if (r.step_time_s > 0) times.push_back(r.step_time_s);
  }
  if (times.empty()) return 0;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

std::optional<Failure> DetectHang(const TriageSpec& spec, const std::vector<LogLine>& lines,
                                  const std::vector<ProgressRecord>& progress, const JobEnd& end) {
  if (progress.empty()) {
    double threshold = spec.hang_startup_allowance_s + spec.hang_min_silence_s;
    if (end.ran_seconds > threshold) return HangAt(LastNonEmpty(lines), "no training step logged in " + Fmt(end.ran_seconds) + " s");
    return std::nullopt;
  }
  const ProgressRecord& last = progress.back();
  if (last.planned_steps > 0 && last.step >= last.planned_steps) return std::nullopt;
  const std::string last_name = last.label.empty() ? "step " + std::to_string(last.step) : last.label;
  double step_s = TypicalStepSeconds(progress);
  double threshold = std::max(spec.hang_min_silence_s, spec.hang_step_time_factor * step_s);
  AfterLastRecord after = Scan(lines, last.line);
  std::string others;
  if (after.other_lines > 0) {
    others = " while other output went on (" + std::to_string(after.other_lines) + " lines" +
             (after.other_process.empty() ? std::string() : ", e.g. from " + after.other_process) + ")";
  }
  if (after.record_time && after.last_time && *after.last_time - *after.record_time > threshold) {
    double silence = *after.last_time - *after.record_time;
    return HangAt(LastNonEmpty(lines), "no training step for " + Fmt(silence) + " s after " +
                                           last_name + " (line " + std::to_string(last.line) +
                                           "; usual step time " + Fmt(step_s) + " s)" + others);
  }
  double unexplained = end.ran_seconds - ProgressSeconds(progress) - spec.hang_startup_allowance_s;
  if (end.ran_seconds > 0 && unexplained > threshold) {
    return HangAt(LastNonEmpty(lines), "about " + Fmt(unexplained) + " s of the job's " + Fmt(end.ran_seconds) +
                      " s are not explained by logged steps (last: " + last_name + ")" + others);
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
    f.hint = "the job was cancelled";
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
  if (const LogLine* last = LastNonEmpty(lines)) SetEvidence(*last, &f);
  return f;
}

}  // namespace

Result<TriageSpec> ParseTriageSpec(const std::string& yaml_text, const std::string& source) {
  try {
    YAML::Node root = YAML::Load(yaml_text);
    if (!root.IsMap()) return Status::InvalidArgument(source + ": expected a mapping at the top (version, hang, signatures)");
    return ParseRoot(source, root);
  } catch (const SchemaError& e) {
    return Status::InvalidArgument(e.message);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(Where(source, e.mark) + ": " + e.msg);
  }
}

std::vector<std::string> RequiredLiterals(const std::string& pattern) {
  std::vector<std::string> out;
  for (const auto& alt : TopLevelAlternatives(pattern)) {
    std::string lit = LongestLiteral(alt);
    if (lit.size() < 3) return {};
    out.push_back(lit);
  }
  return out;
}

std::optional<Failure> MatchSignatures(const TriageSpec& spec, const std::vector<LogLine>& lines,
                                       size_t training_start) {
  for (const auto& sig : spec.signatures) {
    size_t limit = sig.before_training ? std::min(training_start, lines.size()) : lines.size();
    for (size_t i = 0; i < limit; ++i) {
      // A signature sees the first kRegexWindow bytes of a record (log_lines.h says why).
      const std::string_view text = std::string_view(lines[i].text).substr(0, kRegexWindow);
      if (text.empty()) continue;
      bool candidate = sig.literals.empty() ||
                       std::any_of(sig.literals.begin(), sig.literals.end(),
                                   [&](const std::string& l) { return text.find(l) != std::string::npos; });
      if (!candidate || !std::regex_search(text.begin(), text.end(), sig.regex)) continue;
      Failure f;
      f.kind = sig.kind;
      f.signature = sig.id;
      f.hint = sig.hint;
      f.infrastructure = sig.infrastructure;
      SetEvidence(lines[i], &f);
      return f;
    }
  }
  return std::nullopt;
}

Failure TriageLines(const TriageSpec& spec, const std::vector<LogLine>& lines,
                    const TriageInput& input, const JobEnd& end) {
  // A clean exit after the planned training is not a failure (an exit code alone is not enough:
  // `cmd | tee log` exits 0 even when cmd fails).
  if (end.exit_code == 0 && input.completed) return Failure{};
  if (auto matched = MatchSignatures(spec, lines, input.training_start)) return *matched;
  // A process that exited 0 on its own did not hang (a hung job ends by its time limit or a kill).
  bool clean_exit = end.exit_code == 0 && (end.launcher_state.empty() || end.launcher_state == "succeeded");
  if (!clean_exit) {
    if (auto hang = DetectHang(spec, lines, input.progress, end)) return *hang;
  }
  return FromJobEnd(lines, end);
}

}  // namespace attune::support
