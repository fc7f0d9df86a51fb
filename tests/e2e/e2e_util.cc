// Helpers of the end-to-end campaign tests.
#include "e2e_util.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <streambuf>

#include "steps/campaign_runner.h"

namespace attune::e2e {
namespace {

namespace fs = std::filesystem;

// Counts lines written to it and requests a stop after `limit` of them (one line per event in
// --json mode), so a campaign can be interrupted at an exact event.
class StopAfterLines : public std::streambuf {
 public:
  StopAfterLines(std::atomic<bool>* stop, int limit) : stop_(stop), limit_(limit) {}

 protected:
  int overflow(int c) override {
    if (c == '\n' && ++lines_ >= limit_ && limit_ > 0) stop_->store(true);
    return c;
  }

 private:
  std::atomic<bool>* stop_;
  int limit_;
  int lines_ = 0;
};

}  // namespace

const std::string kWorkflow = std::string(ATTUNE_SOURCE_DIR) + "/tests/e2e/workflows/sim_campaign.yaml";

fs::path FreshDir(const std::string& tag) {
  fs::path root = fs::temp_directory_path() / ("attune_e2e_" + std::to_string(::getpid()) + "_" + tag);
  fs::remove_all(root);
  fs::create_directories(root);
  return root / "e2e";
}

Run RunIt(const fs::path& dir, int stop_after_events, const std::string& workflow,
          const std::string& campaign_id) {
  std::atomic<bool> stop{false};
  StopAfterLines counter(&stop, stop_after_events);
  std::ostream out(&counter);
  std::ostringstream err;
  RunOptions o;
  o.workflow_path = workflow;
  o.campaign_dir = dir.string();
  o.campaign_id = campaign_id;  // "": the default (the directory's name and random digits)
  o.plugin_paths = {ATTUNE_PLUGIN_DIR};
  o.json = true;
  o.out = &out;
  o.err = &err;
  o.stop_requested = &stop;
  o.ack_file = (dir.parent_path() / "acks").string();
  return Run{RunCampaign(o), err.str()};
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string WorkflowVariant(const fs::path& dir, const std::string& name, const Replacements& replacements) {
  std::string text = Slurp(kWorkflow);
  for (const auto& [from, to] : replacements) {
    INFO("replacing '" << from << "'");
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
  }
  const fs::path wf = dir.parent_path() / (name + ".yaml");
  std::ofstream(wf) << text;
  fs::copy_file(fs::path(kWorkflow).parent_path() / "llama8b_h100.yaml", dir.parent_path() / "llama8b_h100.yaml");
  return wf.string();
}

std::string WorkflowVariant(const fs::path& dir, const std::string& name, const std::string& from,
                            const std::string& to) {
  return WorkflowVariant(dir, name, Replacements{{from, to}});
}

std::vector<EventRecord> ReadEvents(const fs::path& dir) {
  EventLogOptions lo;
  lo.read_only = true;
  lo.create_if_missing = false;
  auto log = EventLog::Open(dir.string(), lo);
  REQUIRE(log.ok());
  auto events = (*log)->ReadFrom(1);
  REQUIRE(events.ok());
  return *events;
}

CampaignState FoldDir(const fs::path& dir) {
  auto state = CampaignState::Fold(ReadEvents(dir));
  REQUIRE(state.ok());
  return *state;
}

}  // namespace attune::e2e
