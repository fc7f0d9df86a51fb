// Copyright attune authors.
//
// Failure triage shared by every stack: the signature file (stacks/<name>/triage.yaml), matching
// it against a normalised log (log_lines.h), the hang rule and the launcher's report. A stack
// supplies its signatures and what its parser read as progress; the rules are the same for all:
//
//   1. A clean exit after the planned training is not a failure, whatever warnings the log holds.
//   2. Signatures, most specific first (their order in the file): the first signature that
//      matches any record decides, so a collective timeout named in a later `what():` line wins
//      over a generic NCCL error or the `terminate called` banner before it, and an OOM wins over
//      the exception wrapper (Ray's `RayTaskError(...)`) around it. The evidence is the first
//      matching record, with its line number and the process that printed it.
//   3. A hang: the training records stop while the job goes on. With timestamps, the time from
//      the last training record to the last line any process printed (other processes that keep
//      logging — rollout actors, the Ray driver, other ranks — do not hide it); without them, the
//      job's run time that the logged steps do not explain. Silence must exceed both
//      `hang.min_silence_s` and `hang.step_time_factor` step times. A job that exited 0 by
//      itself did not hang.
//   4. Otherwise the launcher's report (time limit, cancellation, node failure, exit code).
#ifndef ATTUNE_SUPPORT_LOG_TRIAGE_H_
#define ATTUNE_SUPPORT_LOG_TRIAGE_H_

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "attune/metrics.h"
#include "attune/stack.h"
#include "attune/status.h"
#include "attune/support/log_lines.h"

namespace attune::support {

// The signature of a job whose training records stop without any error (the hang rule below):
// a stuck rank or node, or the recipe's own mismatched collectives. Triage marks it
// infrastructure; the engine retries a recipe's first one and blames the recipe for a second
// (InfrastructureBlame in engine/src/campaign/campaign_state.h).
inline constexpr const char* kSilentHangSignature = "hang_no_progress";

struct TriageSignature {
  std::string id;
  FailureKind kind = FailureKind::kUnknown;
  std::string pattern;
  std::regex regex;
  // Literals of which a matching line contains at least one (empty: no cheap pre-check), so
  // that the regex runs only on candidate lines of long logs.
  std::vector<std::string> literals;
  std::string hint;
  bool infrastructure = false;
  bool before_training = false;  // only records before the training marker count
};

struct TriageSpec {
  double hang_step_time_factor = 10;
  double hang_startup_allowance_s = 1200;
  double hang_min_silence_s = 300;
  std::vector<TriageSignature> signatures;
};

// Reads a triage.yaml: `version: 1`, optional `hang: {step_time_factor, startup_allowance_s,
// min_silence_s}`, and `signatures:` (id, kind, regex, hint, optional infrastructure and
// before_training). Errors name file:line:column, the key and what was expected.
Result<TriageSpec> ParseTriageSpec(const std::string& yaml_text, const std::string& source);

// The literal pre-check of a regex: for each top-level alternative its longest run of plain
// characters; empty when some alternative has no run of 3 or more.
std::vector<std::string> RequiredLiterals(const std::string& pattern);

// One training record as the stack's parser read it.
struct ProgressRecord {
  int line = 0;               // physical line of the record
  int64_t step = 0;           // iteration / step number
  int64_t planned_steps = 0;  // the run's planned total when the record says it (0 unknown)
  double step_time_s = 0;     // the step's time (0 unknown)
  std::string label;          // how verdicts name it ("rollout 3"); "" = "step <step>"
};

struct TriageInput {
  std::vector<ProgressRecord> progress;  // in log order
  bool completed = false;                // the log says training ended as planned
  size_t training_start = 0;             // index into the lines of the training marker
                                         // (lines.size() when absent)
};

Failure TriageLines(const TriageSpec& spec, const std::vector<LogLine>& lines,
                    const TriageInput& input, const JobEnd& end);

// The first signature (in spec order) that matches a record (its first kRegexWindow bytes),
// or std::nullopt.
std::optional<Failure> MatchSignatures(const TriageSpec& spec, const std::vector<LogLine>& lines,
                                       size_t training_start);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_LOG_TRIAGE_H_
