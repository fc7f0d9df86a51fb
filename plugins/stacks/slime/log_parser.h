// Copyright attune authors.
//
// slime's log lines (shared reference §6.4): `perf {rollout_id}: {dict}` from the trainer
// (perf/actor_train_time, perf/actor_train_tflops, perf/actor_train_tok_per_s, perf/step_time,
// perf/wait_time_ratio, perf/update_weights_time, ...) and from the RolloutManager
// (perf/rollout_time, perf/tokens_per_gpu_per_sec, ...), and `step {N}: {dict}` (train/loss,
// train/grad_norm, ...). Lines arrive through Ray's driver log with "(Actor pid=.., ip=..)"
// prefixes, slime's "[date time] file.py:N - " logger prefix and Ray's
// "[repeated Nx across cluster]" suffix; the Megatron stack's line splitter removes the first two,
// this parser the suffix.
//
// The LogParse holds two kinds of records, in log order:
//  - one per rollout id (trainer and rollout dicts of the same id merged): step_time_ms is the
//    rollout step's wall time (see RolloutStepSeconds), extra holds every perf/ key;
//  - one per train step: step_time_ms 0, loss/grad_norm set, extra["slime/train_step"] = 1.
#ifndef ATTUNE_PLUGINS_STACKS_SLIME_LOG_PARSER_H_
#define ATTUNE_PLUGINS_STACKS_SLIME_LOG_PARSER_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/metrics.h"
#include "attune/recipe.h"
#include "attune/status.h"
#include "attune/support/log_lines.h"

namespace attune::slime {

// The numeric entries of a Python dict literal as slime prints it ({'a': 1.0, 'b': nan,
// 'c': np.float64(2.5), 'd': True}); non-numeric values (strings, lists, None) are skipped.
// Fails on text that is not a dict literal, naming the offset.
Result<std::map<std::string, double>> ParsePythonDict(std::string_view text);

LogParse ParseSlimeLog(std::string_view log);
// The same, from a log already split by support::SplitLogLines (triage splits it once).
LogParse ParseSlimeLines(const std::vector<support::LogLine>& lines);

// Seconds of one rollout step from its perf keys: the trainer's perf/step_time (train_wait +
// train) plus perf/update_weights_time; without step_time, perf/rollout_time + perf/train_time
// (or, without that, perf/actor_train_time + perf/log_probs_time + perf/ref_log_probs_time) +
// perf/update_weights_time. std::nullopt when neither is there.
std::optional<double> RolloutStepSeconds(const std::map<std::string, double>& perf);

// GPUs the recipe occupies: training actors (topology) plus rollout GPUs when disaggregated;
// max of the two when --colocate.
int TotalGpus(const Recipe& recipe);

// Steady state: drops the first rollout (CUDA graph capture, first weight sync) when three or
// more were logged; tokens/s per GPU = trained tokens of the rollout (actor_train_tok_per_s x
// actor_train_time) / rollout step seconds / TotalGpus.
Result<Measurement> MeasureSlime(const LogParse& parse, const Recipe& recipe);

}  // namespace attune::slime

#endif  // ATTUNE_PLUGINS_STACKS_SLIME_LOG_PARSER_H_
