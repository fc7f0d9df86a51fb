// Copyright attune authors.
//
// The plugin's CLI commands: `attune kuberay render` and `attune kuberay rbac`.
#include <filesystem>
#include <map>
#include <ostream>

#include "attune/hash.h"
#include "kuberay_launcher.h"
#include "process.h"

namespace attune::kuberay {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

const char* kRenderUsage =
    "usage: attune kuberay render WORKFLOW [--candidate ID] [--attempt N] [--dir CAMPAIGN_DIR]\n"
    "                             [--recipe RECIPE]\n"
    "Prints the RayJob (YAML) that `attune run WORKFLOW --dir CAMPAIGN_DIR` would submit for the\n"
    "candidate's first attempt (default: the baseline, from the workflow's recipe; --recipe\n"
    "renders another recipe file under that candidate's name). Try it on your cluster with\n"
    "  attune kuberay render W.yaml | kubectl apply --dry-run=server -f -\n";

const char* kRbacUsage =
    "usage: attune kuberay rbac --namespace NS [--service-account NAME]\n"
    "Prints a ServiceAccount, Role and RoleBinding (YAML) granting exactly the API verbs the\n"
    "KubeRay launcher uses, in namespace NS only. docs/kuberay.md shows how to make a kubeconfig\n"
    "for it.\n";

// --key value options after positional words; unknown options are usage errors.
bool ParseArgs(const std::vector<std::string>& args, const std::vector<std::string>& known,
               std::vector<std::string>* positional, std::map<std::string, std::string>* values,
               std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      positional->push_back(a);
      continue;
    }
    std::string key = a.substr(2), value;
    size_t eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      err << "attune kuberay: option --" << key << " needs a value\n";
      return false;
    }
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      err << "attune kuberay: unknown option --" << key << "\n";
      return false;
    }
    (*values)[key] = value;
  }
  return true;
}

// Runs `attune ARGS...` and parses its JSON output.
Result<Json> AttuneJson(const std::string& binary, const std::vector<std::string>& args) {
  if (binary.empty()) {
    return Status::FailedPrecondition("the attune binary's path is unknown (run this command "
                                      "through `attune kuberay ...`)");
  }
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  ATTUNE_ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, "", 120));
  Json j = Json::parse(r.out, nullptr, false);
  if (r.exit_code != 0 || j.is_discarded()) {
    std::string said = !r.err.empty() ? r.err : r.out;
    if (j.is_object() && j.contains("error")) said = j["error"].dump();
    while (!said.empty() && said.back() == '\n') said.pop_back();
    return Status::InvalidArgument("attune " + args[0] + " " + args[1] + ": " + said);
  }
  return j;
}

Result<LaunchSpec> LaunchFromJson(const Json& j) {
  try {
    LaunchSpec launch;
    launch.argv = j.at("argv").get<std::vector<std::string>>();
    for (const auto& kv : j.at("env")) {
      launch.env.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    }
    launch.workdir = j.value("workdir", std::string());
    return launch;
  } catch (const std::exception& e) {
    return Status::Internal(std::string("attune recipe launch --json: unexpected output: ") +
                            e.what());
  }
}

struct RenderInput {
  Json workflow;
  std::string recipe_path;
  std::string candidate = "baseline";
  std::string attempt = "1";
  std::string dir;
};

Result<std::string> Render(const std::string& attune, const RenderInput& in) {
  const Json& w = in.workflow;
  if (w.at("launcher").at("name") != "kuberay") {
    return Status::InvalidArgument("the workflow's launcher is '" +
                                   w.at("launcher").at("name").get<std::string>() +
                                   "', not kuberay");
  }
  ATTUNE_ASSIGN_OR_RETURN(KubeRayOptions options,
                          ParseKubeRayOptions(w.at("launcher").value("with", Json::object())));
  ATTUNE_ASSIGN_OR_RETURN(Recipe recipe, LoadRecipeFile(in.recipe_path));
  ATTUNE_ASSIGN_OR_RETURN(Json launch_json,
                          AttuneJson(attune, {"recipe", "launch", in.recipe_path, "--json", "--devices-per-node",
                                                      std::to_string(options.devices_per_node)}));
  ATTUNE_ASSIGN_OR_RETURN(LaunchSpec launch, LaunchFromJson(launch_json));
  std::string dir = in.dir.empty() ? w.at("name").get<std::string>() : in.dir;
  std::string campaign = fs::path(dir).lexically_normal().filename().string();
  std::string state_dir = options.state_dir.empty() ? (fs::path(dir) / "kuberay").string()
                                                    : options.state_dir;
  std::string owner =
      Sha256Hex(fs::weakly_canonical(fs::absolute(state_dir)).string()).substr(0, 12);
  JobSpec spec;
  spec.name = campaign + "-" + in.candidate + "-" + in.attempt;
  spec.recipe = recipe;
  spec.launch = launch;
  // What the stack says a job occupies (slime adds its rollout GPUs), on the nodes the engine
  // would request on this launcher's cluster (attune's own placement rule).
  spec.devices = launch_json.value("devices", recipe.topology.WorldSize());
  spec.nodes = launch_json.value("nodes", recipe.topology.nodes);
  spec.time_limit_s = w.at("budget").at("job_time_limit_s").get<double>();
  ATTUNE_ASSIGN_OR_RETURN(RenderedRayJob rendered,
                          RenderRayJob(spec, options, IdentifyJob(spec.name, campaign, owner)));
  return "# RayJob for job " + spec.name + " (" + std::to_string(rendered.gpus) +
         " GPUs requested)\n" + ToYaml(rendered.manifest);
}

}  // namespace

std::string RbacYaml(const std::string& ns, const std::string& account) {
  Json meta{{"name", account}, {"namespace", ns}, {"labels", {{"app.kubernetes.io/managed-by", "attune"}}}};
  Json sa{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", meta}};
  // Exactly what the launcher's kubectl calls need (kubectl.h): apply = get + create of a new
  // RayJob (attune never applies over an existing one), get -o json and -l = get + list, delete;
  // pods to find the submitter and head and read their state, pods/log for `kubectl logs`, events
  // to explain a lost node.
  Json rules = Json::array(
      {{{"apiGroups", {"ray.io"}}, {"resources", {"rayjobs"}}, {"verbs", {"get", "list", "create", "delete"}}},
       {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list"}}},
       {{"apiGroups", {""}}, {"resources", {"pods/log"}}, {"verbs", {"get"}}},
       {{"apiGroups", {""}}, {"resources", {"events"}}, {"verbs", {"list"}}}});
  Json role{{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "Role"}, {"metadata", meta},
            {"rules", rules}};
  Json binding{{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "RoleBinding"},
               {"metadata", meta},
               {"subjects", {{{"kind", "ServiceAccount"}, {"name", account}, {"namespace", ns}}}},
               {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", account}}}};
  return "# attune KubeRay launcher: the credentials it needs in namespace " + ns + " and nowhere "
         "else\n" + ToYaml(sa) + "---\n" + ToYaml(role) + "---\n" + ToYaml(binding);
}

std::vector<PluginCommand> KubeRayLauncher::Commands() const {
  return {{"render", "print the RayJob (YAML) a workflow's job would be submitted as"},
          {"rbac", "print the ServiceAccount, Role and RoleBinding the launcher needs"}};
}

int KubeRayLauncher::RenderCommand(const std::vector<std::string>& args, std::ostream& out,
                                   std::ostream& err) {
  std::vector<std::string> positional;
  std::map<std::string, std::string> v;
  if (!ParseArgs(args, {"candidate", "attempt", "dir", "recipe"}, &positional, &v, err) ||
      positional.size() != 1) {
    err << kRenderUsage;
    return kExitUsage;
  }
  auto workflow = AttuneJson(attune_binary_, {"validate", positional[0], "--json"});
  if (!workflow.ok()) {
    err << "attune kuberay render: " << workflow.status().message() << "\n";
    return kExitFailure;
  }
  RenderInput in;
  in.workflow = (*workflow)["workflow"];
  in.recipe_path = v.count("recipe") ? v["recipe"] : in.workflow.value("recipe_path", "");
  if (v.count("candidate")) in.candidate = v["candidate"];
  if (v.count("attempt")) in.attempt = v["attempt"];
  if (v.count("dir")) in.dir = v["dir"];
  auto yaml = Render(attune_binary_, in);
  if (!yaml.ok()) {
    err << "attune kuberay render: " << positional[0] << ": " << yaml.status().message() << "\n";
    return kExitFailure;
  }
  out << *yaml;
  return kExitOk;
}

int KubeRayLauncher::RunCommand(const std::string& command, const std::vector<std::string>& args,
                                std::ostream& out, std::ostream& err) {
  if (command == "render") return RenderCommand(args, out, err);
  if (command != "rbac") return Launcher::RunCommand(command, args, out, err);
  std::vector<std::string> positional;
  std::map<std::string, std::string> v;
  if (!ParseArgs(args, {"namespace", "service-account"}, &positional, &v, err) ||
      !positional.empty() || !v.count("namespace")) {
    err << kRbacUsage;
    return kExitUsage;
  }
  auto checked = ParseKubeRayOptions({{"namespace", v["namespace"]}, {"image", "-"}});
  if (!checked.ok()) {
    err << "attune kuberay rbac: " << checked.status().message() << "\n";
    return kExitUsage;
  }
  out << RbacYaml(v["namespace"], v.count("service-account") ? v["service-account"]
                                                             : "attune-launcher");
  return kExitOk;
}

}  // namespace attune::kuberay
