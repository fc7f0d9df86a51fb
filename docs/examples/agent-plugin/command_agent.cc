#include "command_agent.h"

#include "attune/agentkit/prompt.h"
#include "attune/agentkit/proposal.h"
#include "attune/support/process.h"

namespace command_agent {

using attune::Result;
using attune::Status;

namespace {

// The end of a long text, for error messages.
std::string Tail(const std::string& text, size_t n = 400) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

}  // namespace

Result<std::string> CommandAgent::Ask(const std::string& question) const {
  attune::support::ProcessOptions po;
  po.input = question;
  po.timeout_s = options_.timeout_s;
  po.cwd = options_.cwd;
  po.max_output = 1 << 20;
  po.kill_leftovers = true;  // nothing the program started outlives its answer
  ATTUNE_ASSIGN_OR_RETURN(attune::support::ProcessResult r,
                          attune::support::RunProcess(options_.command, po));
  const std::string program = options_.command.front();
  if (r.timed_out) {
    return Status::DeadlineExceeded(program + " gave no answer within " +
                                    std::to_string(options_.timeout_s) + " s; it was killed");
  }
  if (r.exit_code != 0) {
    return Status::Unavailable(program + " exited with " +
                               (r.signal ? "signal " + std::to_string(r.signal)
                                         : "status " + std::to_string(r.exit_code)) +
                               "; its stderr ends: " + Tail(r.err));
  }
  return r.out;
}

Result<attune::Proposal> CommandAgent::Propose(const attune::CampaignView& view) {
  const std::string question = attune::agentkit::BuildProposalPrompt(view);
  // One retry: the second question carries what was wrong with the first answer.
  std::string error;
  std::string answer;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const std::string asked =
        attempt == 1 ? question : question + "\n\n" + attune::agentkit::BuildRetryPrompt(error);
    ATTUNE_ASSIGN_OR_RETURN(answer, Ask(asked));
    auto proposal = attune::agentkit::ParseAnswer(answer);
    Status valid = proposal.ok() ? attune::agentkit::ValidateProposal(view, &*proposal)
                                 : proposal.status();
    if (valid.ok()) {
      proposal->meta = nlohmann::json{{"program", options_.command.front()}, {"attempts", attempt}};
      return proposal;
    }
    error = valid.message();
  }
  return Status::InvalidArgument("the answer of " + options_.command.front() +
                                 " is not a usable proposal after a retry: " + error +
                                 "; it answered: " + Tail(answer));
}

}  // namespace command_agent
