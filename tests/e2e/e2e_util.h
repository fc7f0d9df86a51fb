// Helpers of the end-to-end campaign tests: fresh campaign folders, a RunCampaign call that can
// stop after N events, workflow variants and the fold of a campaign's log.
#ifndef ATTUNE_TESTS_E2E_E2E_UTIL_H_
#define ATTUNE_TESTS_E2E_E2E_UTIL_H_

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "campaign/campaign_state.h"
#include "log/event_log.h"

namespace attune::e2e {

// The workflow the end-to-end tests run: a Llama 3 8B recipe on the simulated cluster.
extern const std::string kWorkflow;

// An empty folder for one test (removed first); the campaign folder inside it.
std::filesystem::path FreshDir(const std::string& tag);

struct Run {
  int exit_code = -1;
  std::string err;
};

// Runs (or resumes) the campaign in `dir` in-process with the built plugins; with
// stop_after_events > 0 a stop is requested after that many events were printed.
Run RunIt(const std::filesystem::path& dir, int stop_after_events = 0,
          const std::string& workflow = kWorkflow, const std::string& campaign_id = "e2e");

std::string Slurp(const std::filesystem::path& p);

// kWorkflow with each `from` replaced by its `to` (each must occur), written beside `dir` with
// its recipe; its path.
using Replacements = std::vector<std::pair<std::string, std::string>>;
std::string WorkflowVariant(const std::filesystem::path& dir, const std::string& name,
                            const Replacements& replacements);
std::string WorkflowVariant(const std::filesystem::path& dir, const std::string& name,
                            const std::string& from, const std::string& to);

// Every event of the campaign log in `dir`, read without writing.
std::vector<EventRecord> ReadEvents(const std::filesystem::path& dir);
// The campaign state folded from the log in `dir`.
CampaignState FoldDir(const std::filesystem::path& dir);

}  // namespace attune::e2e

#endif  // ATTUNE_TESTS_E2E_E2E_UTIL_H_
