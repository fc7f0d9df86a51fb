// REPORT.md's candidate tree: which candidate each one was proposed from (its parent) and the one
// lever it changed, drawn as a text tree so that it reads the same in a terminal and on a forge.
#include <fmt/format.h>

#include <map>
#include <set>

#include "campaign/events.h"
#include "report/report_util.h"

namespace attune::report_internal {

namespace {

constexpr size_t kMaxTreeLines = 500;

struct TreeWriter {
  const CampaignState& state;
  std::map<std::string, std::vector<const CandidateRecordState*>> children;
  std::set<std::string> drawn;
  std::string out;
  size_t lines = 0;
  size_t left_out = 0;

  std::string Line(const CandidateRecordState& c) const {
    std::string text = c.id;
    if (!c.lever_id.empty()) text += fmt::format(" {}", c.lever_id);
    const std::string change = DescribeChanges(c.changes);
    if (!change.empty()) text += fmt::format(": {}", change);
    text += fmt::format("  [{}]", VerdictText(state, c));
    if (c.tokens_per_s_per_gpu)
      text += fmt::format(" {} tokens/s/GPU", Fixed(*c.tokens_per_s_per_gpu, 1));
    if (c.speedup_vs_baseline)
      text += fmt::format(" ({} vs baseline)", Percent(*c.speedup_vs_baseline));
    return text;
  }

  void Draw(const std::string& id, const std::string& prefix) {
    auto it = children.find(id);
    if (it == children.end()) return;
    const auto& kids = it->second;
    for (size_t i = 0; i < kids.size(); ++i) {
      const CandidateRecordState& c = *kids[i];
      if (!drawn.insert(c.id).second) continue;  // a malformed log cannot make it loop
      const bool last = i + 1 == kids.size();
      if (lines >= kMaxTreeLines) {
        ++left_out;
      } else {
        out += fmt::format("{}{}{}\n", prefix, last ? "\u2514\u2500 " : "\u251c\u2500 ", Line(c));
        ++lines;
      }
      Draw(c.id, fmt::format("{}{}", prefix, last ? "   " : "\u2502  "));
    }
  }
};

}  // namespace

std::string CandidateTreeSection(const CampaignState& state) {
  std::string out = "## Candidate tree\n\n";
  if (state.candidates.empty()) return out + "Nothing was proposed.\n\n";
  TreeWriter w{state, {}, {}, "", 0, 0};
  for (const auto& c : state.candidates) {
    const bool known = c.base_id == events::kBaselineId || state.FindCandidate(c.base_id);
    w.children[known ? c.base_id : std::string(events::kBaselineId)].push_back(&c);
  }
  auto base = state.MeasurementOf(events::kBaselineId);
  w.out = fmt::format(
      "{}{}{}\n", events::kBaselineId, state.leader_id == events::kBaselineId ? "  [leader]" : "",
      base ? fmt::format(" {} tokens/s/GPU", Fixed(base->tokens_per_s_per_gpu, 1)) : "");
  w.Draw(events::kBaselineId, "");
  out +=
      "Each candidate is drawn under the candidate it was proposed from and names the lever it "
      "changed; the verdict and the measured throughput follow.\n\n```text\n" +
      w.out + "```\n";
  if (w.left_out > 0) {
    out += fmt::format("\n{} more candidate(s) are left out here; RESULTS.md lists every one.\n",
                       w.left_out);
  }
  return out + "\n";
}

}  // namespace attune::report_internal
