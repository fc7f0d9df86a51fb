// Copyright attune authors.
#include "attune/agentkit/prompt.h"

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

namespace attune::agentkit {
namespace {

std::string Num(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string Pct(double fraction) { return Num(fraction * 100, 3) + "%"; }

std::string DescribeMeasurement(const std::optional<Measurement>& m) {
  if (!m) return "not measured yet";
  std::string s = Num(m->tokens_per_s_per_gpu, 5) + " tokens/s/GPU, step " +
                  Num(m->step_time_s, 4) + " s, cv " + Pct(m->cv);
  if (m->tflops_per_gpu) s += ", " + Num(*m->tflops_per_gpu, 4) + " TFLOP/s/GPU";
  if (m->peak_memory_gib) s += ", peak memory " + Num(*m->peak_memory_gib, 4) + " GiB";
  return s;
}

void Recipe(std::ostringstream& o, const char* title, const attune::Recipe& r) {
  o << "### " << title << " (" << r.topology.nodes << " node(s) x " << r.topology.gpus_per_node
    << " GPU(s)" << (r.topology.gpu_type.empty() ? "" : " " + r.topology.gpu_type) << ")\n";
  for (const auto& key : Keys(r)) {
    auto v = GetValue(r, key);
    o << "  " << key << " = " << (v ? (v->empty() ? "(set)" : *v) : "(absent)") << "\n";
  }
}

void Rules(std::ostringstream& o, const CampaignView& v) {
  o << "## Rules\n"
       "- Propose ONE legal move from the list below (copy its changes exactly, including "
       "\"from\"), "
       "or declare done. The engine benchmarks it; you will be asked again with the result.\n"
       "- A candidate replaces the leader only when it is faster by more than the noise band ("
    << Pct(v.noise_band)
    << "). Smaller gains are noise; do not chase them.\n"
       "- The correctness gate (outside your control) refuses changes that alter the training "
       "objective, and a paired-loss check compares the first losses with the baseline. Every "
       "listed move already passes the static gate.\n"
       "- Read the diagnosis: prefer levers that address what limits the leader. Do not retry a "
       "change that was refused, failed or was slower unless something relevant changed.\n"
       "- Declare done when no listed move is promising, or the budget cannot pay for another "
       "job.\n"
       "- You may inspect with read-only commands (attune status . --json, attune events ., attune "
       "stack show "
    << v.stack
    << ", attune log triage, cat/grep/head/tail on logs). You cannot edit files or "
       "launch jobs.\n\n";
}

void Budget(std::ostringstream& o, const CampaignView& v) {
  o << "## Budget\n- GPU-hours left: " << Num(v.budget_left_gpu_hours) << " of "
    << Num(v.budget_total_gpu_hours) << "; one more job costs about "
    << Num(v.job_cost_estimate_gpu_hours) << " GPU-hours.\n- Candidates left: " << v.candidates_left
    << ".\n\n";
}

void Diagnosis(std::ostringstream& o, const CampaignView& v) {
  o << "## Diagnosis of the leader\n";
  if (v.diagnosis.empty()) o << "- none recorded\n";
  for (const auto& d : v.diagnosis) {
    o << "- " << d.kind << " (severity " << Num(d.severity, 2) << "): " << d.evidence << "\n";
  }
  o << "\n";
}

void HistoryEntry(std::ostringstream& o, const CandidateRecord& c) {
  o << "- #" << c.index << " " << c.candidate_id << " (from " << c.base_id << ", lever "
    << (c.lever_id.empty() ? "?" : c.lever_id) << "): " << DescribeChanges(c.changes) << " => "
    << OutcomeName(c.outcome);
  if (!c.rule_id.empty() && c.rule_id != "ok") o << " [rule " << c.rule_id << "]";
  if (c.speedup_vs_baseline) o << ", speedup x" << Num(*c.speedup_vs_baseline, 4) << " vs baseline";
  if (c.measurement) o << ", " << DescribeMeasurement(c.measurement);
  if (c.failure && c.failure->kind != FailureKind::kNone) {
    o << "; failure " << FailureKindName(c.failure->kind);
    if (!c.failure->evidence.empty()) o << ": \"" << c.failure->evidence.substr(0, 240) << "\"";
    if (!c.failure->hint.empty()) o << " (hint: " << c.failure->hint << ")";
  }
  o << "\n";
}

void History(std::ostringstream& o, const CampaignView& v) {
  o << "## History (" << v.history.size() << " proposal(s))\n";
  if (v.history.empty()) o << "- none yet\n";
  size_t skip = v.history.size() > kMaxHistory ? v.history.size() - kMaxHistory : 0;
  if (skip) o << "- (" << skip << " older entries omitted; see `attune events .`)\n";
  for (size_t i = skip; i < v.history.size(); ++i) HistoryEntry(o, v.history[i]);
  o << "\n";
}

void Moves(std::ostringstream& o, const CampaignView& v) {
  o << "## Legal moves from the leader (" << v.legal_moves.size() << ")\n";
  if (v.legal_moves.empty()) {
    o << "- none listed: change only keys of the levers below, from the leader's current value\n";
  }
  for (size_t i = 0; i < v.legal_moves.size() && i < kMaxMoves; ++i) {
    const Move& m = v.legal_moves[i];
    o << "- lever " << m.lever_id << ": " << ChangesToJson(m.changes).dump();
    if (!m.summary.empty()) o << "  // " << m.summary;
    if (!m.unlocks.empty()) {
      // What it makes legal: a lever not offered now, offered once this move is made.
      std::set<std::string> levers;
      for (const Move& u : m.unlocks) levers.insert(u.lever_id);
      o << "  // makes legal:";
      for (const std::string& l : levers) o << " " << l;
    }
    o << "\n";
  }
  if (v.legal_moves.size() > kMaxMoves) {
    o << "- (" << v.legal_moves.size() - kMaxMoves << " more; see `attune stack show " << v.stack
      << "`)\n";
  }
  o << "\n## Lever catalog\n"
    << "Expected speed and memory are the priors of a lever's forward move (a number going up, a\n"
    << "switch turned on, a value further along its order); the move back is worth the opposite.\n";
  for (const Lever& l : v.levers) {
    o << "- " << l.id << ": " << l.description << " (addresses:";
    for (const auto& a : l.addresses) o << " " << a;
    o << "; expected speed " << Num(l.expected_speed * 100, 3) << "%, memory "
      << Num(l.expected_memory * 100, 3) << "%";
    for (const auto& [key, values] : l.order) {
      o << "; order of " << key << ":";
      for (size_t i = 0; i < values.size(); ++i) {
        o << (i ? " < " : " ") << (values[i].empty() ? std::string("(absent)") : values[i]);
      }
    }
    o << ")\n";
  }
  o << "\n";
}

}  // namespace

std::string AnswerFormat() {
  return "## Answer format\n"
         "End your final message with exactly one JSON object in a ```json fenced block, either\n"
         "```json\n"
         "{\"changes\":[{\"key\":\"--micro-batch-size\",\"from\":\"1\",\"to\":\"2\"}],"
         "\"lever_id\":\"micro_batch_size\",\"rationale\":\"why this should be faster\"}\n"
         "```\n"
         "or\n"
         "```json\n"
         "{\"done\":true,\"rationale\":\"why nothing promising is left\"}\n"
         "```\n"
         "\"from\" and \"to\" are strings (null means absent). Nothing after the block.\n";
}

std::string BuildProposalPrompt(const CampaignView& v) {
  std::ostringstream o;
  o << "You are tuning the training throughput (tokens/s/GPU) of an LLM training recipe with "
       "attune. Campaign "
    << v.campaign_id << ", stack " << v.stack << ", proposal #" << v.proposal_index
    << ". Your working directory is the campaign directory.\n\n";
  Rules(o, v);
  Budget(o, v);
  o << "## Cluster\n- " << v.cluster.device_type << ", " << Num(v.cluster.device_memory_gib, 4)
    << " GiB per device, " << v.cluster.devices_per_node << " per node, up to "
    << v.cluster.max_nodes << " node(s)\n\n## Recipes\n";
  Recipe(o, "Baseline", v.baseline);
  o << "  measured: " << DescribeMeasurement(v.baseline_measurement) << "\n";
  if (v.leader_id != "baseline" && !v.leader_id.empty()) {
    Recipe(o, ("Leader " + v.leader_id).c_str(), v.leader);
  } else {
    o << "### Leader: the baseline\n";
  }
  o << "  measured: " << DescribeMeasurement(v.leader_measurement) << "\n\n";
  Diagnosis(o, v);
  History(o, v);
  if (!v.lessons.empty()) {
    o << "## Lessons from past campaigns\n" << v.lessons.substr(0, 8000) << "\n\n";
  }
  Moves(o, v);
  o << AnswerFormat();
  std::string s = o.str();
  if (s.size() > kMaxPromptBytes) {
    s = s.substr(0, kMaxPromptBytes - AnswerFormat().size() - 40) + "\n...(truncated)\n\n" +
        AnswerFormat();
  }
  return s;
}

std::string BuildRetryPrompt(const std::string& error) {
  return "Your last answer could not be used: " + error +
         "\nAnswer again. Propose exactly one legal move from the list you were given (copy its "
         "changes exactly), or declare done.\n\n" +
         AnswerFormat();
}

}  // namespace attune::agentkit
