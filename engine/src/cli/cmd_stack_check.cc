// `attune stack check NAME RECIPE`: the stack conformance suite. Every stack plugin, in-tree or
// out of tree, must keep the contract the engine relies on (engine/include/attune/stack.h); this
// runs it through the real plugin host on one of the user's recipes and says which clause fails.
#include <chrono>
#include <functional>
#include <map>
#include <ostream>
#include <random>
#include <set>

#include "cli/args.h"
#include "cli/conformance.h"

namespace attune::cli {

namespace {

// Logs no real job writes, but a broken one, a wrong file or a truncated copy can: the stack must
// read them without crashing or hanging, and the same text must read the same way twice.
std::vector<std::pair<std::string, std::string>> HostileLogs() {
  std::vector<std::pair<std::string, std::string>> logs;
  logs.emplace_back("empty", "");
  static constexpr char kNul[] = "iteration\0 1/10 |\0\0step 1 | epoch 0 |\0";
  logs.emplace_back("NUL bytes", std::string(kNul, sizeof(kNul) - 1));
  std::string bytes(200 * 1024, '\0');
  std::mt19937 rng(7);
  for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
  logs.emplace_back("200 KB of random bytes", bytes);
  logs.emplace_back("one 1 MB line", std::string(1 << 20, 'x') + " | loss: 1.0 |");
  logs.emplace_back("invalid UTF-8", "\xff\xfe iteration 1/2 | elapsed time per iteration (ms): \xc3\x28 |\n");
  logs.emplace_back("huge numbers",
                    "iteration 99999999999999999999999999/1 | elapsed time per iteration (ms): 1e400 | lm loss: -1e999 |\n"
                    "step 18446744073709551617 | epoch 99999999999999999999 | loss 1e309 | tps 1e400\n"
                    "perf 99999999999999999999: {'perf/step_time': 1e999}\n"
                    "epoch=0 step=99999999999999999999999 loss=nan\n");
  logs.emplace_back("truncated records",
                    "iteration 1/10 | consumed samples: 8 | elapsed time per iteration (ms): 12\n"
                    "step 3 | epoch 0 | loss 1.2 | tps 4\n"
                    "perf 2: {'perf/step_time': 1.0, 'perf/actor_\n"
                    "2025-01-01 00:00:00 - INFO - epoch=0 step=\n");
  // Long records of the shapes parsers match with regexes: std::regex recurses per character.
  std::string dict = "perf 1: {", kv = "epoch=0 step=1 loss=1.0", timers = "time (ms) |",
              memory = "[Rank 0] (after 1 iterations) memory (MB) | allocated: ", step = "step 1 | epoch 0 |";
  for (int i = 0; i < 10000; ++i) {
    dict += "'perf/m" + std::to_string(i) + "': 1.0, ";
    kv += " k" + std::to_string(i) + "=1";
    timers += " t" + std::to_string(i) + ": 1.0 |";
    step += " tps 5 |";
  }
  memory += std::string(200000, '1');
  logs.emplace_back("100 KB records (metrics dict, key=value, timers, memory, step line)",
                    dict + "}\n" + kv + "\n" + timers + "\n" + memory + "\n" + step + "\n" +
                        "Traceback (most recent call last):\n" + std::string(100000, 'E') + "Error: x\n");
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "[default" + std::to_string(i % 8) + "]: \n";
  logs.emplace_back("20,000 blank prefixed lines", many);
  return logs;
}

std::string Fingerprint(const LogParse& p) {
  std::string out = std::to_string(p.iterations.size());
  out += "/" + std::to_string(p.memory.size());
  out += "/" + std::to_string(p.warnings.size());
  out += p.training_started ? "/1" : "/0";
  for (const auto& it : p.iterations) {
    out += '|';
    out += IterationToJson(it).dump();
  }
  return out;
}

void AddClauses(ConformanceSuite& s, const Stack& stack, const std::string& name, const Recipe& recipe,
                const ClusterInfo& cluster, size_t max_moves) {
  s.Run("describe", [&] {
    auto d = stack.Describe();
    if (!d.is_object()) return Fail("Describe() is not a JSON object");
    return std::string("an object with ") + std::to_string(d.size()) + " keys";
  });
  s.Run("levers", [&] {
    const auto& levers = stack.Levers();
    if (levers.empty()) return Fail("no levers: the agents would have nothing to change");
    std::set<std::string> ids;
    for (const auto& l : levers) {
      if (l.id.empty()) return Fail("a lever without an id");
      if (!ids.insert(l.id).second) return Fail("lever id '" + l.id + "' appears twice");
      if (l.keys.empty()) return Fail("lever '" + l.id + "' names no keys");
    }
    return std::to_string(levers.size()) + " levers, ids unique, each with keys";
  });
  s.Run("recipe.valid", [&] {
    if (recipe.stack != name) return Fail("the recipe's stack is '" + recipe.stack + "', not '" + name + "'");
    Status st = stack.Validate(recipe, cluster);
    if (!st.ok()) return Fail("Validate refused the recipe: " + st.message());
    return std::string("Validate accepts it on ") + cluster.device_type + " x" +
           std::to_string(cluster.devices_per_node) + " per node";
  });
  s.Run("render", [&] {
    auto spec = stack.RenderLaunch(recipe);
    if (!spec.ok()) return Fail("RenderLaunch failed: " + spec.status().message());
    if (spec->argv.empty()) return Fail("RenderLaunch gave an empty argv");
    return "argv[0] " + spec->argv[0] + ", " + std::to_string(spec->argv.size()) + " words";
  });
  s.Run("gate.self", [&] {
    GateVerdict v = stack.CheckObjective(recipe, recipe);
    if (!v.pass) return Fail("the recipe against itself is refused: " + v.rule_id + ": " + v.reason);
    return std::string("the recipe against itself passes");
  });
  s.Run("moves", [&] {
    auto moves = stack.LegalMoves(recipe, cluster);
    std::map<std::string, std::set<std::string>> lever_keys;
    for (const auto& l : stack.Levers()) lever_keys[l.id].insert(l.keys.begin(), l.keys.end());
    size_t checked = 0;
    for (const auto& m : moves) {
      if (checked++ >= max_moves) break;
      const std::string what = "move '" + m.summary + "' (lever " + m.lever_id + ")";
      auto lever = lever_keys.find(m.lever_id);
      if (lever == lever_keys.end()) return Fail(what + ": not a lever of Levers()");
      if (m.changes.empty()) return Fail(what + ": changes nothing");
      // The lever's own key moves; companions it needs may move with it (--overlap-grad-reduce
      // with --overlap-param-gather, --sequence-parallel off with tensor parallel 1).
      bool own = false;
      for (const auto& c : m.changes) own = own || lever->second.count(c.key) > 0;
      if (!own) {
        return Fail(what + ": changes none of lever " + m.lever_id + "'s keys (one lever per candidate)");
      }
      Recipe moved = recipe;
      Status applied = ApplyChanges(&moved, m.changes);
      if (!applied.ok()) return Fail(what + ": its changes do not apply to the recipe: " + applied.message());
      if (Diff(recipe, moved).empty()) return Fail(what + ": leaves the recipe as it was");
      GateVerdict v = stack.CheckObjective(recipe, moved);
      if (!v.pass) return Fail(what + ": the stack's own gate refuses it (" + v.rule_id + ": " + v.reason + ")");
      Status valid = stack.Validate(moved, cluster);
      if (!valid.ok()) return Fail(what + ": Validate refuses the result: " + valid.message());
      auto spec = stack.RenderLaunch(moved);
      if (!spec.ok()) return Fail(what + ": RenderLaunch fails on it: " + spec.status().message());
    }
    if (moves.empty()) return std::string("no legal move from this recipe (allowed, but nothing to tune)");
    return std::to_string(std::min(moves.size(), max_moves)) + " of " + std::to_string(moves.size()) +
           " moves: each one lever, applies, changes the recipe, passes the gate, validates, renders";
  });
  s.Run("benchmark_form", [&] {
    auto form = stack.BenchmarkForm(recipe);
    if (!form.ok()) return Fail("BenchmarkForm failed: " + form.status().message());
    if (form->stack != recipe.stack || form->entry != recipe.entry || !(form->topology == recipe.topology)) {
      return Fail("BenchmarkForm changed the stack, entry point or topology");
    }
    GateVerdict v = stack.CheckBenchmarkForm(recipe, *form);
    if (!v.pass) return Fail("the benchmark form changes the objective: " + v.rule_id + ": " + v.reason);
    auto spec = stack.RenderLaunch(*form);
    if (!spec.ok()) return Fail("the benchmark form does not render: " + spec.status().message());
    const auto length = stack.BenchmarkLength(*form);
    if (length && *length <= 0) {
      return Fail("BenchmarkLength of the form is " + std::to_string(*length) + "; a length is > 0 or unknown");
    }
    return std::to_string(Diff(recipe, *form).size()) + " run-control change(s), same objective, " +
           (length ? std::to_string(*length) + " records long" : std::string("length unknown"));
  });
  s.Run("logs.hostile", [&] {
    std::string said;
    for (const auto& [what, text] : HostileLogs()) {
      auto start = std::chrono::steady_clock::now();
      LogParse p = stack.ParseLog(text);
      Failure f = stack.Triage(text, JobEnd{137, "failed", 60});
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (s > 30) return Fail(what + ": ParseLog+Triage took " + std::to_string(s) + " s");
      if (f.kind == FailureKind::kNone) return Fail(what + ": a job killed with exit code 137 is no failure");
      if (Fingerprint(stack.ParseLog(text)) != Fingerprint(p)) return Fail(what + ": parsed differently twice");
      if (!said.empty()) said += ", ";
      said += what;
    }
    return "read without a crash, the same way twice, a killed job a failure: " + said;
  });
  s.Run("triage.clean", [&] {
    Failure f = stack.Triage("", JobEnd{0, "succeeded", 10});
    if (f.kind != FailureKind::kNone) {
      return Fail("an empty log of a job that exited 0 is a '" + std::string(FailureKindName(f.kind)) +
                  "' failure (" + f.signature + "); the engine says 'no measurement' for it instead");
    }
    return std::string("an empty log of a clean exit is no failure");
  });
}

}  // namespace

int RunStackCheck(const std::vector<std::string>& args, Env& env) {
  ArgParser p("stack check NAME RECIPE [--cluster FILE] [--max-moves N] [--json] [--plugin-path DIR]",
              "The stack conformance suite: loads the stack plugin through the plugin host and "
              "checks the contract the engine relies on, on RECIPE (a recipe file of that stack): "
              "its description and levers, that it validates and renders the recipe, that its "
              "gate passes the recipe against itself, that every legal move changes one lever, "
              "applies, passes its own gate, validates and renders, that the benchmark form keeps "
              "the objective, and that hostile logs (empty, NUL bytes, random bytes, a 1 MB line, "
              "invalid UTF-8, huge numbers, truncated records) are read without a crash, the same "
              "way twice. Exit 0 when every clause holds, 1 when one fails.");
  p.Options()("max-moves", po::value<size_t>()->default_value(500), "check at most N legal moves")(
      "cluster", po::value<std::string>(),
      "the cluster to validate on, as JSON (ClusterInfo: device_type, device_memory_gib, "
      "peak_tflops, devices_per_node, max_nodes, compute_capability_major); default: the "
      "recipe's topology with H100 facts, or a CPU machine for gpu_type cpu")(
      "json", "machine-readable output")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("name");
  p.Positional("recipe");
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  if (!p.Has("name") || !p.Has("recipe")) {
    return ReportError(env, "stack check", Status::InvalidArgument("need NAME and RECIPE"), json);
  }
  auto stack = CreateStack(env, p.Get("name"), p.GetList("plugin-path"));
  if (!stack.ok()) return ReportError(env, "stack check", stack.status(), json);
  auto recipe = LoadRecipeFile(p.Get("recipe"));
  if (!recipe.ok()) return ReportError(env, "stack check", recipe.status(), json);
  ClusterInfo cluster = ClusterForRecipe(*recipe);
  if (p.Has("cluster")) {
    auto text = ReadTextFile(p.Get("cluster"));
    if (!text.ok()) return ReportError(env, "stack check", text.status(), json);
    auto parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      return ReportError(env, "stack check",
                         Status::InvalidArgument(p.Get("cluster") + ": expected a JSON object with "
                                                 "ClusterInfo's fields (docs/cli.md)"),
                         json);
    }
    try {
      cluster = ClusterInfoFromJson(parsed);
    } catch (const std::exception& e) {
      return ReportError(env, "stack check",
                         Status::InvalidArgument(p.Get("cluster") + ": " + e.what()), json);
    }
  }
  ConformanceSuite suite;
  AddClauses(suite, **stack, p.Get("name"), *recipe, cluster, p.vm()["max-moves"].as<size_t>());
  return ReportSuite(env, "stack", p.Get("name"), suite, json);
}

}  // namespace attune::cli
