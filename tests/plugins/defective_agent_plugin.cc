// An agent plugin, "testagent", with one contract defect chosen by ATTUNE_TESTAGENT_DEFECT, for
// the agent conformance suite's own test: `attune agent check` must pass it with no defect and
// name the broken clause for each defect (tests/integration/conformance/conformance_test.py).
// Without a defect it proposes the first legal move whose result the history has not seen, and
// answers done when there is none.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "attune/agent.h"
#include "attune/plugin.h"

namespace {

using namespace attune;

std::string Defect() {
  const char* d = std::getenv("ATTUNE_TESTAGENT_DEFECT");
  return d ? d : "";
}

// The recipes the history has seen, as JSON text (the baseline, the leader, every candidate).
bool Seen(const CampaignView& view, const Recipe& recipe) {
  std::string id = RecipeToJson(recipe).dump();
  if (RecipeToJson(view.baseline).dump() == id || RecipeToJson(view.leader).dump() == id) return true;
  for (const CandidateRecord& r : view.history) {
    Recipe tried = view.baseline;
    if (ApplyChanges(&tried, r.changes).ok() && RecipeToJson(tried).dump() == id) return true;
  }
  return false;
}

class DefectiveAgent : public Agent {
 public:
  std::string Name() const override { return "testagent"; }

  Result<Proposal> Propose(const CampaignView& view) override {
    const std::string defect = Defect();
    if (defect == "throws") throw std::runtime_error("testagent: thrown on purpose");
    if (defect == "hangs") std::this_thread::sleep_for(std::chrono::seconds(30));
    Proposal p;
    p.meta = {{"agent", "testagent"}};
    if (defect == "meta_array") p.meta = nlohmann::json::array({1, 2});
    const Move* pick = nullptr;
    for (const Move& m : view.legal_moves) {
      Recipe next = view.leader;
      if (!ApplyChanges(&next, m.changes).ok()) continue;
      if (defect == "repeats" || !Seen(view, next)) {
        pick = &m;
        break;
      }
    }
    if (pick == nullptr) {
      if (defect == "no_moves_stale") {
        // Claims the recipe has a value for a flag it does not have.
        p.changes = {Change{"--made-up-flag", std::string("7"), std::string("8")}};
        return p;
      }
      p.done = true;
      p.rationale = "every legal move is tried";
      return p;
    }
    p.changes = pick->changes;
    p.lever_id = pick->lever_id;
    p.rationale = "the first untried legal move: " + pick->summary;
    if (defect == "done_with_changes") p.done = true;
    if (defect == "stale_from") p.changes.front().from = std::string("stale-value");
    if (defect == "wrong_value") p.changes.front().to = std::string("12345678");
    if (defect == "unlocked") {
      // Proposes a move that the view lists as legal only after another one (Move::unlocks), as
      // if it were legal now; with no such move in the view it stays the first legal move.
      for (const Move& m : view.legal_moves) {
        if (m.unlocks.empty()) continue;
        p.changes = m.unlocks.front().changes;
        p.lever_id = m.unlocks.front().lever_id;
        break;
      }
    }
    if (defect == "two_levers") {
      for (const Move& m : view.legal_moves) {
        if (m.lever_id == pick->lever_id) continue;
        bool overlaps = false;
        for (const Change& a : m.changes) {
          for (const Change& b : p.changes) overlaps = overlaps || a.key == b.key;
        }
        if (overlaps) continue;
        p.changes.insert(p.changes.end(), m.changes.begin(), m.changes.end());
        break;
      }
    }
    return p;
  }
};

Result<std::unique_ptr<Plugin>> Create(const PluginContext&) {
  if (Defect() == "no_restart" && std::getenv("ATTUNE_TESTAGENT_CREATED") != nullptr) {
    return Status::FailedPrecondition("testagent: refuses a second object (defect no_restart)");
  }
  setenv("ATTUNE_TESTAGENT_CREATED", "1", 1);
  return std::unique_ptr<Plugin>(new DefectiveAgent());
}

}  // namespace

ATTUNE_PLUGIN(attune::PluginKind::kAgent, "testagent", "0.1.0", Create)
