// Copyright attune authors.
//
// Formatting helpers shared by the report renderers (internal to engine/src/report).
#ifndef ATTUNE_ENGINE_REPORT_REPORT_UTIL_H_
#define ATTUNE_ENGINE_REPORT_REPORT_UTIL_H_

#include <functional>
#include <string>

#include "campaign/campaign_state.h"

namespace attune::report_internal {

// "+12.3%" / "-4.0%" for a ratio 1.123 / 0.96.
std::string Percent(double ratio);
// "1.234x"
std::string Times(double ratio);
// Fixed decimals.
std::string Fixed(double v, int decimals);
// Escapes '|' and newlines for a Markdown table cell.
std::string Cell(const std::string& s);
// The change a candidate made, relative to its base ("" for the baseline).
std::string ChangeText(const CampaignState& state, const std::string& id);
// GPU-hours charged by all jobs of `id` (any purpose).
double ChargedFor(const CampaignState& state, const std::string& id);
// The failure kind (or the outcome) of a candidate, for the verdict column.
std::string VerdictText(const CampaignState& state, const CandidateRecordState& c);
// The same with the jobs found through `find_job` (a map, when rendering thousands of candidates).
std::string VerdictText(const CampaignState& state, const CandidateRecordState& c,
                        const std::function<const JobRecord*(const std::string&)>& find_job);
// REPORT.md's "Candidate tree" section: each candidate under the one it was proposed from.
std::string CandidateTreeSection(const CampaignState& state);

}  // namespace attune::report_internal

#endif  // ATTUNE_ENGINE_REPORT_REPORT_UTIL_H_
