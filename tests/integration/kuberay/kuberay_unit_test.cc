// The KubeRay launcher's pure parts: options, names, the RayJob manifest and its YAML, the mapping
// from RayJob status to the engine's states, and the classification of kubectl's errors.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "attune/recipe.h"
#include "kubectl.h"
#include "kuberay_options.h"
#include "rayjob.h"
#include "status_map.h"
#include "torchrun_driver.h"

namespace attune::kuberay {
namespace {

using Json = nlohmann::json;

Json Base(const Json& extra = Json::object()) {
  Json o{{"namespace", "team-a"}, {"image", "rayproject/ray:2.9.0"}};
  for (const auto& [k, v] : extra.items()) o[k] = v;
  return o;
}

std::string ParseError(const Json& config) {
  auto r = ParseKubeRayOptions(config);
  return r.ok() ? "" : r.status().message();
}

JobSpec Spec(std::vector<std::string> argv, int nodes = 1, int per_node = 8) {
  JobSpec spec;
  spec.name = "camp-c3-2";
  spec.recipe.topology = Topology{nodes, per_node, "H100"};
  spec.launch.argv = std::move(argv);
  spec.launch.env = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  spec.nodes = nodes;
  spec.devices = nodes * per_node;
  spec.time_limit_s = 599.2;
  return spec;
}

Result<RenderedRayJob> Render(const JobSpec& spec, const Json& extra = Json::object()) {
  auto options = ParseKubeRayOptions(Base(extra));
  REQUIRE(options.ok());
  return RenderRayJob(spec, *options, IdentifyJob(spec.name, "camp", "0123456789ab"));
}

Json RayJob(const Json& status) {
  return {{"metadata", {{"name", "camp-c3-2-abcdef"}, {"namespace", "team-a"}}}, {"status", status}};
}

Json Pod(const std::string& name, const Json& status, const std::string& node = "n1") {
  Json pod{{"metadata", {{"name", name}}}, {"spec", Json::object()}, {"status", status}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

}  // namespace

TEST_CASE("options: unknown keys are refused with the nearest valid one", "[kuberay][options]") {
  CHECK_THAT(ParseError(Base({{"namspace", "x"}})), Catch::Contains("with.namspace: unknown key") &&
                                                        Catch::Contains("did you mean 'namespace'"));
  CHECK_THAT(ParseError(Base({{"gpus_per_workr", 8}})), Catch::Contains("'gpus_per_worker'"));
  CHECK_THAT(ParseError(Base({{"volumes", Json::array({{{"name", "d"}, {"mount_path", "/d"},
                                                         {"pvc", "x"}, {"read_onyl", true}}})}})),
             Catch::Contains("volumes[0]") && Catch::Contains("did you mean 'read_only'"));
  CHECK_THAT(ParseError(Base({{"volumes", Json::array({{{"name", "d"}, {"mount_pth", "/d"}}})}})),
             Catch::Contains("volumes[0].mount_path: required key is missing"));
  CHECK_THAT(ParseError(Base({{"tolerations", Json::array({{{"keys", "a"}}})}})),
             Catch::Contains("tolerations[0]") && Catch::Contains("'key'"));
}

TEST_CASE("options: types, ranges and required keys", "[kuberay][options]") {
  CHECK_THAT(ParseError({{"image", "x"}}), Catch::Contains("'namespace' is required"));
  CHECK_THAT(ParseError({{"namespace", "a"}}), Catch::Contains("'image' is required"));
  CHECK_THAT(ParseError(Base({{"namespace", "Team_A"}})), Catch::Contains("with.namespace"));
  CHECK_THAT(ParseError(Base({{"head_memory", "lots"}})), Catch::Contains("quantity"));
  CHECK_THAT(ParseError(Base({{"gpus_per_worker", "8"}})), Catch::Contains("with.gpus_per_worker"));
  CHECK_THAT(ParseError(Base({{"api_retries", -1}})), Catch::Contains("with.api_retries"));
  CHECK_THAT(ParseError(Base({{"submission_mode", "HTTPMode"}})),
             Catch::Contains("with.submission_mode") && Catch::Contains("SidecarMode"));
  CHECK_THAT(ParseError(Base({{"layout", "spread"}})), Catch::Contains("with.layout"));
  CHECK_THAT(ParseError(Base({{"labels", {{"team", "has space"}}}})), Catch::Contains("label value"));
  CHECK_THAT(ParseError(Base({{"env", {{"1BAD", "x"}}}})), Catch::Contains("1BAD"));
  CHECK_THAT(ParseError(Base({{"volumes", Json::array({{{"name", "d"}, {"mount_path", "/d"},
                                                         {"pvc", "a"}, {"empty_dir", true}}})}})),
             Catch::Contains("exactly one source"));
  CHECK_THAT(ParseError(Base({{"ttl_seconds_after_finished", 5}, {"poll_interval_s", 10}})),
             Catch::Contains("at least twice"));
  CHECK(ParseError(Base({{"head_cpu", 8}, {"worker_memory", "64Gi"}, {"shm_size", "16Gi"}})).empty());
}

TEST_CASE("RayJob names are DNS-1035 labels of at most 47 characters, deterministic and distinct",
          "[kuberay][names]") {
  const std::regex dns1035("^[a-z]([-a-z0-9]*[a-z0-9])?$");
  CHECK_THAT(KubernetesName("camp-c3-2", "0123456789ab"), Catch::Matches("camp-c3-2-[0-9a-f]{6}"));
  CHECK(KubernetesName("camp-c3-2", "0123456789ab") != KubernetesName("camp-c3-2", "ba9876543210"));
  const std::vector<std::string> jobs{"Camp_1-baseline-1", "9lives-c1-1", "a.b-verify-c2-p1-1",
                                      std::string(80, 'x') + "-c1-1", "---"};
  for (const std::string& job : jobs) {
    std::string name = KubernetesName(job, "0123456789ab");
    INFO(job << " -> " << name);
    CHECK(std::regex_match(name, dns1035));
    CHECK(name.size() <= 47);
    CHECK(KubernetesName(job, "0123456789ab") == name);
  }
  CHECK(KubernetesName("A_b-c1-1", "o") != KubernetesName("a-b-c1-1", "o"));
}

TEST_CASE("a job's identity: labels split from the name, a selector by owner and hash",
          "[kuberay][names]") {
  JobIdentity id = IdentifyJob("my.camp-verify-c4-p1-2", "my.camp", "0123456789ab");
  CHECK(id.campaign == "my.camp");
  CHECK(id.candidate == "verify-c4-p1");
  CHECK(id.attempt == "2");
  CHECK(id.job_hash.size() == 16);
  CHECK(LabelSelector(id) == "attune.owner=0123456789ab,attune.job-hash=" + id.job_hash);
  CHECK(LabelValue("__a b__") == "a-b");
  CHECK(LabelValue(std::string(100, 'z')).size() == 63);
}

TEST_CASE("the entrypoint is the stack's command without `ray job submit ... --`",
          "[kuberay][render]") {
  LaunchSpec slime{{"ray", "job", "submit", "--address", "http://x:8265", "--", "python3",
                    "train.py", "--actor-num-nodes", "2"}, {}, ""};
  CHECK(*Entrypoint(slime) == "python3 train.py --actor-num-nodes 2");
  LaunchSpec quoted{{"python3", "pretrain_gpt.py", "--data-path", "a b"}, {}, "/workspace/Megatron-LM"};
  CHECK(*Entrypoint(quoted) == "cd /workspace/Megatron-LM && python3 pretrain_gpt.py --data-path 'a b'");
  CHECK_FALSE(Entrypoint(LaunchSpec{}).ok());
}

TEST_CASE("a single-node recipe: the head pod holds the GPUs and runs torchrun",
          "[kuberay][render]") {
  auto r = Render(Spec({"torchrun", "--nproc-per-node", "8", "pretrain_gpt.py"}));
  REQUIRE(r.ok());
  const Json& m = r->manifest;
  CHECK(r->gpus == 8);
  CHECK(m["apiVersion"] == "ray.io/v1");
  CHECK(m["metadata"]["annotations"]["attune.job"] == "camp-c3-2");
  CHECK(m["metadata"]["labels"]["attune.candidate"] == "c3");
  CHECK(m["metadata"]["labels"]["attune.attempt"] == "2");
  CHECK(m["spec"]["activeDeadlineSeconds"] == 600);
  CHECK(m["spec"]["backoffLimit"] == 0);
  CHECK_FALSE(m["spec"]["rayClusterSpec"].contains("workerGroupSpecs"));
  const Json& head = m["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0];
  CHECK(head["resources"]["limits"]["nvidia.com/gpu"] == 8);
  CHECK_THAT(m["spec"]["runtimeEnvYAML"].get<std::string>(),
             Catch::Contains("CUDA_DEVICE_MAX_CONNECTIONS: \"1\""));
}

TEST_CASE("a multi-node Ray-native recipe: a CPU head and one GPU worker per node",
          "[kuberay][render]") {
  auto r = Render(Spec({"python3", "train.py", "--actor-num-nodes", "4"}, 4, 8),
                  {{"node_selector", {{"gpu", "h100"}}}, {"env", {{"CUDA_DEVICE_MAX_CONNECTIONS", "8"}}}});
  REQUIRE(r.ok());
  const Json& group = r->manifest["spec"]["rayClusterSpec"]["workerGroupSpecs"][0];
  CHECK(group["replicas"] == 4);
  CHECK(group["minReplicas"] == 4);
  CHECK(group["maxReplicas"] == 4);
  CHECK(group["template"]["spec"]["nodeSelector"]["gpu"] == "h100");
  CHECK(r->head_gpus == 0);
  CHECK(r->gpus == 32);
  // The stack's environment wins over the launcher's.
  CHECK_THAT(r->manifest["spec"]["runtimeEnvYAML"].get<std::string>(),
             Catch::Contains("CUDA_DEVICE_MAX_CONNECTIONS: \"1\""));
}

TEST_CASE("a disaggregated slime job gets its rollout GPUs too: the engine's request, not the topology",
          "[kuberay][render]") {
  // Actors on 1 x 8, rollout engines on 8 more: the stack says 16 devices on 2 nodes.
  JobSpec spec = Spec({"python3", "train.py", "--actor-num-nodes", "1", "--rollout-num-gpus", "8"}, 1, 8);
  spec.nodes = 2;
  spec.devices = 16;
  auto r = Render(spec);
  REQUIRE(r.ok());
  const Json& group = r->manifest["spec"]["rayClusterSpec"]["workerGroupSpecs"][0];
  CHECK(group["replicas"] == 2);
  CHECK(group["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8);
  CHECK(r->head_gpus == 0);
  CHECK(r->gpus == 16);
}

TEST_CASE("what cannot run as asked is refused before anything is submitted", "[kuberay][render]") {
  auto head = Render(Spec({"python3", "train.py"}, 2, 8), {{"layout", "head"}});
  REQUIRE_FALSE(head.ok());
  CHECK_THAT(head.status().message(), Catch::Contains("2 nodes") && Catch::Contains("layout 'workers'"));
  // torchrun under the Ray driver: as many processes per node as a worker pod has GPUs...
  auto nproc = Render(Spec({"torchrun", "--nproc-per-node", "8", "--nnodes", "2", "pretrain_gpt.py"}, 2, 8),
                      {{"gpus_per_worker", 4}});
  REQUIRE_FALSE(nproc.ok());
  CHECK_THAT(nproc.status().message(),
             Catch::Contains("--nproc-per-node 8") && Catch::Contains("4 GPUs (gpus_per_worker)") &&
                 Catch::Contains("set gpus_per_worker: 8"));
  auto word = Render(Spec({"torchrun", "--nproc-per-node=gpu", "pretrain_gpt.py"}, 2, 8));
  REQUIRE_FALSE(word.ok());
  CHECK_THAT(word.status().message(), Catch::Contains("--nproc-per-node gpu"));
  // ...and as many nodes as the job has worker pods.
  auto nodes = Render(Spec({"torchrun", "--nproc-per-node", "8", "--nnodes", "3", "pretrain_gpt.py"}, 2, 8));
  REQUIRE_FALSE(nodes.ok());
  CHECK_THAT(nodes.status().message(), Catch::Contains("--nnodes 3") && Catch::Contains("2 worker pods"));
  // deepspeed's launcher needs ssh and a hostfile: it cannot reach worker pods.
  auto deepspeed = Render(Spec({"deepspeed", "--num_nodes", "2", "--num_gpus", "8", "pretrain_gpt.py"}, 2, 8));
  REQUIRE_FALSE(deepspeed.ok());
  CHECK_THAT(deepspeed.status().message(), Catch::Contains("deepspeed") && Catch::Contains("with torchrun"));
  auto script = Render(Spec({"torchrun", "--nproc-per-node", "8"}, 2, 8));
  REQUIRE_FALSE(script.ok());
  CHECK_THAT(script.status().message(), Catch::Contains("no training script"));
}

TEST_CASE("a multi-node torchrun recipe runs under the Ray driver, one torchrun per worker pod",
          "[kuberay][render]") {
  auto r = Render(Spec({"torchrun", "--nproc-per-node", "8", "--nnodes", "2", "--node-rank", "0",
                        "--master-addr", "10.0.0.9", "--master_port=6000", "--rdzv-backend", "c10d",
                        "--standalone", "pretrain_gpt.py", "--num-layers", "32", "--nnodes", "7"},
                       2, 8));
  REQUIRE(r.ok());
  const std::string entrypoint = r->manifest["spec"]["entrypoint"];
  const std::string driver = "python3 -c 'import base64,sys;exec(base64.b64decode(sys.argv.pop(1)))' " +
                             Base64(kTorchrunDriverSource) + " ";
  REQUIRE(entrypoint.rfind(driver, 0) == 0);
  // The rendezvous is the driver's; --nproc-per-node and the script's own words stay.
  CHECK(entrypoint.substr(driver.size()) ==
        "--nnodes 2 --gpus-per-node 8 -- torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 "
        "--nnodes 7");
  const Json& group = r->manifest["spec"]["rayClusterSpec"]["workerGroupSpecs"][0];
  CHECK(group["replicas"] == 2);
  CHECK(group["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8);
  CHECK(r->head_gpus == 0);
  CHECK(r->gpus == 16);
  // `python3 -m torch.distributed.run`, layout workers chosen outright, a stack working directory.
  JobSpec module = Spec({"python3", "-m", "torch.distributed.run", "--nproc_per_node=4", "train.py"}, 2, 4);
  module.launch.workdir = "/workspace/Megatron-LM";
  auto m = Render(module, {{"layout", "workers"}});
  REQUIRE(m.ok());
  CHECK_THAT(m->manifest["spec"]["entrypoint"].get<std::string>(),
             Catch::StartsWith("cd /workspace/Megatron-LM && python3 -c ") &&
                 Catch::EndsWith(" --nnodes 2 --gpus-per-node 4 -- python3 -m torch.distributed.run "
                                 "--nproc_per_node=4 train.py"));
  // One node with layout workers: still one worker pod and the driver.
  auto one = Render(Spec({"torchrun", "--nproc-per-node", "8", "pretrain_gpt.py"}), {{"layout", "workers"}});
  REQUIRE(one.ok());
  CHECK_THAT(one->manifest["spec"]["entrypoint"].get<std::string>(),
             Catch::Contains("--nnodes 1 --gpus-per-node 8 -- torchrun"));
  // A single-node recipe keeps layout head and its plain torchrun.
  auto single = Render(Spec({"torchrun", "--nproc-per-node", "8", "pretrain_gpt.py"}));
  REQUIRE(single.ok());
  CHECK(single->manifest["spec"]["entrypoint"] == "torchrun --nproc-per-node 8 pretrain_gpt.py");
}

TEST_CASE("the driver in the entrypoint is torchrun_on_ray.py, byte for byte, in base64",
          "[kuberay][render]") {
  std::ifstream in(std::string(ATTUNE_SOURCE_DIR) + "/plugins/launchers/kuberay/torchrun_on_ray.py",
                   std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  CHECK(std::string(kTorchrunDriverSource) == file.str());
  // RFC 4648's test vectors.
  CHECK(Base64("") == "");
  CHECK(Base64("f") == "Zg==");
  CHECK(Base64("fo") == "Zm8=");
  CHECK(Base64("foo") == "Zm9v");
  CHECK(Base64("foob") == "Zm9vYg==");
  CHECK(Base64("fooba") == "Zm9vYmE=");
  CHECK(Base64("foobar") == "Zm9vYmFy");
  CHECK(Base64(std::string("\xff\x00\xfe", 3)) == "/wD+");
}

TEST_CASE("the YAML form reads back as the same document", "[kuberay][yaml]") {
  Json doc{{"strings", {"yes", "1", "", "a: b", "-x", "#c", "multi\nline\n", "no final\nnewline",
                        "two\n\n", " lead\nx", "tab\tx\ny", "üñí"}},
           {"numbers", {0, -3, 2.5}},
           {"flags", {true, false}},
           {"null", nullptr},
           {"empty", {{"o", Json::object()}, {"a", Json::array()}}},
           {"weird key: x", 1},
           {"nested", Json::array({Json::array({1, 2}), {{"k", "v"}, {"k2", {{"deep", "er"}}}}})}};
  std::string yaml = ToYaml(doc);
  auto back = YamlToJsonValue(yaml, "roundtrip");
  REQUIRE(back.ok());
  INFO(yaml);
  CHECK(*back == doc);
  auto manifest = Render(Spec({"python3", "train.py", "--msg", "it's \"quoted\""}));
  REQUIRE(manifest.ok());
  auto parsed = YamlToJsonValue(ToYaml(manifest->manifest), "manifest");
  REQUIRE(parsed.ok());
  CHECK(*parsed == manifest->manifest);
}

TEST_CASE("RayJob status to engine state: success, driver failure, deadline, stop, refusal",
          "[kuberay][status]") {
  PodEvidence none;
  JobStatus ok = MapRayJob("j", RayJob({{"jobDeploymentStatus", "Complete"}, {"jobStatus", "SUCCEEDED"},
                                        {"startTime", "2026-01-02T03:04:05Z"},
                                        {"endTime", "2026-01-02T04:04:05Z"}}), none, 8);
  CHECK(ok.state == JobState::kSucceeded);
  CHECK(ok.DeviceHours() == Approx(8.0));
  CHECK(ok.launcher_job_id == "team-a/camp-c3-2-abcdef");
  JobStatus failed = MapRayJob("j", RayJob({{"jobDeploymentStatus", "Failed"}, {"jobStatus", "FAILED"},
                                            {"reason", "AppFailed"},
                                            {"message", "Job entrypoint command failed with exit code 2, last available logs:\nboom"},
                                            {"startTime", "2026-01-02T03:04:05Z"},
                                            {"endTime", "2026-01-02T03:05:05Z"}}), none, 8);
  CHECK(failed.state == JobState::kFailed);
  CHECK(failed.exit_code == 2);
  CHECK_THAT(failed.reason, Catch::Contains("(AppFailed)") && !Catch::Contains("boom"));
  JobStatus late = MapRayJob("j", RayJob({{"jobDeploymentStatus", "Failed"}, {"reason", "DeadlineExceeded"},
                                          {"startTime", "2026-01-02T03:04:05Z"},
                                          {"endTime", "2026-01-02T03:14:05Z"}}), none, 8);
  CHECK(late.state == JobState::kTimedOut);
  CHECK(late.DeviceHours() == Approx(8.0 / 6));
  CHECK(MapRayJob("j", RayJob({{"jobDeploymentStatus", "Complete"}, {"jobStatus", "STOPPED"}}), none, 8)
            .state == JobState::kCancelled);
  JobStatus refused = MapRayJob("j", RayJob({{"jobDeploymentStatus", "ValidationFailed"},
                                             {"message", "RayJob name should be no more than 47 characters"}}),
                                none, 8);
  CHECK(refused.state == JobState::kFailed);
  CHECK(refused.DeviceHours() == 0);
  CHECK(MapRayJob("j", RayJob({{"jobDeploymentStatus", "Running"}}), none, 8).state == JobState::kRunning);
  CHECK(MapRayJob("j", RayJob(Json::object()), none, 8).state == JobState::kPending);
}

TEST_CASE("pods and events refine a failure: OOMKilled, a lost node, an image pull, a wait for GPUs",
          "[kuberay][status]") {
  Json failed = RayJob({{"jobDeploymentStatus", "Failed"}, {"reason", "AppFailed"},
                        {"startTime", "2026-01-02T03:04:05Z"}, {"endTime", "2026-01-02T03:05:05Z"}});
  Json oom_pod = Pod("c-abcde-head-xyz12", {{"phase", "Running"}, {"containerStatuses", Json::array({
      {{"name", "ray-head"}, {"lastState", {{"terminated", {{"reason", "OOMKilled"}, {"exitCode", 137}}}}},
       {"state", {{"running", Json::object()}}}}})}});
  JobStatus oom = MapRayJob("j", failed, ReadPodEvidence({oom_pod}, {}), 8);
  CHECK(oom.state == JobState::kOutOfMemory);
  CHECK_THAT(oom.reason, Catch::Contains("c-abcde-head-xyz12") && Catch::Contains("exit code 137"));
  Json event{{"involvedObject", {{"kind", "Pod"}, {"name", "c-abcde-head-xyz12"}}},
             {"reason", "NodeNotReady"}, {"message", "Node is not ready"}};
  CHECK(MapRayJob("j", failed, ReadPodEvidence({}, {event}), 8).state == JobState::kNodeFailure);
  Json pulling = Pod("c-head-1", {{"phase", "Pending"}, {"containerStatuses", Json::array({
      {{"name", "ray-head"}, {"state", {{"waiting", {{"reason", "ImagePullBackOff"},
                                                     {"message", "Back-off pulling image \"x\""}}}}}}})}});
  JobStatus waiting = MapRayJob("j", RayJob({{"jobDeploymentStatus", "Initializing"}}),
                                ReadPodEvidence({pulling}, {}), 8);
  CHECK(waiting.state == JobState::kPending);
  CHECK_THAT(waiting.reason, Catch::Contains("ImagePullBackOff"));
  Json unschedulable = Pod("c-head-2", {{"phase", "Pending"}, {"conditions", Json::array({
      {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
       {"message", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}}})}}, "");
  PodEvidence e = ReadPodEvidence({unschedulable}, {});
  CHECK_FALSE(e.any_scheduled);
  CHECK_THAT(*e.unschedulable, Catch::Contains("Insufficient nvidia.com/gpu"));
}

TEST_CASE("times: RFC 3339 with or without fractions; anything else is no time", "[kuberay][status]") {
  CHECK(ParseTime("1970-01-01T00:01:40Z") == 100.0);
  CHECK(ParseTime("1970-01-01T00:01:40.250000Z") == 100.25);
  CHECK_FALSE(ParseTime("1970-01-01 00:01:40").has_value());
  CHECK_FALSE(ParseTime("").has_value());
}

TEST_CASE("kubectl's errors: not found, conflicts, refusals, credentials, and transient ones",
          "[kuberay][kubectl]") {
  auto classify = [](const std::string& err, int code = 1, bool timed_out = false) {
    CommandResult r;
    r.exit_code = code;
    r.err = err;
    r.timed_out = timed_out;
    bool transient = false;
    Status s = ClassifyKubectl(r, "kubectl x", &transient);
    return std::make_pair(s.code(), transient);
  };
  using P = std::pair<StatusCode, bool>;
  CHECK(classify("", 0) == P{StatusCode::kOk, false});
  CHECK(classify("Error from server (NotFound): rayjobs.ray.io \"x\" not found") ==
        P{StatusCode::kNotFound, false});
  CHECK(classify("Error from server (AlreadyExists): rayjobs.ray.io \"x\" already exists") ==
        P{StatusCode::kAlreadyExists, false});
  CHECK(classify("The RayJob \"x\" is invalid: spec.ttlSecondsAfterFinished: Invalid value") ==
        P{StatusCode::kInvalidArgument, false});
  CHECK(classify("Error from server (Forbidden): rayjobs.ray.io is forbidden: User \"u\" cannot list") ==
        P{StatusCode::kFailedPrecondition, false});
  CHECK(classify("error: You must be logged in to the server (Unauthorized)") ==
        P{StatusCode::kFailedPrecondition, false});
  CHECK(classify("Error from server (InternalError): Internal error occurred: etcd") ==
        P{StatusCode::kUnavailable, true});
  CHECK(classify("The connection to the server 127.0.0.1:6443 was refused - did you specify the "
                 "right host or port?") == P{StatusCode::kUnavailable, true});
  CHECK(classify("Unable to connect to the server: net/http: TLS handshake timeout") ==
        P{StatusCode::kUnavailable, true});
  CHECK(classify("", -1, true) == P{StatusCode::kUnavailable, true});
  CHECK(classify("error: unknown flag: --bogus") == P{StatusCode::kFailedPrecondition, false});
}

TEST_CASE("files a job writes reach this machine only through a writable pvc or host_path volume above them",
          "[kuberay][files]") {
  auto shared = [](const Json& volumes, const std::string& dir) {
    auto options = ParseKubeRayOptions(Base({{"volumes", volumes}}));
    REQUIRE(options.ok());
    return CheckSharedFolder(*options, dir);
  };
  const std::string traces = "/shared/campaigns/c1/jobs/c1-profile-baseline-1/traces";
  CHECK(shared(Json::array({{{"name", "c"}, {"mount_path", "/shared/campaigns"}, {"pvc", "attune-campaigns"}}}),
               traces).ok());
  CHECK(shared(Json::array({{{"name", "c"}, {"mount_path", "/shared/campaigns/"}, {"host_path", "/mnt/nfs"}}}),
               traces).ok());
  CHECK(shared(Json::array({{{"name", "c"}, {"mount_path", traces}, {"pvc", "p"}}}), traces).ok());

  // No volume, one beside the folder (a prefix of its name is not a parent), one that stays in
  // the pod, one mounted read-only: the job's files never reach this machine, and the message says
  // what to mount.
  Status none = shared(Json::array(), traces);
  REQUIRE_FALSE(none.ok());
  CHECK(none.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(none.message(), Catch::Contains(traces) && Catch::Contains("volumes") &&
                                 Catch::Contains("mount_path") && Catch::Contains("docs/kuberay.md"));
  CHECK_FALSE(shared(Json::array({{{"name", "c"}, {"mount_path", "/shared/camp"}, {"pvc", "p"}}}), traces).ok());
  CHECK_FALSE(shared(Json::array({{{"name", "c"}, {"mount_path", "/shared"}, {"empty_dir", true}}}), traces).ok());
  Status read_only = shared(
      Json::array({{{"name", "c"}, {"mount_path", "/shared"}, {"pvc", "p"}, {"read_only", true}}}), traces);
  REQUIRE_FALSE(read_only.ok());
  CHECK_THAT(read_only.message(), Catch::Contains("read_only"));
}

}  // namespace attune::kuberay
