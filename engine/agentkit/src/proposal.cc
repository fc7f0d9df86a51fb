// Copyright attune authors.
#include "attune/agentkit/proposal.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "attune/support/json_text.h"

namespace attune::agentkit {
namespace {

using nlohmann::json;

std::string Shown(const std::optional<std::string>& v) { return v ? "\"" + *v + "\"" : "null"; }

// The last top-level object in `text` that parses; the objects inside it (its changes) are never
// taken for the answer.
std::optional<json> LastObjectIn(const std::string& text) {
  std::vector<json> objects = support::JsonObjectsIn(text);
  if (objects.empty()) return std::nullopt;
  return std::move(objects.back());
}

// The bodies of ```json ... ``` (or plain ```) fenced blocks, in order.
std::vector<std::string> FencedBlocks(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = text.find("```", pos)) != std::string::npos) {
    size_t body = text.find('\n', pos);
    if (body == std::string::npos) break;
    size_t end = text.find("```", body);
    if (end == std::string::npos) break;
    out.push_back(text.substr(body + 1, end - body - 1));
    pos = end + 3;
  }
  return out;
}

bool SameChanges(std::vector<Change> a, std::vector<Change> b) {
  auto by_key = [](const Change& x, const Change& y) { return x.key < y.key; };
  std::sort(a.begin(), a.end(), by_key);
  std::sort(b.begin(), b.end(), by_key);
  return a == b;
}

// Why `change` is not legal, given the legal moves that touch its key.
std::string ExplainIllegal(const CampaignView& view, const Change& change) {
  auto current = GetValue(view.leader, change.key);
  if (current != change.from) {
    return "the change of " + change.key + " says from " + Shown(change.from) +
           " but the leader has " + Shown(current);
  }
  std::set<std::string> targets;
  for (const Move& m : view.legal_moves) {
    for (const Change& c : m.changes) {
      if (c.key == change.key) targets.insert(Shown(c.to));
    }
  }
  if (targets.empty()) {
    return "no legal move changes " + change.key +
           " (it is not a lever from the leader, or the "
           "gate refuses it)";
  }
  std::string list;
  for (const auto& t : targets) list += (list.empty() ? "" : ", ") + t;
  return change.key + " -> " + Shown(change.to) + " is not a legal move; legal targets: " + list +
         " (a lever that moves several keys needs all of them together)";
}

Status ValidateWithoutMoves(const CampaignView& view, const Proposal& p) {
  for (const Change& c : p.changes) {
    auto current = GetValue(view.leader, c.key);
    if (current != c.from) {
      return Status::InvalidArgument("the change of " + c.key + " says from " + Shown(c.from) +
                                     " but the leader has " + Shown(current));
    }
    bool in_catalog = std::any_of(view.levers.begin(), view.levers.end(), [&](const Lever& l) {
      return std::find(l.keys.begin(), l.keys.end(), c.key) != l.keys.end();
    });
    if (!in_catalog) {
      return Status::InvalidArgument(c.key + " is not a key of any lever in the catalog");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<json> ExtractLastJsonObject(const std::string& text) {
  auto blocks = FencedBlocks(text);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    if (auto j = LastObjectIn(*it)) return *j;
  }
  if (auto j = LastObjectIn(text)) return *j;
  return Status::InvalidArgument(
      "the answer contains no JSON object; end it with one JSON object such as "
      "{\"changes\":[{\"key\":\"--flag\",\"from\":\"1\",\"to\":\"2\"}],\"lever_id\":\"...\","
      "\"rationale\":\"...\"} or {\"done\":true,\"rationale\":\"...\"}");
}

Result<Proposal> ParseAnswer(const std::string& text) {
  ATTUNE_ASSIGN_OR_RETURN(json j, ExtractLastJsonObject(text));
  if (j.contains("meta")) j.erase("meta");  // meta is the plugin's, never the model's
  auto p = ProposalFromJson(j);
  if (!p.ok()) {
    return Status::InvalidArgument("the JSON answer is malformed: " + p.status().message() +
                                   " (found " + j.dump().substr(0, 300) + ")");
  }
  return p;
}

Status ValidateProposal(const CampaignView& view, Proposal* proposal) {
  if (proposal->done) return Status::Ok();
  if (!proposal->base_id.empty() && proposal->base_id != view.leader_id) {
    // A move from another measured candidate: checked against that candidate's legal moves.
    std::string ids;
    for (const ParentView& p : view.parents) {
      if (p.id != proposal->base_id) {
        ids += (ids.empty() ? "" : ", ") + p.id;
        continue;
      }
      CampaignView from = view;
      from.leader = p.recipe;
      from.leader_id = p.id;
      from.legal_moves = p.legal_moves;
      from.parents.clear();
      return ValidateProposal(from, proposal);
    }
    return Status::InvalidArgument("\"base\": \"" + proposal->base_id +
                                   "\" is not a measured candidate a proposal may start from (" +
                                   (ids.empty() ? "there are none besides the leader" : "these are: " + ids) +
                                   "); leave \"base\" out to change the leader " + view.leader_id);
  }
  if (view.legal_moves.empty()) return ValidateWithoutMoves(view, *proposal);
  for (const Move& m : view.legal_moves) {
    if (!SameChanges(m.changes, proposal->changes)) continue;
    if (proposal->lever_id.empty()) proposal->lever_id = m.lever_id;
    return Status::Ok();
  }
  for (const Change& c : proposal->changes) {
    bool part_of_a_move =
        std::any_of(view.legal_moves.begin(), view.legal_moves.end(), [&](const Move& m) {
          return std::find(m.changes.begin(), m.changes.end(), c) != m.changes.end();
        });
    if (!part_of_a_move) return Status::InvalidArgument(ExplainIllegal(view, c));
  }
  return Status::InvalidArgument("the changes " + DescribeChanges(proposal->changes) +
                                 " do not form one legal move; copy one move's changes exactly");
}

}  // namespace attune::agentkit
