// Copyright attune authors.
//
// AutoModel's training logs: the step line of recipes/llm/train_ft.py (every era seen:
// "INFO:root:step 4 | ... | mem: 11.66 GiB | tps 6924.50", the 2026 form with lr, "mem X GiB" and
// "tps T(P/gpu)" or "tps P/gpu", with or without the "date | LEVEL | logger |" prefix) and the
// training.jsonl records. See stacks/automodel/README.md for how throughput is made comparable.
#ifndef ATTUNE_PLUGINS_STACKS_AUTOMODEL_LOG_PARSER_H_
#define ATTUNE_PLUGINS_STACKS_AUTOMODEL_LOG_PARSER_H_

#include <string_view>
#include <vector>

#include "attune/metrics.h"
#include "attune/stack.h"
#include "attune/support/log_lines.h"
#include "knowledge.h"

namespace attune::automodel {

// Extra fields each IterationSample carries (IterationSample::extra):
//   "tps"               total tokens/s as printed (absent when only the /gpu form is printed)
//   "tps_per_gpu"       the printed per-GPU figure (divided by DP×CP only)
//   "mem_gib", "lr", "num_label_tokens", "epoch"
//   "contaminated"      1 when a validation or checkpoint line preceded it (its time includes them)
LogParse ParseAutoModelLog(std::string_view log);
// The same, from a log already split by support::SplitLogLines (triage splits it once).
LogParse ParseAutoModelLines(const std::vector<support::LogLine>& lines);

// Median throughput per physical GPU over the clean steps (drops the first step and contaminated
// ones). `dp_cp` is DP×CP of the recipe, used to turn a printed per-replica figure back into a
// total; `world` the number of GPUs; `tokens_per_step` a fallback for step time (0 = unknown).
// With the mesh unknown (`world` 0: a log measured without its recipe), the log's own "/gpu"
// figure is taken as it is: AutoModel divides the total by DP×CP, which is per GPU when TP and PP
// are 1; a step line without one measures nothing.
Result<Measurement> MeasureAutoModel(const LogParse& parse, long long dp_cp, long long world,
                                     double tokens_per_step);

Failure TriageAutoModel(std::string_view log, const JobEnd& end, const Knowledge& knowledge);

}  // namespace attune::automodel

#endif  // ATTUNE_PLUGINS_STACKS_AUTOMODEL_LOG_PARSER_H_
