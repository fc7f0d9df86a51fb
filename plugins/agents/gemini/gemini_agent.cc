// Copyright attune authors.
#include "gemini_agent.h"

#include <iostream>
#include <utility>

#include "attune/agentkit/prompt.h"
#include "attune/agentkit/proposal.h"
#include "attune/support/process.h"
#include "gemini_hooks.h"

namespace attune::agents {
namespace {

// How much of an unusable answer the error keeps (the event records the error).
constexpr size_t kRawTextKept = 4000;
// The CLI's exit code for bad input, among it an unknown --resume id.
constexpr int kExitInputError = 42;

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

// The proposal in `text` when it parses and is legal for `view`; otherwise the error for the model.
Result<Proposal> UsableAnswer(const CampaignView& view, const std::string& text) {
  ATTUNE_ASSIGN_OR_RETURN(Proposal p, agentkit::ParseAnswer(text));
  ATTUNE_RETURN_IF_ERROR(agentkit::ValidateProposal(view, &p));
  return p;
}

}  // namespace

struct GeminiAgent::Attempt {
  int calls = 0;
  int turns = 0;
  int tool_calls = 0;
  int tool_errors = 0;
  int continuations = 0;
  long long input_tokens = 0;
  long long output_tokens = 0;
  long long cached_tokens = 0;
  long long total_tokens = 0;
  void Add(const GeminiRun& r) {
    ++calls;
    turns += r.turns;
    tool_calls += r.tool_calls;
    tool_errors += r.tool_errors;
    continuations += r.continuations;
    input_tokens += r.input_tokens;
    output_tokens += r.output_tokens;
    cached_tokens += r.cached_tokens;
    total_tokens += r.total_tokens;
  }
};

std::string LastGeminiSession(const CampaignView& view) {
  for (auto it = view.history.rbegin(); it != view.history.rend(); ++it) {
    const nlohmann::json& m = it->agent_meta;
    if (m.is_object() && m.value("agent", "") == "gemini" && m.contains("session_id") &&
        m["session_id"].is_string() && !m["session_id"].get<std::string>().empty()) {
      return m["session_id"].get<std::string>();
    }
  }
  return "";
}

GeminiAgent::GeminiAgent(GeminiConfig config, std::function<void(LogLevel, const std::string&)> log)
    : config_(std::move(config)), log_(std::move(log)) {}

void GeminiAgent::Log(LogLevel level, const std::string& message) const {
  if (log_) log_(level, message);
}

// What the Gemini CLI's mechanisms leave to the engine's gate, said once per agent object.
void GeminiAgent::SayWhatIsNotEnforced() {
  if (said_limits_) return;
  said_limits_ = true;
  if (!config_.hooks) {
    Log(LogLevel::kWarn,
        "gemini: hooks are off (with.hooks: false): only the tool policy limits the agent; its "
        "shell commands are NOT checked by the guard");
    return;
  }
  Log(LogLevel::kInfo,
      "gemini: the policy offers only with.tools and a BeforeTool hook judges every call; the "
      "Gemini CLI lets a tool run when its hook times out (the guard's is 30 s), and cannot "
      "sandbox what an allowed command does; the engine's gate still checks every proposal");
}

void GeminiAgent::AdoptLauncherNamespace(const ClusterInfo& cluster) {
  if (!config_.k8s_namespace.empty() || cluster.k8s_namespace.empty()) return;
  config_.k8s_namespace = cluster.k8s_namespace;
  Log(LogLevel::kInfo, "gemini: the guard confines kubectl and helm to namespace '" +
                           cluster.k8s_namespace + "', the launcher's");
}

Result<GeminiRun> GeminiAgent::RunOnce(const GeminiCall& call, Clock::time_point deadline) {
  double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  if (left <= 0) {
    return Status::DeadlineExceeded(
        "gemini: no time left of timeout_s=" + std::to_string(config_.timeout_s) + " s");
  }
  support::ProcessOptions options;
  options.env = ChildEnvironment(config_, folder_);
  options.cwd = config_.campaign_dir;
  options.timeout_s = left;
  options.max_output = 64u << 20;  // per stream; a CLI's answer is far smaller
  options.kill_leftovers = true;   // the shell tool's background processes end with it
  ATTUNE_ASSIGN_OR_RETURN(support::ProcessResult p,
                          support::RunProcess(BuildArgv(config_, folder_, call), options));
  if (p.timed_out) {
    return Status::DeadlineExceeded(
        "gemini: the CLI did not answer within timeout_s=" + std::to_string(config_.timeout_s) +
        " s; its process group was killed (raise `timeout_s:` or check the model endpoint)");
  }
  return ReadRun(p);
}

Result<GeminiRun> GeminiAgent::RunWithRetries(GeminiCall call, Clock::time_point deadline,
                                              Attempt* attempt) {
  std::string last_error;
  for (int i = 0; i <= config_.retries;) {
    ATTUNE_ASSIGN_OR_RETURN(GeminiRun run, RunOnce(call, deadline));
    run.resumed = !call.resume_session.empty();
    attempt->Add(run);
    if (run.ok) return run;
    last_error = run.error;
    Log(LogLevel::kWarn, "gemini: attempt " + std::to_string(i + 1) + " failed: " + run.error);
    // A session the CLI cannot find (another machine, a cleaned work folder) ends the run at once
    // with exit 42 before any model call: start afresh without spending a retry on it.
    bool lost_session = run.resumed && run.exit_code == kExitInputError && !run.has_result;
    call.resume_session.clear();
    if (!lost_session) ++i;
  }
  return Status::Unavailable("gemini: " + std::to_string(config_.retries + 1) +
                             " CLI run(s) failed; last: " + last_error);
}

Result<Proposal> GeminiAgent::Propose(const CampaignView& view) {
  if (config_.hooks && config_.attune_binary.empty()) {
    return Status::FailedPrecondition(
        "gemini: the hooks need the attune binary's path (PluginContext::attune_binary is empty); "
        "run under `attune`");
  }
  if (!view.campaign_dir.empty()) config_.campaign_dir = view.campaign_dir;
  if (config_.campaign_dir.empty()) {
    return Status::FailedPrecondition("gemini: the campaign has no directory to work in");
  }
  AdoptLauncherNamespace(view.cluster);
  SayWhatIsNotEnforced();
  folder_ = WorkFolderFor(config_.campaign_dir);
  ATTUNE_RETURN_IF_ERROR(PrepareWorkFolder(config_, folder_));
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(config_.timeout_s));
  Attempt attempt;
  std::string session = config_.resume ? LastGeminiSession(view) : "";
  GeminiCall ask{agentkit::BuildProposalPrompt(view), session};
  ATTUNE_ASSIGN_OR_RETURN(GeminiRun run, RunWithRetries(ask, deadline, &attempt));
  bool resumed = run.resumed;
  auto proposal = UsableAnswer(view, run.text);
  if (!proposal.ok()) {
    std::string first = proposal.status().message();
    Log(LogLevel::kWarn, "gemini: invalid answer, asking once more: " + first);
    GeminiCall retry{agentkit::BuildRetryPrompt(first), run.session_id};
    ATTUNE_ASSIGN_OR_RETURN(run, RunWithRetries(retry, deadline, &attempt));
    proposal = UsableAnswer(view, run.text);
    if (!proposal.ok()) {
      return Status::InvalidArgument("gemini: the answer was invalid twice (session " +
                                     run.session_id + "); first: " + first +
                                     "; then: " + proposal.status().message() +
                                     "; the last answer was: " + Tail(run.text, kRawTextKept));
    }
  }
  proposal->meta = {{"agent", "gemini"},
                    {"session_id", run.session_id},
                    {"num_turns", attempt.turns},
                    {"input_tokens", attempt.input_tokens},
                    {"output_tokens", attempt.output_tokens},
                    {"cached_tokens", attempt.cached_tokens},
                    {"total_tokens", attempt.total_tokens},
                    {"tool_calls", attempt.tool_calls},
                    {"tool_errors", attempt.tool_errors},
                    {"continuations", attempt.continuations},
                    {"calls", attempt.calls},
                    {"model", run.model.empty() ? config_.model : run.model},
                    {"resumed_session", resumed}};
  return proposal;
}

std::vector<PluginCommand> GeminiAgent::Commands() const {
  return {
      {"guard", "the BeforeTool hook: judges one tool call against the campaign's guard policy"},
      {"stop", "the AfterAgent hook: keeps the agent working while the campaign has budget left"}};
}

int GeminiAgent::RunCommand(const std::string& command, const std::vector<std::string>& args,
                            std::ostream& out, std::ostream& err) {
  if (command != "guard" && command != "stop") return Agent::RunCommand(command, args, out, err);
  return RunGeminiHook(command, args, std::cin, out, err);
}

Result<std::unique_ptr<Plugin>> CreateGeminiAgent(const PluginContext& context) {
  ATTUNE_ASSIGN_OR_RETURN(GeminiConfig config, ParseConfig(context));
  return std::unique_ptr<Plugin>(new GeminiAgent(std::move(config), context.log));
}

}  // namespace attune::agents
