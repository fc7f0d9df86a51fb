// A minimal agent shared by the test plugins: it proposes nothing ("done") and offers one CLI
// command, `echo`, that prints its arguments.
#ifndef ATTUNE_TESTS_PLUGINS_TEST_AGENT_H_
#define ATTUNE_TESTS_PLUGINS_TEST_AGENT_H_

#include <ostream>
#include <string>
#include <utility>

#include "attune/agent.h"

namespace attune::testplugin {

class TestAgent : public Agent {
 public:
  explicit TestAgent(std::string name) : name_(std::move(name)) {}
  std::string Name() const override { return name_; }
  std::vector<PluginCommand> Commands() const override {
    return {{"echo", "print the arguments, one per line"}};
  }
  int RunCommand(const std::string& command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) override {
    if (command != "echo") return Agent::RunCommand(command, args, out, err);
    for (const auto& a : args) out << a << "\n";
    return 0;
  }
  Result<Proposal> Propose(const CampaignView&) override {
    Proposal p;
    p.done = true;
    p.rationale = "test agent";
    return p;
  }

 private:
  std::string name_;
};

}  // namespace attune::testplugin

#endif  // ATTUNE_TESTS_PLUGINS_TEST_AGENT_H_
