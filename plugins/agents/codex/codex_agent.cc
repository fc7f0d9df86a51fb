// Copyright attune authors.
#include "codex_agent.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <utility>

#include "attune/agentkit/prompt.h"
#include "attune/agentkit/proposal.h"
#include "codex_hooks.h"

namespace attune::agents {
namespace {

constexpr size_t kRawAnswerKept = 2000;  // of an unusable answer, in the error

// The proposal in `text` when it parses and is legal for `view`; otherwise the error for the model.
Result<Proposal> UsableAnswer(const CampaignView& view, const std::string& text) {
  ATTUNE_ASSIGN_OR_RETURN(Proposal p, agentkit::ParseAnswer(text));
  ATTUNE_RETURN_IF_ERROR(agentkit::ValidateProposal(view, &p));
  return p;
}

std::string RawTail(const std::string& text) {
  return text.size() <= kRawAnswerKept ? text : "..." + text.substr(text.size() - kRawAnswerKept);
}

}  // namespace

// What the runs of one Propose used. Codex reports a session's running token total, so each run
// counts what its session's total grew by since it was last known (earlier in this Propose, or as
// recorded in the history for a resumed session).
struct CodexAgent::Attempt {
  int calls = 0;
  int turns = 0;
  int commands = 0;
  CodexUsage used;                                  // by this proposal
  std::map<std::string, CodexUsage> session_total;  // last known total per session
  void Add(const CodexRun& r, bool resumed) {
    ++calls;
    turns += r.turns;
    commands += r.commands;
    CodexUsage before = resumed ? session_total[r.session_id] : CodexUsage{};
    // A smaller total than before (compaction, a rewritten session) counts as nothing used.
    used.input += std::max<int64_t>(0, r.session_usage.input - before.input);
    used.cached_input += std::max<int64_t>(0, r.session_usage.cached_input - before.cached_input);
    used.output += std::max<int64_t>(0, r.session_usage.output - before.output);
    if (!r.session_id.empty()) session_total[r.session_id] = r.session_usage;
  }
};

CodexUsage RecordedSessionUsage(const CampaignView& view, const std::string& session) {
  for (auto it = view.history.rbegin(); it != view.history.rend(); ++it) {
    const auto& m = it->agent_meta;
    if (!m.is_object() || m.value("session_id", "") != session) continue;
    auto count = [&](const char* key) {
      return m.contains(key) && m[key].is_number_integer() ? m[key].get<int64_t>() : 0;
    };
    return {count("session_input_tokens"), count("session_cached_input_tokens"),
            count("session_output_tokens")};
  }
  return {};
}

std::string LastCodexSession(const CampaignView& view) {
  for (auto it = view.history.rbegin(); it != view.history.rend(); ++it) {
    const auto& m = it->agent_meta;
    if (m.is_object() && m.value("agent", "") == "codex" && m.contains("session_id") &&
        m["session_id"].is_string() && !m["session_id"].get<std::string>().empty()) {
      return m["session_id"].get<std::string>();
    }
  }
  return "";
}

CodexAgent::CodexAgent(CodexConfig config, std::function<void(LogLevel, const std::string&)> log)
    : config_(std::move(config)), log_(std::move(log)) {}

void CodexAgent::Log(LogLevel level, const std::string& message) const {
  if (log_) log_(level, message);
}

Result<CodexRun> CodexAgent::RunOnce(const CodexCall& call, const CodexFolders& folders,
                                     Clock::time_point deadline) {
  double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  if (left <= 0) {
    return Status::DeadlineExceeded(
        "codex: no time left of timeout_s=" + std::to_string(config_.timeout_s) + " s");
  }
  support::ProcessOptions options;
  options.env = ChildEnvironment(config_, folders);
  options.cwd = folders.work;
  options.timeout_s = left;
  options.max_output = 64u << 20;  // per stream; a run's events are far smaller
  options.kill_leftovers = true;   // background processes of the agent's tools end with it
  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult p,
                          support::RunProcess(BuildArgv(config_, call), options));
  if (p.timed_out) {
    return Status::DeadlineExceeded(
        "codex: the CLI did not answer within timeout_s=" + std::to_string(config_.timeout_s) +
        " s; its process group was killed (raise `timeout_s:` or check the model endpoint)");
  }
  return ReadRun(p);
}

Result<CodexRun> CodexAgent::RunWithRetries(CodexCall call, const CodexFolders& folders,
                                            Clock::time_point deadline, Attempt* attempt) {
  std::string last_error;
  for (int i = 0; i <= config_.retries; ++i) {
    ATTUNE_ASSIGN_OR_RETURN(CodexRun run, RunOnce(call, folders, deadline));
    attempt->Add(run, !call.resume_session.empty() && run.session_id == call.resume_session);
    if (run.ok) return run;
    last_error = run.error;
    Log(LogLevel::kWarn, "codex: attempt " + std::to_string(i + 1) + " failed: " + run.error);
    // The recorded session may be gone (another machine, a cleaned folder): start afresh.
    call.resume_session.clear();
  }
  return Status::Unavailable("codex: " + std::to_string(config_.retries + 1) +
                             " CLI run(s) failed; last: " + last_error);
}

// Without `namespace:` of its own, the guard confines kubectl to the namespace the launcher's jobs
// run in (the KubeRay launcher's), said once. Explicit options win.
void CodexAgent::AdoptLauncherNamespace(const ClusterInfo& cluster) {
  if (!config_.k8s_namespace.empty() || cluster.k8s_namespace.empty()) return;
  config_.k8s_namespace = cluster.k8s_namespace;
  Log(LogLevel::kInfo, "codex: the guard confines kubectl and helm to namespace '" +
                           cluster.k8s_namespace + "', the launcher's");
}

Result<Proposal> CodexAgent::Propose(const CampaignView& view) {
  if (config_.hooks && config_.attune_binary.empty()) {
    return Status::FailedPrecondition(
        "codex: the hooks need the attune binary's path (PluginContext::attune_binary is empty); "
        "run under `attune`");
  }
  // Said once, when the agent starts working (not when attune loads the plugin to run a hook).
  if (!gaps_logged_) {
    for (const std::string& gap : EnforcementGaps(config_)) Log(LogLevel::kWarn, gap);
    gaps_logged_ = true;
  }
  AdoptLauncherNamespace(view.cluster);
  if (!view.campaign_dir.empty()) config_.campaign_dir = view.campaign_dir;
  if (config_.campaign_dir.empty()) {
    return Status::FailedPrecondition("codex: no campaign directory to work in");
  }
  CodexFolders folders = FoldersFor(config_.campaign_dir);
  std::vector<std::string> warnings;
  ATTUNE_RETURN_IF_ERROR(PrepareFolders(config_, folders, &warnings));
  for (const auto& w : warnings) Log(LogLevel::kWarn, w);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(config_.timeout_s));
  Attempt attempt;
  std::string session = config_.resume ? LastCodexSession(view) : "";
  if (!session.empty()) attempt.session_total[session] = RecordedSessionUsage(view, session);
  CodexCall ask{CodexPrompt(agentkit::BuildProposalPrompt(view), config_, folders), session};
  ATTUNE_ASSIGN_OR_RETURN(CodexRun run, RunWithRetries(ask, folders, deadline, &attempt));
  auto proposal = UsableAnswer(view, run.result);
  if (!proposal.ok()) {
    std::string first = proposal.status().message();
    Log(LogLevel::kWarn, "codex: invalid answer, asking once more: " + first);
    CodexCall retry{agentkit::BuildRetryPrompt(first), run.session_id};
    ATTUNE_ASSIGN_OR_RETURN(run, RunWithRetries(retry, folders, deadline, &attempt));
    proposal = UsableAnswer(view, run.result);
    if (!proposal.ok()) {
      return Status::InvalidArgument(
          "codex: the answer was invalid twice (session " + run.session_id + "); first: " + first +
          "; then: " + proposal.status().message() + "; raw answer: " + RawTail(run.result));
    }
  }
  proposal->meta = {{"agent", "codex"},
                    {"session_id", run.session_id},
                    {"turns", attempt.turns},
                    {"input_tokens", attempt.used.input},
                    {"cached_input_tokens", attempt.used.cached_input},
                    {"output_tokens", attempt.used.output},
                    {"session_input_tokens", run.session_usage.input},
                    {"session_cached_input_tokens", run.session_usage.cached_input},
                    {"session_output_tokens", run.session_usage.output},
                    {"calls", attempt.calls},
                    {"commands", attempt.commands},
                    {"model", config_.model},
                    {"resumed_session", !session.empty()}};
  return proposal;
}

std::vector<PluginCommand> CodexAgent::Commands() const {
  return {
      {"guard", "the PreToolUse hook: judges one tool call against the campaign's guard policy"},
      {"stop", "the Stop hook: keeps the agent working while the campaign has budget left"}};
}

int CodexAgent::RunCommand(const std::string& command, const std::vector<std::string>& args,
                           std::ostream& out, std::ostream& err) {
  if (command != "guard" && command != "stop") return Agent::RunCommand(command, args, out, err);
  return RunCodexHook(command, args, std::cin, out, err);
}

Result<std::unique_ptr<Plugin>> CreateCodexAgent(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(CodexConfig config, ParseConfig(context));
  return std::unique_ptr<Plugin>(new CodexAgent(std::move(config), context.log));
}

}  // namespace attune::agents
