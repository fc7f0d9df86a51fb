// `attune agent check NAME`: the agent conformance suite. The engine asks an agent for one
// proposal at a time from a read-only view (engine/include/attune/agent.h) and records the answer
// before acting on it; it relies on answers it can apply and attribute (the changes of one legal
// move, from the leader's current values), on an agent that learns from the history it is shown
// (a refused or failed move is not proposed again), that continues from the view alone after a
// restart, whose answer is sound when the stack lists no move, and that answers within its time. This asks the
// plugin, through the plugin host and with the user's options, on views built from a real stack
// and recipe, and says which promise fails.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/conformance.h"
#include "plugin/plugin_host.h"
#include "steps/steps.h"

namespace attune::cli {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr char kBaselineId[] = "baseline";

std::string Describe(const std::vector<Change>& changes) {
  std::string out;
  for (const Change& c : changes) {
    out += (out.empty() ? "" : ", ") + c.key + ": " + (c.from ? *c.from : "absent") + " -> " +
           (c.to ? *c.to : "absent");
  }
  return "[" + out + "]";
}

bool SameChanges(std::vector<Change> a, std::vector<Change> b) {
  auto by_key = [](const Change& x, const Change& y) { return x.key < y.key; };
  std::sort(a.begin(), a.end(), by_key);
  std::sort(b.begin(), b.end(), by_key);
  return a == b;
}

// Asks the agent with a deadline. Propose runs on a thread of its own; one that does not return in
// time is left running (its agent object is never destroyed) and every later question is refused,
// so the report can still be printed.
class Asker {
 public:
  Asker(double timeout_s) : timeout_s_(timeout_s) {}

  Result<Proposal> Ask(Agent* agent, const CampaignView& view) {
    if (hung_) return Status::Unavailable("skipped: an earlier Propose call has not returned");
    auto promise = std::make_shared<std::promise<Result<Proposal>>>();
    auto answer = promise->get_future();
    const auto start = Clock::now();
    std::thread([agent, view, promise] {
      try {
        promise->set_value(agent->Propose(view));
      } catch (const std::exception& e) {
        promise->set_value(Status::Internal(std::string("Propose threw: ") + e.what()));
      } catch (...) {
        promise->set_value(Status::Internal("Propose threw a non-standard exception"));
      }
    }).detach();
    if (answer.wait_for(std::chrono::duration<double>(timeout_s_)) != std::future_status::ready) {
      hung_ = true;
      return Status::DeadlineExceeded(
          fmt::format("Propose did not return within {:g} s (--timeout)", timeout_s_));
    }
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    slowest_s_ = std::max(slowest_s_, took);
    ++answers_;
    return answer.get();
  }

  bool hung() const { return hung_; }
  double slowest_s() const { return slowest_s_; }
  int answers() const { return answers_; }
  double timeout_s() const { return timeout_s_; }

 private:
  double timeout_s_;
  bool hung_ = false;
  double slowest_s_ = 0;
  int answers_ = 0;
};

struct Fixture {
  std::string name;
  json with = json::object();
  std::string dir;
  Stack* stack = nullptr;
  Recipe recipe;
  ClusterInfo cluster;
};

Measurement MeasurementAt(double tokens_per_s_per_gpu) {
  Measurement m;
  m.iterations_logged = 30;
  m.iterations_used = 25;
  m.tokens_per_s_per_gpu = tokens_per_s_per_gpu;
  m.step_time_s = 4096.0 / tokens_per_s_per_gpu;
  m.cv = 0.01;
  m.first_losses = {10.9, 10.7, 10.4};
  return m;
}

// The first question of a campaign: a measured baseline, no history.
CampaignView FirstView(const Fixture& f) {
  CampaignView v;
  v.campaign_id = "agent-check";
  v.campaign_dir = f.dir;
  v.stack = f.recipe.stack;
  v.cluster = f.cluster;
  v.baseline = f.recipe;
  v.baseline_measurement = MeasurementAt(1000);
  v.leader = f.recipe;
  v.leader_id = kBaselineId;
  v.leader_measurement = v.baseline_measurement;
  v.levers = f.stack->Levers();
  v.legal_moves = f.stack->LegalMoves(f.recipe, f.cluster);
  FindUnlocks(*f.stack, f.recipe, f.cluster, &v.legal_moves);  // as a campaign's view lists them
  v.budget_total_gpu_hours = 100;
  v.budget_left_gpu_hours = 90;
  v.job_cost_estimate_gpu_hours = 1;
  v.noise_band = 0.03;
  v.candidates_left = 20;
  v.seed = 1;
  v.proposal_index = 1;
  return v;
}

// The view after candidate c001 (`changes` from the baseline) ended with `outcome`.
CandidateRecord Tried(const std::vector<Change>& changes, const std::string& lever_id,
                      Outcome outcome, const json& meta) {
  CandidateRecord r;
  r.index = 1;
  r.candidate_id = "c001";
  r.base_id = kBaselineId;
  r.changes = changes;
  r.lever_id = lever_id;
  r.rationale = "the first proposal";
  r.outcome = outcome;
  r.agent_meta = meta;
  return r;
}

CampaignView AfterFirst(const CampaignView& first, CandidateRecord record) {
  CampaignView v = first;
  v.history = {std::move(record)};
  v.proposal_index = 2;
  v.seed = 2;
  v.candidates_left = first.candidates_left - 1;
  v.budget_left_gpu_hours = first.budget_left_gpu_hours - first.job_cost_estimate_gpu_hours;
  return v;
}

// What an answer must be for the engine to apply and attribute it: done with no changes, or the
// changes of exactly one legal move, from the leader's current values (not a move that a legal move
// makes legal: that one comes after it).
std::string CheckShape(const CampaignView& view, const Proposal& p) {
  if (p.done) {
    if (!p.changes.empty()) return Fail("answered done but also carries changes " + Describe(p.changes));
    return "done: " + (p.rationale.empty() ? std::string("(no rationale)") : p.rationale.substr(0, 120));
  }
  if (p.changes.empty()) return Fail("neither done nor any change: the engine cannot act on it");
  for (const Change& c : p.changes) {
    std::optional<std::string> current = GetValue(view.leader, c.key);
    if (c.from != current) {
      return Fail("change of " + c.key + " says it is " + (c.from ? *c.from : "absent") +
                  ", but the leader has " + (current ? *current : "absent"));
    }
  }
  Recipe applied = view.leader;
  Status st = ApplyChanges(&applied, p.changes);
  if (!st.ok()) return Fail("the changes do not apply to the leader: " + st.message());
  if (view.legal_moves.empty()) return "changes " + Describe(p.changes) + " (the view listed no legal moves)";
  for (const Move& m : view.legal_moves) {
    if (!SameChanges(m.changes, p.changes)) continue;
    if (!p.lever_id.empty() && p.lever_id != m.lever_id) {
      return Fail("the changes are legal move '" + m.summary + "' of lever " + m.lever_id +
                  ", but the answer names lever '" + p.lever_id + "'");
    }
    return "legal move '" + m.summary + "' (lever " + m.lever_id + ")";
  }
  for (const Move& m : view.legal_moves) {
    for (const Move& u : m.unlocks) {
      if (!SameChanges(u.changes, p.changes)) continue;
      return Fail("the changes are move '" + u.summary + "' of lever " + u.lever_id +
                  ", which the view lists as legal only after legal move '" + m.summary +
                  "' (Move::unlocks): propose that move first, then this one from its candidate");
    }
  }
  return Fail("the changes " + Describe(p.changes) + " are not one legal move of the view (" +
              std::to_string(view.legal_moves.size()) +
              " listed; one lever per candidate, so that its effect can be attributed)");
}

// Clause body for a question whose answer must have the right shape and, when `banned` is given,
// must not be those changes again.
std::string AskAndCheck(Asker& asker, Agent* agent, const CampaignView& view,
                        const std::vector<Change>* banned, const std::string& why_banned,
                        std::optional<Proposal>* out = nullptr) {
  auto p = asker.Ask(agent, view);
  if (!p.ok()) {
    if (asker.hung() && p.status().code() == StatusCode::kUnavailable) return Skip(p.status().message());
    return Fail("Propose failed: " + p.status().ToString());
  }
  if (out) *out = *p;
  std::string shape = CheckShape(view, *p);
  if (IsFail(shape) || banned == nullptr) return shape;
  if (!p->done && SameChanges(p->changes, *banned)) {
    return Fail("proposed " + Describe(p->changes) + " again although " + why_banned);
  }
  return shape;
}

Result<std::unique_ptr<Agent>> CreateAgent(PluginHost& host, Env& env, const Fixture& f) {
  PluginContext ctx = CliPluginContext(env);
  ctx.config = f.with;
  ctx.campaign_dir = f.dir;
  ctx.seed = 1;
  return host.CreateAgent(f.name, ctx);
}

// `created` is the first object, made before the suite so that an unknown name or refused options
// are bad input (exit 2) rather than a clause.
void AddClauses(ConformanceSuite& suite, PluginHost& host, Env& env, Fixture& f, Asker& asker,
                Result<std::unique_ptr<Agent>> created) {
  auto create = [&]() { return CreateAgent(host, env, f); };
  std::unique_ptr<Agent> agent;
  suite.Run("create", [&] {
    if (!created.ok()) return Fail("the plugin was not created: " + created.status().ToString());
    agent = std::move(*created);
    return "created with " + f.with.dump();
  });
  if (!agent) return;
  const CampaignView first = FirstView(f);
  std::optional<Proposal> first_answer;
  suite.Run("propose.first", [&] {
    return AskAndCheck(asker, agent.get(), first, nullptr, "", &first_answer);
  });
  suite.Run("proposal.record", [&] {
    if (!first_answer) return Skip("no first answer");
    const Proposal& p = *first_answer;
    if (!p.meta.is_object()) return Fail("meta is not a JSON object: " + p.meta.dump().substr(0, 80));
    json recorded = ProposalToJson(p);
    auto back = ProposalFromJson(json::parse(recorded.dump()));
    if (!back.ok()) return Fail("the recorded answer does not read back: " + back.status().message());
    if (back->done != p.done || !SameChanges(back->changes, p.changes) || back->lever_id != p.lever_id ||
        back->rationale != p.rationale || back->meta != p.meta) {
      return Fail("the answer reads back differently from the log: " + recorded.dump().substr(0, 200));
    }
    return "records and reads back unchanged (" + std::to_string(recorded.dump().size()) + " bytes, meta keys: " +
           std::to_string(p.meta.size()) + ")";
  });
  // The move the history clauses are about: the agent's own first answer when it was well formed,
  // or the first legal move.
  std::optional<Move> tried;
  if (first_answer && !first_answer->done && !IsFail(CheckShape(first, *first_answer))) {
    tried = Move{first_answer->lever_id, first_answer->changes, "the first answer", {}, {}};
  } else if (!first.legal_moves.empty()) {
    tried = first.legal_moves.front();
  }
  const json first_meta = first_answer ? first_answer->meta : json::object();
  const std::string no_move = "the stack lists no legal move for this recipe";
  suite.Run("propose.after-refusal", [&] {
    if (!tried) return Skip(no_move);
    CandidateRecord r = Tried(tried->changes, tried->lever_id, Outcome::kRefused, first_meta);
    r.rule_id = "obj.agent-check";
    return AskAndCheck(asker, agent.get(), AfterFirst(first, r), &tried->changes,
                       "the gate refused it (history c001)");
  });
  suite.Run("propose.after-failure", [&] {
    if (!tried) return Skip(no_move);
    CandidateRecord r = Tried(tried->changes, tried->lever_id, Outcome::kFailed, first_meta);
    Failure failure;
    failure.kind = FailureKind::kOom;
    failure.signature = "cuda_oom_pytorch";
    failure.evidence = "torch.OutOfMemoryError: CUDA out of memory (agent check)";
    r.failure = failure;
    return AskAndCheck(asker, agent.get(), AfterFirst(first, r), &tried->changes,
                       "it ran out of device memory (history c001)");
  });
  suite.Run("propose.new-leader", [&] {
    if (!tried) return Skip(no_move);
    CampaignView v = AfterFirst(first, Tried(tried->changes, tried->lever_id, Outcome::kNewLeader, first_meta));
    Status st = ApplyChanges(&v.leader, tried->changes);
    if (!st.ok()) return Skip("the move does not apply: " + st.message());
    v.leader_id = "c001";
    v.leader_measurement = MeasurementAt(1150);
    v.history[0].measurement = v.leader_measurement;
    v.history[0].speedup_vs_baseline = 1.15;
    v.legal_moves = f.stack->LegalMoves(v.leader, f.cluster);
    FindUnlocks(*f.stack, v.leader, f.cluster, &v.legal_moves);
    return AskAndCheck(asker, agent.get(), v, &tried->changes, "it is already applied to the new leader");
  });
  suite.Run("propose.restart", [&] {
    if (!tried) return Skip(no_move);
    auto fresh = create();
    if (!fresh.ok()) return Fail("a second object was not created: " + fresh.status().ToString());
    CandidateRecord r = Tried(tried->changes, tried->lever_id, Outcome::kSlower, first_meta);
    r.measurement = MeasurementAt(950);
    r.speedup_vs_baseline = 0.95;
    std::string verdict = AskAndCheck(asker, fresh->get(), AfterFirst(first, r), &tried->changes,
                                      "it was measured slower (history c001)");
    if (asker.hung()) (void)fresh->release();  // still in use by the thread that did not return
    return verdict;
  });
  suite.Run("propose.no-moves", [&] {
    // A stack may list no lever and no move for a recipe; an agent with its own search space (grid)
    // may still propose, but what it answers must apply to the leader.
    CampaignView v = first;
    v.legal_moves.clear();
    v.levers.clear();
    return AskAndCheck(asker, agent.get(), v, nullptr, "");
  });
  suite.Run("answers.time", [&] {
    if (asker.hung()) return Fail(fmt::format("a Propose call did not return within {:g} s", asker.timeout_s()));
    return fmt::format("{} answers, the slowest in {:.2f} s (limit {:g} s)", asker.answers(), asker.slowest_s(),
                       asker.timeout_s());
  });
  if (asker.hung()) (void)agent.release();  // a thread may still use it; never destroyed
}

}  // namespace

int RunAgentCheck(const std::vector<std::string>& args, Env& env) {
  ArgParser p("agent check NAME [--with JSON|@FILE] [--stack S --recipe FILE] [--timeout S] [--dir DIR] [--json]",
              "The agent conformance suite: loads the agent plugin through the plugin host with the "
              "given options (the workflow's agent.with) and asks it for proposals on views built from "
              "a real stack and recipe: the first proposal is done or exactly one legal move from the "
              "leader's values, and is recorded and read back unchanged; after the gate refused a move, "
              "after it failed, after it became the leader and after it was slower (asked of a fresh "
              "object: a restarted engine) the move is not proposed again; with no lever and no legal "
              "move the answer is done or still applies; every answer comes within --timeout. Exit 0 when every clause holds, "
              "1 when one fails.");
  p.Options()("with", po::value<std::string>()->default_value("{}"), "agent options as JSON, or @FILE")(
      "stack", po::value<std::string>()->default_value("megatron"), "the stack whose levers and moves the views list")(
      "recipe", po::value<std::string>(),
      "a recipe of that stack (default: workflows/examples/recipes/llama3-8b-a100x8.yaml in the data directory)")(
      "timeout", po::value<double>()->default_value(600), "seconds one Propose call may take")(
      "dir", po::value<std::string>(), "the campaign directory the agent is given (default: a temporary folder, removed)")(
      "json", "machine-readable output")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("name");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  const bool as_json = p.Has("json");
  auto error = [&](const Status& s) { return ReportError(env, "agent check", s, as_json); };
  if (!p.Has("name")) return error(Status::InvalidArgument("need NAME, an agent plugin"));
  Fixture f;
  f.name = p.Get("name");
  auto with = ReadWithOption(p.Get("with"), "agent");
  if (!with.ok()) return error(with.status());
  f.with = *with;
  const double timeout_s = p.vm()["timeout"].as<double>();
  if (!(timeout_s > 0)) return error(Status::InvalidArgument("--timeout must be > 0 seconds"));
  auto host = LoadPlugins(env, p.GetList("plugin-path"));
  if (!host.ok()) return error(host.status());
  std::string recipe_path = p.Has("recipe") ? p.Get("recipe")
                                            : DefaultDataDir() + "/workflows/examples/recipes/llama3-8b-a100x8.yaml";
  auto recipe = LoadRecipeFile(recipe_path);
  if (!recipe.ok()) return error(recipe.status().WithContext("reading the recipe (--recipe)"));
  f.recipe = *recipe;
  auto stack = (*host)->CreateStack(p.Get("stack"), CliPluginContext(env));
  if (!stack.ok()) return error(stack.status());
  f.stack = stack->get();
  f.cluster = ClusterForRecipe(f.recipe);
  Status valid = f.stack->Validate(f.recipe, f.cluster);
  if (!valid.ok()) return error(valid.WithContext("stack '" + p.Get("stack") + "' refuses " + recipe_path));
  auto dir = CheckDir::Make(p.Has("dir") ? p.Get("dir") : "", "agent");
  if (!dir.ok()) return error(dir.status());
  f.dir = (*dir)->path();
  auto created = CreateAgent(**host, env, f);
  if (!created.ok() && (created.status().code() == StatusCode::kNotFound ||
                        created.status().code() == StatusCode::kInvalidArgument)) {
    return error(created.status());
  }
  Asker asker(timeout_s);
  ConformanceSuite suite;
  AddClauses(suite, **host, env, f, asker, std::move(created));
  const int rc = ReportSuite(env, "agent", f.name, suite, as_json);
  if (asker.hung()) {
    // A Propose call is still running on another thread and holds the plugin: leave without
    // unloading anything (the temporary folder is removed first).
    dir->reset();
    env.out->flush();
    env.err->flush();
    std::_Exit(rc);
  }
  return rc;
}

}  // namespace attune::cli
