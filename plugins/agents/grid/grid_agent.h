// Copyright attune authors.
//
// GridAgent: exhaustive search over a small declared space, for comparison and for users who
// want a fixed sweep.
//
// Config (`with:`):
//   space:                                   keys to the values to try
//     --micro-batch-size: ["1", "2", "4"]
//     --recompute-granularity: [null, selective, full]
// Values are strings; numbers and booleans are turned into their text; null means "absent"
// (the key is removed) and "" means a bare switch that is set.
//
// Semantics:
//  - The points are the cartesian product of the value lists. Keys are taken in lexicographic
//    order and the LAST key varies fastest; values in the order listed. Point i is the i-th
//    combination in that order (0-based). At most kMaxGridPoints points.
//  - Each proposal is the next point in that order, expressed as the changes from the CURRENT
//    leader to that point (keys outside the space keep the leader's values). So after a new
//    leader, later points build on it.
//  - A point is skipped when it was proposed before (its index is recorded in the proposal's
//    meta as `grid_point`, which lets a restarted agent continue from the view alone), when it
//    equals the leader, or when its recipe was already tried or contains a banned change
//    (history.h).
//  - Done when every point is proposed or skipped, or the budget left is below one job's cost.
//  - lever_id is the catalog lever that touches the first changed key ("grid" when none does).
// The agent does not validate points; the engine's gate refuses illegal ones.
#ifndef ATTUNE_PLUGINS_AGENTS_GRID_GRID_AGENT_H_
#define ATTUNE_PLUGINS_AGENTS_GRID_GRID_AGENT_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attune/agent.h"

namespace attune::agents {

inline constexpr long long kMaxGridPoints = 100000;

struct GridSpace {
  // Sorted by key; each value std::nullopt for "absent".
  std::vector<std::pair<std::string, std::vector<std::optional<std::string>>>> axes;
  long long Size() const;
  // The key values of point `index` (0 <= index < Size()).
  std::vector<std::pair<std::string, std::optional<std::string>>> Point(long long index) const;
};

// Parses `with:`; errors name the key and what was expected.
Result<GridSpace> ParseGridConfig(const nlohmann::json& with);

class GridAgent : public Agent {
 public:
  explicit GridAgent(GridSpace space) : space_(std::move(space)) {}
  std::string Name() const override { return "grid"; }
  Result<Proposal> Propose(const CampaignView& view) override;

 private:
  GridSpace space_;
};

Result<std::unique_ptr<Plugin>> CreateGridAgent(const PluginContext& context);

}  // namespace attune::agents

#endif  // ATTUNE_PLUGINS_AGENTS_GRID_GRID_AGENT_H_
