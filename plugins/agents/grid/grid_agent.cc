// Copyright attune authors.
#include "grid_agent.h"

#include <algorithm>
#include <set>

#include "attune/support/json_schema.h"
#include "history.h"
#include "options_schema.h"

namespace attune::agents {
namespace {

Result<std::optional<std::string>> ValueOf(const std::string& key, const nlohmann::json& v) {
  if (v.is_null()) return std::optional<std::string>();
  if (v.is_string()) return std::optional<std::string>(v.get<std::string>());
  if (v.is_boolean()) return std::optional<std::string>(v.get<bool>() ? "true" : "false");
  if (v.is_number_integer()) return std::optional<std::string>(std::to_string(v.get<long long>()));
  if (v.is_number()) return std::optional<std::string>(v.dump());
  return Status::InvalidArgument("agent 'grid': with.space." + key +
                                 ": values must be strings, numbers, booleans or null; found " +
                                 v.dump());
}

std::set<long long> ProposedPoints(const CampaignView& view) {
  std::set<long long> points;
  for (const CandidateRecord& r : view.history) {
    if (r.agent_meta.is_object() && r.agent_meta.contains("grid_point") &&
        r.agent_meta["grid_point"].is_number_integer()) {
      points.insert(r.agent_meta["grid_point"].get<long long>());
    }
  }
  return points;
}

std::string LeverFor(const CampaignView& view, const std::string& key) {
  for (const Lever& l : view.levers) {
    if (std::find(l.keys.begin(), l.keys.end(), key) != l.keys.end()) return l.id;
  }
  return "grid";
}

std::vector<Change> ChangesTo(const Recipe& leader,
                              const std::vector<std::pair<std::string, std::optional<std::string>>>&
                                  point) {
  std::vector<Change> changes;
  for (const auto& [key, value] : point) {
    std::optional<std::string> now = GetValue(leader, key);
    if (now != value) changes.push_back({key, now, value});
  }
  return changes;
}

}  // namespace

long long GridSpace::Size() const {
  if (axes.empty()) return 0;
  long long n = 1;
  for (const auto& axis : axes) n *= static_cast<long long>(axis.second.size());
  return n;
}

std::vector<std::pair<std::string, std::optional<std::string>>> GridSpace::Point(
    long long index) const {
  std::vector<std::pair<std::string, std::optional<std::string>>> point(axes.size());
  for (size_t i = axes.size(); i-- > 0;) {
    long long n = static_cast<long long>(axes[i].second.size());
    point[i] = {axes[i].first, axes[i].second[index % n]};
    index /= n;
  }
  return point;
}

Result<GridSpace> ParseGridConfig(const nlohmann::json& with) {
  const char* usage = " (expected with: {space: {\"--micro-batch-size\": [\"1\", \"2\"]}})";
  // The declared schema checks keys and types (the same check `attune validate` makes).
  ATTUNE_RETURN_IF_ERROR(support::ValidateOptions(grid::kOptionsSchema, with, "agent 'grid'"));
  if (!with.is_object() || !with.contains("space") || !with["space"].is_object() ||
      with["space"].empty()) {
    return Status::InvalidArgument(std::string("agent 'grid': with.space: missing or empty") +
                                   usage);
  }
  for (const auto& [key, value] : with.items()) {
    if (key != "space") {
      return Status::InvalidArgument("agent 'grid': with." + key + ": unknown key" + usage);
    }
  }
  GridSpace space;
  long long size = 1;
  for (const auto& [key, values] : with["space"].items()) {
    if (!values.is_array() || values.empty()) {
      return Status::InvalidArgument("agent 'grid': with.space." + key +
                                     ": expected a non-empty list of values" + usage);
    }
    std::vector<std::optional<std::string>> list;
    for (const auto& v : values) {
      ATTUNE_ASSIGN_OR_RETURN(std::optional<std::string> value, ValueOf(key, v));
      list.push_back(value);
    }
    size *= static_cast<long long>(list.size());
    if (size > kMaxGridPoints) {
      return Status::InvalidArgument("agent 'grid': with.space has more than " +
                                     std::to_string(kMaxGridPoints) +
                                     " points; shrink the value lists");
    }
    space.axes.emplace_back(key, std::move(list));
  }
  return space;
}

Result<Proposal> GridAgent::Propose(const CampaignView& view) {
  Proposal p;
  p.done = true;
  if (view.job_cost_estimate_gpu_hours > 0 &&
      view.budget_left_gpu_hours < view.job_cost_estimate_gpu_hours) {
    p.rationale = "budget left is below one job's cost estimate";
    return p;
  }
  TriedSet tried = CollectTried(view);
  std::set<long long> proposed = ProposedPoints(view);
  long long size = space_.Size();
  for (long long i = 0; i < size; ++i) {
    if (proposed.count(i) > 0) continue;
    std::vector<Change> changes = ChangesTo(view.leader, space_.Point(i));
    if (AlreadyTried(tried, view.leader, changes)) continue;
    p.done = false;
    p.changes = changes;
    p.lever_id = LeverFor(view, changes.front().key);
    p.rationale = "grid point " + std::to_string(i + 1) + " of " + std::to_string(size) + ": " +
                  DescribeChanges(changes);
    p.meta = {{"grid_point", i}, {"grid_size", size}};
    return p;
  }
  p.rationale = "all " + std::to_string(size) + " grid points are proposed or already tried";
  return p;
}

Result<std::unique_ptr<Plugin>> CreateGridAgent(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(GridSpace space, ParseGridConfig(context.config));
  return std::unique_ptr<Plugin>(std::make_unique<GridAgent>(std::move(space)));
}

}  // namespace attune::agents
