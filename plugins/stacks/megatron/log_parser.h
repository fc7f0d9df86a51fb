// Copyright attune authors.
//
// Megatron-LM log parsing (reference §3): iteration records of every era (current `training_log`
// lines, 2021 'time (ms)' timer lines, bigscience Megatron-DeepSpeed lines with the time in
// seconds, records wrapped over several physical lines, interleaved ranks), memory reports
// (several may be glued on one line), timer blocks and the `training ...` start marker; and the
// steady-state measurement of a parsed log.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_LOG_PARSER_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_LOG_PARSER_H_

#include <string_view>
#include <vector>

#include "attune/metrics.h"
#include "attune/recipe.h"
#include "attune/status.h"
#include "attune/support/log_lines.h"

namespace attune::megatron {

// Timer values are stored in IterationSample::extra as "timer:<name>" (ms per iteration).
inline constexpr const char* kTimerPrefix = "timer:";

LogParse ParseMegatronLog(std::string_view log);
// The same, from a log already split by support::SplitLogLines (triage splits it once).
LogParse ParseMegatronLines(const std::vector<support::LogLine>& lines);

// Drops the iteration-1 record and the first logged interval (they include start-up), and CUDA
// graph warm-up steps; then the median step time, tokens/s/GPU, CV, TFLOP/s, peak memory and the
// first losses.
Result<Measurement> MeasureRun(const LogParse& parse, const Recipe& recipe);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_LOG_PARSER_H_
