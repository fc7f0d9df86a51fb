// Broken on purpose while ATTUNE_TEST_AGENT_THROWS is set: its agent's Propose throws, as a buggy
// plugin might, so that the tests see the engine turn the exception into a paused campaign that
// goes on once the cause is gone (the variable unset).
#include <cstdlib>
#include <stdexcept>

#include "test_agent.h"

namespace {

class ThrowingAgent : public attune::testplugin::TestAgent {
 public:
  ThrowingAgent() : TestAgent("throwing-propose") {}
  attune::Result<attune::Proposal> Propose(const attune::CampaignView& view) override {
    if (std::getenv("ATTUNE_TEST_AGENT_THROWS") != nullptr) {
      throw std::out_of_range("boom from the throwing-propose test agent");
    }
    return TestAgent::Propose(view);
  }
};

attune::Result<std::unique_ptr<attune::Plugin>> Create(const attune::PluginContext&) {
  return std::unique_ptr<attune::Plugin>(new ThrowingAgent());
}

}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "throwing-propose", "0.0.1", Create)
