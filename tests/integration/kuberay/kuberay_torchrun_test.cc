// Multi-node torchrun recipes on the KubeRay launcher, end to end against the API server double:
// the rendered RayJob (layout workers, the Ray driver torchrun_on_ray.py in its entrypoint) passes
// the CRD's strict validation, and the double runs the entrypoint as a local process, where the
// driver runs with the stand-in `ray` package (tests/ray_double/, a test double: every "node" is
// this machine) and starts the real torchrun of Debian's python3-torch once per worker pod. Skipped
// (passes with a warning) without torch.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "double_support.h"
#include "process.h"
#include "rayjob.h"
#include "test_files.h"

namespace attune::kuberay_test {
namespace {

using Json = nlohmann::json;
const std::string kSource = ATTUNE_SOURCE_DIR;

bool HaveTorch() {
  auto r = kuberay::RunCommand({"/usr/bin/python3", "-c", "import torch"}, "", 120);
  return r.ok() && r->exit_code == 0;
}

// Worker pods with one "GPU" each; the driver's Ray is the stand-in, torchrun the minigpt shim
// (torch 1.13's own torchrun cannot start workers under Python 3.11; tools/minigpt/README.md).
Json TorchrunOptions() {
  return Options({{"layout", "workers"},
                  {"gpus_per_worker", 1},
                  {"env", {{"PYTHONPATH", kSource + "/tests/ray_double"},
                           {"PATH", kSource + "/tools/minigpt/bin:/usr/bin:/bin"}}}});
}

JobSpec TorchrunJob(const std::string& tag, std::vector<std::string> script) {
  JobSpec spec = ShellJob(UniqueName(tag), "", 300);
  spec.recipe.topology = Topology{2, 1, "H100"};
  spec.nodes = 2;
  spec.devices = 2;
  // The recipe's own rendezvous flags: the driver replaces them.
  spec.launch.argv = {"torchrun", "--nproc-per-node", "1", "--nnodes", "2", "--master-addr",
                      "never-used", "--master-port", "1"};
  spec.launch.argv.insert(spec.launch.argv.end(), script.begin(), script.end());
  return spec;
}

std::vector<int> ProbePids(const std::string& log) {
  std::vector<int> pids;
  static const std::regex ready(R"(probe: ready pid=(\d+))");
  for (std::sregex_iterator it(log.begin(), log.end(), ready), end; it != end; ++it) {
    pids.push_back(std::stoi((*it)[1]));
  }
  return pids;
}

bool Alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return false;
  size_t close = text.rfind(')');
  return close != std::string::npos && text.substr(close + 2, 1) != "Z";
}

}  // namespace

TEST_CASE("a 2-node torchrun RayJob passes the API server's strict validation against the CRD",
          "[kuberay][torchrun]") {
  auto options = kuberay::ParseKubeRayOptions(TorchrunOptions());
  REQUIRE(options.ok());
  JobSpec spec = TorchrunJob("validate", {"pretrain_gpt.py", "--num-layers", "2"});
  auto rendered = kuberay::RenderRayJob(spec, *options, kuberay::IdentifyJob(spec.name, "", "0123456789ab"));
  REQUIRE(rendered.ok());
  Run r = ServerValidates(rendered->manifest, kNamespace);
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("`attune kuberay render` of a 2-node Megatron recipe shows the driver's entrypoint, and "
          "the API server accepts it", "[kuberay][torchrun]") {
  auto rendered = kuberay::RunCommand(
      {testing::AttuneBinaryPath(), "kuberay", "render", kSource + "/workflows/examples/kuberay.yaml",
       "--recipe", kSource + "/workflows/examples/recipes/llama3-8b-32k-h100x16.yaml"},
      "", 120);
  REQUIRE(rendered.ok());
  INFO(rendered->err);
  REQUIRE(rendered->exit_code == 0);
  auto manifest = YamlToJsonValue(rendered->out, "render");
  REQUIRE(manifest.ok());
  const std::string entrypoint = (*manifest)["spec"]["entrypoint"];
  CHECK_THAT(entrypoint, Catch::Contains("python3 -c 'import base64,sys;exec(base64.b64decode(sys.argv.pop(1)))' ") &&
                             Catch::Contains(" --nnodes 2 --gpus-per-node 8 -- torchrun --nproc-per-node 8 "));
  CHECK((*manifest)["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] == 2);
  Run r = ServerValidates(*manifest, "ml-team");
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("a 2-node Megatron-form torchrun recipe runs as a RayJob: real torchrun on each worker, "
          "one world, succeeded, and the log parses as Megatron's", "[kuberay][torchrun]") {
  if (!HaveTorch()) {
    WARN("skipped: /usr/bin/python3 has no torch");
    return;
  }
  auto launcher = MakeLauncher(TorchrunOptions());
  JobSpec spec = TorchrunJob(
      "minigpt", {kSource + "/tools/minigpt/pretrain_gpt.py", "--num-layers", "1", "--hidden-size", "32",
                  "--num-attention-heads", "2", "--seq-length", "16", "--micro-batch-size", "1",
                  "--global-batch-size", "2", "--train-iters", "3", "--log-interval", "1",
                  "--distributed-backend", "gloo"});
  auto submitted = launcher->Submit(spec);
  REQUIRE(submitted.ok());
  JobStatus s = WaitTerminal(*launcher, spec.name, 240);
  auto log = launcher->ReadLog(spec.name);
  REQUIRE(log.ok());
  INFO(*log);
  REQUIRE(s.state == JobState::kSucceeded);
  CHECK(s.exit_code == 0);
  CHECK(s.devices == 2);
  CHECK_THAT(*log, Catch::Contains("using world size: 2, data-parallel size: 2"));
  CHECK_THAT(*log, Catch::Contains("(torchrun_node0 pid=") && Catch::Contains("(torchrun_node1 pid="));
  CHECK_THAT(*log, Catch::Contains("torchrun_on_ray: all 2 nodes finished"));
  CHECK_THAT(*log, !Catch::Contains("never-used"));
  // Megatron's parser reads the iterations the last rank (node 1) printed through the driver.
  auto parsed = kuberay::RunCommand({testing::AttuneBinaryPath(), "log", "parse", "--stack",
                                     "megatron", spec.log_path, "--json"},
                                    "", 120);
  REQUIRE(parsed.ok());
  INFO(parsed->err);
  REQUIRE(parsed->exit_code == 0);
  Json parse = Json::parse(parsed->out);
  CHECK(parse["iterations"].size() == 3);
}

TEST_CASE("cancelling a torchrun RayJob stops the driver, every torchrun and their workers",
          "[kuberay][torchrun]") {
  if (!HaveTorch()) {
    WARN("skipped: /usr/bin/python3 has no torch");
    return;
  }
  auto launcher = MakeLauncher(TorchrunOptions());
  JobSpec spec = TorchrunJob("cancel", {kSource + "/tests/integration/kuberay/torchrun_probe.py",
                                        "--sleep", "120"});
  REQUIRE(launcher->Submit(spec).ok());
  std::string log;
  for (int i = 0; i < 600 && ProbePids(log).size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto read = launcher->ReadLog(spec.name);
    if (read.ok()) log = *read;
  }
  INFO(log);
  const std::vector<int> workers = ProbePids(log);
  REQUIRE(workers.size() == 2);
  REQUIRE(launcher->Cancel(spec.name).ok());
  JobStatus s = WaitTerminal(*launcher, spec.name, 60);
  CHECK(s.state == JobState::kCancelled);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !Alive(workers[0]) && !Alive(workers[1]);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(gone);
}

}  // namespace attune::kuberay_test
