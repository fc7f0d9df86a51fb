// Copyright attune authors.
//
// Failure classification (triage.yaml signatures, then hang detection from log silence and the
// launcher's report) and diagnosis of what limits a successful run.
#ifndef ATTUNE_PLUGINS_STACKS_MEGATRON_TRIAGE_H_
#define ATTUNE_PLUGINS_STACKS_MEGATRON_TRIAGE_H_

#include <string_view>
#include <vector>

#include "attune/cluster.h"
#include "attune/metrics.h"
#include "attune/recipe.h"
#include "attune/stack.h"
#include "knowledge.h"

namespace attune::megatron {

// Progress for the hang rule comes from Megatron's iteration records, or from `progress` when a
// stack built on Megatron (slime) reads its own records and passes them.
Failure TriageLog(const TriageSpec& spec, std::string_view log, const JobEnd& end,
                  const std::vector<support::ProgressRecord>* progress = nullptr);
// The same, from a log already split by support::SplitLogLines.
Failure TriageLines(const TriageSpec& spec, const std::vector<support::LogLine>& lines,
                    const JobEnd& end, const std::vector<support::ProgressRecord>* progress = nullptr);

std::vector<Diagnosis> DiagnoseRun(const Recipe& recipe, const Measurement& measurement,
                                   const LogParse& parse, const ClusterInfo& cluster);

}  // namespace attune::megatron

#endif  // ATTUNE_PLUGINS_STACKS_MEGATRON_TRIAGE_H_
