// Copyright attune authors.
//
// Megatron-LM's timer blocks (--timing-log-level 1 or 2) and what they say about a run.
//
// Formats read (megatron/core/timers.py; values are ms per iteration, already divided by
// --log-interval):
//   --timing-log-option minmax (default)   "(min, max) time across ranks (ms):"
//                                          "    forward-backward ......: (1234.56, 1240.12)"
//   --timing-log-option max                "max time across ranks (ms):"
//                                          "    forward-backward ......: 1240.12"
//   --timing-log-option all                "times across ranks (ms):"  "  forward-backward:"
//                                          "     rank  0: 1234.56" ...
//   2021-era Megatron                      "time (ms) | forward-compute: 306.62 | ..." (its
//                                          own line, or the end of the iteration record's,
//                                          possibly hard-wrapped over several lines)
// A block belongs to the iteration record logged last before it (or ending on its line).
//
// What the timers measure:
//   gradient communication left exposed after the backward pass: all-grads-sync (waiting for the
//   data-parallel reduce), params-all-gather, and the embedding/layernorm all-reduces (2021:
//   backward-params-all-reduce, backward-embedding-all-reduce);
//   pipeline waits: the p2p timers forward-recv, backward-send, forward-send-backward-recv, ...
//   (level 2), the time a stage blocks on its neighbours: the bubble plus transfer time.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_TIMERS_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_TIMERS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/metrics.h"

namespace attune::megatron {

// IterationSample::extra keys: "timer:<name>" holds the max across ranks, "timer_min:<name>" the
// min when the log gives it.
inline constexpr const char* kTimerMaxPrefix = "timer:";
inline constexpr const char* kTimerMinPrefix = "timer_min:";

enum class TimerFormat { kMinMax, kMax, kAllRanks, kInline };
const char* TimerFormatName(TimerFormat f);  // "minmax", "max", "all", "inline"

// One timer in one block. For kMax and kInline min_ms == max_ms (one value).
struct TimerReading {
  double min_ms = 0;
  double max_ms = 0;
  std::map<int, double> ranks;  // kAllRanks only
};

struct TimerBlock {
  int line = 0;  // 1-based line of the block's header (or of the inline line)
  TimerFormat format = TimerFormat::kMinMax;
  std::map<std::string, TimerReading> timers;
};

// Every timer block in the log, in order. Tolerates the prefixes SplitLogLines removes.
std::vector<TimerBlock> ParseTimerBlocks(std::string_view log);

// Stores each block's timers into the iteration record logged last before it or ending on its
// first line (max under
// "timer:<name>", min under "timer_min:<name>"). Blocks before the first record are dropped.
void AttachTimerBlocks(const std::vector<TimerBlock>& blocks, LogParse* parse);

// One iteration's timers, grouped.
struct TimerBreakdown {
  int64_t iteration = 0;
  double step_ms = 0;
  std::map<std::string, double> gradient_comm;  // name → ms (max across ranks)
  std::map<std::string, double> pipeline_wait;
  double gradient_comm_ms = 0;
  double pipeline_wait_ms = 0;
  // forward-backward max ÷ min across ranks, when the log gives both (> 1: ranks or stages
  // take different time).
  std::optional<double> forward_backward_spread;
};

// The breakdown of an iteration record with timers; nullopt without timers or step time.
std::optional<TimerBreakdown> BreakdownOf(const IterationSample& sample);

// What the timers of a parsed log say, over its records with timers (the first is dropped as
// warm-up when there are three or more): "communication" from exposed gradient communication,
// "pipeline_bubble" from pipeline waits, each when it takes at least 5% of the step (median
// share over the records). `have_timers` / `have_pipeline_timers` tell the caller which
// recipe-based guesses the timers replace.
struct TimerDiagnosis {
  bool have_timers = false;
  bool have_pipeline_timers = false;
  std::vector<Diagnosis> diagnoses;
};
TimerDiagnosis DiagnoseTimers(const LogParse& parse);

// `attune megatron timers LOG [--json]`: the per-iteration breakdown and the diagnosis.
int RunTimersCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_TIMERS_H_
