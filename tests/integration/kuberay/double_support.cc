#include "double_support.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "process.h"
#include "test_files.h"

namespace attune::kuberay_test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const char* kPython = "/usr/bin/python3";

std::string DoubleScript(const char* name) {
  return std::string(ATTUNE_SOURCE_DIR) + "/tests/k8s_double/" + name;
}

[[noreturn]] void Skip(const std::string& why) {
  std::cerr << "SKIPPED: " << why << "\n";
  std::exit(kSkipExitCode);
}

void CheckPrerequisites() {
  auto py = kuberay::RunCommand({kPython, "-c", "import jsonschema, yaml"}, "", 60);
  if (!py.ok() || py->exit_code != 0) {
    Skip("the API server double needs /usr/bin/python3 with python3-jsonschema and python3-yaml "
         "(tools/setup.sh installs them)");
  }
  auto k = kuberay::RunCommand({KubectlPath(), "version", "--client"}, "", 60);
  if (!k.ok() || k->exit_code != 0) {
    Skip("no kubectl (tools/setup.sh installs Debian's kubernetes-client; or set ATTUNE_KUBECTL)");
  }
  if (!fs::exists(std::string(ATTUNE_SHARED_DIR) + "/fixtures/kuberay/ray.io_rayjobs.yaml")) {
    Skip("the RayJob CRD is missing from ATTUNE_SHARED_DIR/fixtures/kuberay/");
  }
}

}  // namespace

std::string KubectlPath() {
  const char* k = std::getenv("ATTUNE_KUBECTL");
  return k && *k ? k : "kubectl";
}

std::string Scratch(const std::string& tag) {
  static const std::string root = [] {
    std::string dir = (fs::temp_directory_path() / ("attune-kuberay-" + std::to_string(getpid())))
                          .string();
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
  }();
  // Removed at exit, after the double that writes into it has stopped (statics go in reverse
  // order, and the double is made after this), unless ATTUNE_KEEP_TEST_DIRS is set.
  static const struct Remover {
    ~Remover() {
      std::error_code ec;
      if (!std::getenv("ATTUNE_KEEP_TEST_DIRS")) fs::remove_all(root, ec);
    }
  } remover;
  static int counter = 0;
  std::string dir = root + "/" + tag + "-" + std::to_string(++counter);
  fs::create_directories(dir);
  return dir;
}

std::string UniqueName(const std::string& tag) {
  return "t" + std::to_string(getpid()) + "-" + tag;
}

Double& Double::Get() {
  static Double* instance = new Double();  // stopped by the destructor at exit
  static struct Stopper {
    ~Stopper() { delete instance; }
  } stopper;
  return *instance;
}

Double::Double() {
  CheckPrerequisites();
  state_dir_ = Scratch("double");
  const std::string role = state_dir_ + "/role.yaml";
  std::ofstream(role) << kuberay::RbacYaml(kNamespace, "attune-launcher");
  kubeconfig_ = state_dir_ + "/kubeconfig";
  const std::string crd = std::string(ATTUNE_SHARED_DIR) + "/fixtures/kuberay/ray.io_rayjobs.yaml";
  std::vector<std::string> argv{kPython, DoubleScript("k8s_double.py"), "--crd", crd,
                                "--state-dir", state_dir_, "--workdir", ATTUNE_SOURCE_DIR,
                                "--port-file", state_dir_ + "/port", "--token",
                                std::string("tok-a=") + kNamespace, "--token", "tok-admin=*",
                                "--role", role, "--kubeconfig-out", kubeconfig_, "--kube-token",
                                "tok-a", "--kube-namespace", kNamespace, "--nodes", "4",
                                "--gpus-per-node", "8", "--strict-fields"};
  pid_ = fork();
  if (pid_ == 0) {
    std::string log = state_dir_ + "/double.log";
    if (!freopen(log.c_str(), "w", stderr) || !freopen(log.c_str(), "a", stdout)) _exit(127);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    execv(kPython, c.data());
    _exit(127);
  }
  for (int i = 0; i < 300 && !fs::exists(state_dir_ + "/port"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!fs::exists(state_dir_ + "/port")) {
    std::cerr << testing::ReadWholeFile(state_dir_ + "/double.log");
    Skip("the API server double did not start (its log is above)");
  }
  std::string config = testing::ReadWholeFile(kubeconfig_);
  size_t at = config.find("token: tok-a");
  admin_kubeconfig_ = state_dir_ + "/admin-kubeconfig";
  std::ofstream(admin_kubeconfig_) << config.replace(at, 12, "token: tok-admin");
}

Double::~Double() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void Double::AddFaults(const Json& faults) {
  auto r = kuberay::RunCommand({kPython, DoubleScript("double_ctl.py"), state_dir_, "faults",
                                faults.dump()}, "", 60);
  if (!r.ok() || r->exit_code != 0) {
    throw std::runtime_error("double_ctl faults failed: " + (r.ok() ? r->err : r.status().message()));
  }
}

Json Double::State() {
  auto r = kuberay::RunCommand({kPython, DoubleScript("double_ctl.py"), state_dir_, "state"}, "",
                               60);
  if (!r.ok() || r->exit_code != 0) throw std::runtime_error("double_ctl state failed");
  return Json::parse(r->out);
}

int Double::CountAudit(const std::string& event, const std::string& k8s_name) {
  std::istringstream lines(testing::ReadWholeFile(state_dir_ + "/audit.jsonl"));
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == event && j.value("rayjob", "") == k8s_name) ++n;
  }
  return n;
}

Run Kubectl(const std::vector<std::string>& args, const std::string& input, bool as_launcher) {
  Double& d = Double::Get();
  std::vector<std::string> argv{KubectlPath()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--kubeconfig=" + (as_launcher ? d.kubeconfig() : d.admin_kubeconfig()));
  auto r = kuberay::RunCommand(argv, input, 60);
  Run out;
  if (!r.ok()) {
    out.err = r.status().message();
    return out;
  }
  out.code = r->exit_code;
  out.out = r->out;
  out.err = r->err;
  return out;
}

Run ServerValidates(Json manifest, const std::string& ns) {
  Run r = Kubectl({"create", "--dry-run=server", "-n", ns, "-f", "-"}, manifest.dump());
  if (r.code == 0 || r.err.find("doesn't support dry-run") == std::string::npos) return r;
  static int counter = 0;
  const std::string name = UniqueName("validate-" + std::to_string(++counter));
  manifest["metadata"]["name"] = name;
  manifest["spec"]["suspend"] = true;
  r = Kubectl({"create", "-n", ns, "-f", "-"}, manifest.dump());
  if (r.code == 0) Kubectl({"delete", "rayjob", name, "-n", ns, "--wait=false"});
  return r;
}

Json Options(const Json& extra) {
  Json o{{"namespace", kNamespace},
         {"image", "rayproject/ray:2.9.0-py310"},
         {"kubectl", KubectlPath()},
         {"kubeconfig", Double::Get().kubeconfig()},
         {"poll_interval_s", 0.2},
         {"api_retries", 3},
         {"api_backoff_s", 0.5},
         {"request_timeout_s", 5},
         {"ttl_seconds_after_finished", 5}};
  for (const auto& [k, v] : extra.items()) o[k] = v;
  return o;
}

std::unique_ptr<kuberay::KubeRayLauncher> MakeLauncher(const Json& options,
                                                       std::shared_ptr<Recorded> recorded,
                                                       std::string state_dir) {
  auto parsed = kuberay::ParseKubeRayOptions(options);
  if (!parsed.ok()) throw std::runtime_error(parsed.status().message());
  if (state_dir.empty()) state_dir = Scratch("records");
  if (!recorded) recorded = std::make_shared<Recorded>();
  kuberay::LauncherEnv env = kuberay::SystemEnv(nullptr);
  env.sleep = [recorded](double s) {
    recorded->sleeps.push_back(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  return std::make_unique<kuberay::KubeRayLauncher>(*parsed, state_dir, "", "", env);
}

JobSpec ShellJob(const std::string& name, const std::string& command, double time_limit_s) {
  JobSpec spec;
  spec.name = name;
  spec.job_dir = Scratch("job-" + name);
  spec.log_path = spec.job_dir + "/job.log";
  spec.recipe.stack = "megatron";
  spec.recipe.topology = Topology{1, 1, "H100"};
  spec.launch.argv = {"/bin/sh", "-c", command};
  spec.nodes = 1;
  spec.devices = 1;
  spec.time_limit_s = time_limit_s;
  spec.options = Json::object();
  return spec;
}

JobStatus WaitTerminal(Launcher& launcher, const std::string& name, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  JobStatus last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto s = launcher.Poll(name);
    if (!s.ok()) throw std::runtime_error("Poll failed: " + s.status().ToString());
    last = *s;
    if (IsTerminal(last.state)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return last;
}

JobStatus WaitState(Launcher& launcher, const std::string& name, JobState state,
                    double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  JobStatus last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto s = launcher.Poll(name);
    if (!s.ok()) throw std::runtime_error("Poll failed: " + s.status().ToString());
    last = *s;
    if (last.state == state || IsTerminal(last.state)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return last;
}

}  // namespace attune::kuberay_test
