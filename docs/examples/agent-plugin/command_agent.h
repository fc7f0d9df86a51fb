// An agent that asks any program for each proposal: the program reads attune's question (the
// prompt every coding agent gets, agentkit::BuildProposalPrompt) on stdin and writes its answer
// (text whose last JSON object is the proposal) on stdout. A script, a local model's CLI or a
// person's editor can be an agent this way.
#ifndef COMMAND_AGENT_H_
#define COMMAND_AGENT_H_

#include <string>
#include <vector>

#include "attune/agent.h"

namespace command_agent {

struct Options {
  std::vector<std::string> command;  // argv; argv[0] is looked up in PATH
  double timeout_s = 60;             // per call; the program's process group is killed after it
  std::string cwd;                   // where it runs (empty: attune's working directory)
};

class CommandAgent : public attune::Agent {
 public:
  explicit CommandAgent(Options options) : options_(std::move(options)) {}
  std::string Name() const override { return "command"; }
  attune::Result<attune::Proposal> Propose(const attune::CampaignView& view) override;

 private:
  // One run of the program with `question` on stdin: its stdout, or why there is none.
  attune::Result<std::string> Ask(const std::string& question) const;

  Options options_;
};

}  // namespace command_agent

#endif  // COMMAND_AGENT_H_
