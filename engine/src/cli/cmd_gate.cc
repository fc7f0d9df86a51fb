// `attune gate check --stack NAME BASE CANDIDATE`: the static correctness gate on two recipes.
#include <ostream>

#include "cli/args.h"

#include "gate/static_gate.h"

namespace attune::cli {

namespace {

// The cluster the recipes' topology implies (the gate validates the candidate against it).
ClusterInfo ClusterFor(const Recipe& recipe) {
  ClusterInfo cluster;
  cluster.device_type = recipe.topology.gpu_type;
  cluster.devices_per_node = recipe.topology.gpus_per_node;
  cluster.max_nodes = recipe.topology.nodes;
  const std::string& gpu = recipe.topology.gpu_type;
  if (gpu.rfind("A100", 0) == 0) cluster.compute_capability_major = 8;
  if (gpu.rfind("H100", 0) == 0 || gpu.rfind("H200", 0) == 0) cluster.compute_capability_major = 9;
  if (gpu.rfind("B200", 0) == 0 || gpu.rfind("GB200", 0) == 0) {
    cluster.compute_capability_major = 10;
  }
  return cluster;
}

}  // namespace

int RunGateCheck(const std::vector<std::string>& args, Env& env) {
  ArgParser p("gate check --stack NAME BASE CANDIDATE [--json]",
              "Runs the static correctness gate: may CANDIDATE be compared with BASE as the "
              "same training objective? Exit 0 pass, 1 refused (the verdict names the rule).");
  p.Options()("stack", po::value<std::string>(), "stack plugin (required)")(
      "json", "machine-readable verdict")(
      "plugin-path", po::value<std::vector<std::string>>(), "extra plugin directory");
  p.Positional("recipes", 2);
  int code = 0;
  if (!p.Parse(args, env, &code)) return code;
  bool json = p.Has("json");
  std::vector<std::string> files = p.GetList("recipes");
  if (!p.Has("stack") || files.size() != 2) {
    return ReportError(env, "gate check",
                       Status::InvalidArgument("need --stack NAME, BASE and CANDIDATE"), json);
  }
  auto base = LoadRecipeFile(files[0]);
  if (!base.ok()) return ReportError(env, "gate check", base.status(), json);
  auto candidate = LoadRecipeFile(files[1]);
  if (!candidate.ok()) return ReportError(env, "gate check", candidate.status(), json);
  auto stack = CreateStack(env, p.Get("stack"), p.GetList("plugin-path"));
  if (!stack.ok()) return ReportError(env, "gate check", stack.status(), json);
  GateVerdict v = StaticGateCheck(**stack, *base, *candidate, ClusterFor(*base));
  if (json) {
    *env.out << nlohmann::json{{"pass", v.pass},
                               {"rule_id", v.rule_id},
                               {"reason", v.reason},
                               {"loss_rel_tolerance", v.loss_rel_tolerance},
                               {"changes", ChangesToJson(Diff(*base, *candidate))}}
                    .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
  } else {
    *env.out << (v.pass ? "pass" : "REFUSED") << " [" << v.rule_id << "] " << v.reason << "\n";
    *env.out << "changes: " << DescribeChanges(Diff(*base, *candidate)) << "\n";
  }
  return v.pass ? kExitOk : kExitFailed;
}

}  // namespace attune::cli
