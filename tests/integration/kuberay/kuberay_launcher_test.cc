// The KubeRay launcher with the real kubectl against the API server test double
// (tests/k8s_double/): every call goes through kubectl, the double validates each RayJob against
// the real CRD, and the launcher's token is limited to team-a and to the Role `attune kuberay
// rbac` prints — so every test here also proves that Role is enough.
#include <catch2/catch.hpp>

#include <filesystem>
#include <thread>

#include "double_support.h"
#include "process.h"
#include "conformance_report.h"
#include "test_files.h"

namespace attune::kuberay_test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Json RayJobNamed(const std::string& k8s_name) {
  const Json state = Double::Get().State();  // the loop must not outlive it
  for (const auto& j : state["rayjobs"]) {
    if (j["metadata"]["name"] == k8s_name) return j;
  }
  return Json();
}

// The RayJob's name for a job of this launcher.
std::string K8s(const kuberay::KubeRayLauncher& l, const std::string& job) {
  return kuberay::IdentifyJob(job, "", l.owner()).k8s_name;
}

JobStatus SubmitOk(Launcher& l, const JobSpec& spec) {
  auto s = l.Submit(spec);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return *s;
}

bool NoLiveDriver(const std::string& k8s_name) {
  for (int i = 0; i < 50; ++i) {
    bool live = false;
    const Json state = Double::Get().State();
    for (const auto& p : state["live_processes"]) {
      if (p.get<std::string>() == std::string(kNamespace) + "/" + k8s_name) live = true;
    }
    if (!live) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

TEST_CASE("a job runs as one RayJob: polled to success, log kept in its folder, charged GPUs x "
          "the RayJob's own start and end", "[kuberay]") {
  auto launcher = MakeLauncher(Options());
  JobSpec spec = ShellJob(UniqueName("ok"), "echo iteration 1; sleep 1; echo iteration 2");
  SubmitOk(*launcher, spec);
  JobStatus s = WaitTerminal(*launcher, spec.name);
  REQUIRE(s.state == JobState::kSucceeded);
  CHECK(s.exit_code == 0);
  CHECK(s.devices == 1);
  REQUIRE(s.start_time);
  REQUIRE(s.end_time);
  Json rj = RayJobNamed(K8s(*launcher, spec.name));
  CHECK(s.start_time == kuberay::ParseTime(rj["status"]["startTime"]));
  CHECK(s.end_time == kuberay::ParseTime(rj["status"]["endTime"]));
  CHECK(s.DeviceHours() == Approx((*s.end_time - *s.start_time) / 3600.0));
  auto log = launcher->ReadLog(spec.name);
  REQUIRE(log.ok());
  CHECK_THAT(*log, Catch::Contains("iteration 2"));
  CHECK(testing::ReadWholeFile(spec.log_path) == *log);
  CHECK_THAT(testing::ReadWholeFile(spec.job_dir + "/rayjob.yaml"),
             Catch::Contains("attune.job: \"" + spec.name + "\""));
  CHECK(Double::Get().CountAudit("rayjob_created", K8s(*launcher, spec.name)) == 1);
  CHECK(rj["metadata"]["labels"]["attune.owner"] == launcher->owner());
  // The namespace its jobs run in is part of what it says of the cluster: an agent's guard keeps
  // kubectl there (recorded in CampaignStarted.cluster).
  CHECK(launcher->Cluster().k8s_namespace == kNamespace);
  CHECK(ClusterInfoFromJson(ClusterInfoToJson(launcher->Cluster())).k8s_namespace == kNamespace);
}

TEST_CASE("Submit is idempotent by name, also from a fresh launcher that finds the job by label",
          "[kuberay]") {
  std::string records = Scratch("records");
  auto first = MakeLauncher(Options(), nullptr, records);
  JobSpec spec = ShellJob(UniqueName("idem"), "sleep 2");
  SubmitOk(*first, spec);
  SubmitOk(*first, spec);
  auto restarted = MakeLauncher(Options(), nullptr, records);
  JobStatus again = SubmitOk(*restarted, spec);
  CHECK(again.state != JobState::kUnknown);
  CHECK(WaitTerminal(*restarted, spec.name).state == JobState::kSucceeded);
  CHECK(Double::Get().CountAudit("rayjob_created", K8s(*first, spec.name)) == 1);
  std::string submissions = testing::ReadWholeFile(records + "/submissions.log");
  CHECK(std::count(submissions.begin(), submissions.end(), '\n') == 1);
}

TEST_CASE("a RayJob applied before a crash, its record lost, is adopted by label and not created "
          "again", "[kuberay]") {
  std::string records = Scratch("records");
  auto launcher = MakeLauncher(Options(), nullptr, records);
  JobSpec spec = ShellJob(UniqueName("adopt"), "sleep 1");
  SubmitOk(*launcher, spec);
  fs::remove(records + "/" + spec.name + ".json");
  auto restarted = MakeLauncher(Options(), nullptr, records);
  auto polled = restarted->Poll(spec.name);
  REQUIRE(polled.ok());
  CHECK(polled->state != JobState::kUnknown);
  SubmitOk(*restarted, spec);
  CHECK(WaitTerminal(*restarted, spec.name).state == JobState::kSucceeded);
  CHECK(Double::Get().CountAudit("rayjob_created", K8s(*restarted, spec.name)) == 1);
}

TEST_CASE("a name never submitted is unknown; another campaign's job of the same name is not ours",
          "[kuberay]") {
  auto ours = MakeLauncher(Options());
  auto poll = ours->Poll(UniqueName("never"));
  REQUIRE(poll.ok());
  CHECK(poll->state == JobState::kUnknown);
  // Campaign ids repeat across directories: same job name, other owner, other RayJob.
  JobSpec spec = ShellJob(UniqueName("twin"), "sleep 1");
  auto theirs = MakeLauncher(Options());
  SubmitOk(*theirs, spec);
  auto polled = ours->Poll(spec.name);
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kUnknown);
  SubmitOk(*ours, spec);
  CHECK(K8s(*ours, spec.name) != K8s(*theirs, spec.name));
  CHECK(WaitTerminal(*theirs, spec.name).state == JobState::kSucceeded);
  CHECK(WaitTerminal(*ours, spec.name).state == JobState::kSucceeded);
  CHECK(Double::Get().CountAudit("rayjob_created", K8s(*theirs, spec.name)) == 1);
  CHECK(Double::Get().CountAudit("rayjob_created", K8s(*ours, spec.name)) == 1);
}

TEST_CASE("a RayJob attune did not make, under the name attune would use, is refused and left "
          "alone", "[kuberay]") {
  auto launcher = MakeLauncher(Options());
  JobSpec spec = ShellJob(UniqueName("foreign"), "true");
  const std::string name = K8s(*launcher, spec.name);
  Json foreign{{"apiVersion", "ray.io/v1"}, {"kind", "RayJob"},
               {"metadata", {{"name", name}, {"labels", {{"team", "someone-else"}}}}},
               {"spec", {{"entrypoint", "sleep 5"}, {"shutdownAfterJobFinishes", true},
                         {"ttlSecondsAfterFinished", 5},
                         {"rayClusterSpec", {{"headGroupSpec", {{"template", {{"spec", {{"containers",
                             Json::array({{{"name", "ray-head"}, {"image", "img"}}})}}}}}}}}}}}};
  Run made = Kubectl({"create", "-n", kNamespace, "-f", "-"}, foreign.dump());
  REQUIRE(made.code == 0);
  auto refused = launcher->Submit(spec);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(refused.status().message(), Catch::Contains("did not create") && Catch::Contains(name));
  CHECK(RayJobNamed(name)["metadata"]["labels"]["team"] == "someone-else");
  CHECK(RayJobNamed(name)["spec"]["entrypoint"] == "sleep 5");
}

TEST_CASE("a driver that exits non-zero: failed, with Ray's exit code and message", "[kuberay]") {
  auto launcher = MakeLauncher(Options());
  JobSpec spec = ShellJob(UniqueName("exit3"), "echo about to fail; exit 3");
  SubmitOk(*launcher, spec);
  JobStatus s = WaitTerminal(*launcher, spec.name);
  CHECK(s.state == JobState::kFailed);
  CHECK(s.exit_code == 3);
  CHECK_THAT(s.reason, Catch::Contains("AppFailed") && Catch::Contains("exit code 3"));
  CHECK(s.end_time.has_value());
}

TEST_CASE("an OOMKilled driver container: out_of_memory, with the pod as evidence", "[kuberay]") {
  std::string name = UniqueName("oom");
  Double::Get().AddFaults(Json::array({{{"kind", "oom"}, {"match", name + "-*"}, {"after_s", 0.5}}}));
  auto launcher = MakeLauncher(Options());
  SubmitOk(*launcher, ShellJob(name, "sleep 30"));
  JobStatus s = WaitTerminal(*launcher, name);
  CHECK(s.state == JobState::kOutOfMemory);
  CHECK_THAT(s.reason, Catch::Contains("OOMKilled") && Catch::Contains("-head-"));
  CHECK(NoLiveDriver(K8s(*launcher, name)));
}

TEST_CASE("a node lost mid-run: node_failure, from the events about the vanished pod",
          "[kuberay]") {
  std::string name = UniqueName("lost");
  Double::Get().AddFaults(Json::array({{{"kind", "node_lost"}, {"match", name + "-*"}, {"after_s", 0.5}}}));
  auto launcher = MakeLauncher(Options());
  SubmitOk(*launcher, ShellJob(name, "sleep 30"));
  JobStatus s = WaitTerminal(*launcher, name);
  CHECK(s.state == JobState::kNodeFailure);
  CHECK_THAT(s.reason, Catch::Contains("NodeNotReady") || Catch::Contains("TaintManagerEviction"));
}

TEST_CASE("the time limit becomes activeDeadlineSeconds: timed_out (DeadlineExceeded)",
          "[kuberay]") {
  auto launcher = MakeLauncher(Options());
  JobSpec spec = ShellJob(UniqueName("deadline"), "sleep 60", 2);
  SubmitOk(*launcher, spec);
  JobStatus s = WaitTerminal(*launcher, spec.name, 30);
  CHECK(s.state == JobState::kTimedOut);
  CHECK_THAT(s.reason, Catch::Contains("DeadlineExceeded"));
  CHECK(NoLiveDriver(K8s(*launcher, spec.name)));
}

TEST_CASE("pods that cannot be scheduled (more GPUs than a node has): failed after the wait, "
          "nothing charged, RayJob deleted", "[kuberay]") {
  auto launcher = MakeLauncher(Options({{"head_gpus", 16}, {"unschedulable_timeout_s", 1}}));
  JobSpec spec = ShellJob(UniqueName("nogpu"), "true");
  JobStatus first = SubmitOk(*launcher, spec);
  CHECK(first.state == JobState::kPending);
  JobStatus s = WaitTerminal(*launcher, spec.name, 30);
  CHECK(s.state == JobState::kFailed);
  CHECK_THAT(s.reason, Catch::Contains("Insufficient nvidia.com/gpu"));
  CHECK(s.DeviceHours() == 0);
  CHECK(s.devices == 16);
  for (int i = 0; i < 50 && !RayJobNamed(K8s(*launcher, spec.name)).is_null(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(RayJobNamed(K8s(*launcher, spec.name)).is_null());
}

TEST_CASE("an image that cannot be pulled: failed with ImagePullBackOff as evidence",
          "[kuberay]") {
  std::string name = UniqueName("pull");
  Double::Get().AddFaults(Json::array({{{"kind", "image_pull"}, {"match", name + "-*"}}}));
  auto launcher = MakeLauncher(Options({{"image_pull_timeout_s", 1}}));
  SubmitOk(*launcher, ShellJob(name, "true"));
  JobStatus s = WaitTerminal(*launcher, name, 30);
  CHECK(s.state == JobState::kFailed);
  CHECK_THAT(s.reason, Catch::Contains("ImagePullBackOff") || Catch::Contains("ErrImagePull"));
}

TEST_CASE("API server 500s are retried with backoff; when they persist the call is unavailable, "
          "never a job failure", "[kuberay]") {
  auto recorded = std::make_shared<Recorded>();
  auto launcher = MakeLauncher(Options(), recorded);
  JobSpec spec = ShellJob(UniqueName("api500"), "sleep 1");
  SubmitOk(*launcher, spec);
  Double::Get().AddFaults(Json::array({{{"kind", "api_error"}, {"code", 500}, {"count", 2},
                                        {"method", "GET"}, {"path", "/rayjobs"}}}));
  auto polled = launcher->Poll(spec.name);
  REQUIRE(polled.ok());
  CHECK(recorded->sleeps == std::vector<double>{0.5, 1.0});
  Double::Get().AddFaults(Json::array({{{"kind", "api_error"}, {"code", 503}, {"count", 4},
                                        {"method", "GET"}, {"path", "/rayjobs"}}}));
  auto down = launcher->Poll(UniqueName("api503"));
  REQUIRE_FALSE(down.ok());
  CHECK(down.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(down.status().message(), Catch::Contains("not failed"));
  CHECK(WaitTerminal(*launcher, spec.name).state == JobState::kSucceeded);
}

TEST_CASE("a slow API server past the request timeout is retried", "[kuberay]") {
  auto recorded = std::make_shared<Recorded>();
  auto launcher = MakeLauncher(Options({{"request_timeout_s", 1}}), recorded);
  Double::Get().AddFaults(Json::array({{{"kind", "slow"}, {"seconds", 3}, {"count", 1},
                                        {"method", "GET"}, {"path", "/rayjobs"}}}));
  auto polled = launcher->Poll(UniqueName("slow"));
  INFO(polled.status().ToString());
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kUnknown);
  CHECK(recorded->sleeps.size() == 1);
}

TEST_CASE("Cancel deletes the RayJob and stops its driver; the job reads as cancelled",
          "[kuberay]") {
  std::string records = Scratch("records");
  auto launcher = MakeLauncher(Options(), nullptr, records);
  JobSpec spec = ShellJob(UniqueName("cancel"), "echo started; sleep 60");
  SubmitOk(*launcher, spec);
  REQUIRE(WaitState(*launcher, spec.name, JobState::kRunning).state == JobState::kRunning);
  REQUIRE(launcher->Cancel(spec.name).ok());
  auto restarted = MakeLauncher(Options(), nullptr, records);
  JobStatus s = WaitTerminal(*restarted, spec.name);
  CHECK(s.state == JobState::kCancelled);
  CHECK(s.end_time.has_value());
  CHECK(NoLiveDriver(K8s(*restarted, spec.name)));
  CHECK(RayJobNamed(K8s(*restarted, spec.name)).is_null());
  REQUIRE(restarted->Cancel(spec.name).ok());  // idempotent
  auto log = restarted->ReadLog(spec.name);
  REQUIRE(log.ok());
  CHECK_THAT(*log, Catch::Contains("started"));
  auto resubmit = restarted->Submit(spec);
  REQUIRE(resubmit.ok());
  CHECK(resubmit->state == JobState::kCancelled);
  CHECK(Double::Get().CountAudit("rayjob_created", K8s(*restarted, spec.name)) == 1);
}

TEST_CASE("a restarted launcher fetches the log from the cluster again; once the RayJob is gone "
          "the copy in the job folder answers", "[kuberay]") {
  std::string records = Scratch("records");
  auto before = MakeLauncher(Options(), nullptr, records);
  JobSpec spec = ShellJob(UniqueName("logs"), "echo line-one; sleep 6; echo line-two");
  SubmitOk(*before, spec);
  REQUIRE(WaitState(*before, spec.name, JobState::kRunning).state == JobState::kRunning);
  auto partial = before->ReadLog(spec.name);
  REQUIRE(partial.ok());
  CHECK_THAT(*partial, !Catch::Contains("line-two"));
  auto after = MakeLauncher(Options(), nullptr, records);
  REQUIRE(WaitTerminal(*after, spec.name).state == JobState::kSucceeded);
  auto whole = after->ReadLog(spec.name);
  REQUIRE(whole.ok());
  CHECK_THAT(*whole, Catch::Contains("line-one") && Catch::Contains("line-two"));
  Run deleted = Kubectl({"delete", "rayjob", K8s(*after, spec.name), "-n", kNamespace});
  REQUIRE(deleted.code == 0);
  for (int i = 0; i < 50 && !RayJobNamed(K8s(*after, spec.name)).is_null(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto later = MakeLauncher(Options(), nullptr, records);
  auto kept = later->ReadLog(spec.name);
  REQUIRE(kept.ok());
  CHECK(*kept == *whole);
  auto polled = later->Poll(spec.name);
  REQUIRE(polled.ok());
  CHECK(polled->state == JobState::kSucceeded);
}

TEST_CASE("a token scoped to team-a is refused elsewhere (403: failed_precondition, not a job "
          "failure)", "[kuberay]") {
  auto launcher = MakeLauncher(Options({{"namespace", "team-b"}}));
  auto polled = launcher->Poll(UniqueName("elsewhere"));
  REQUIRE_FALSE(polled.ok());
  CHECK(polled.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(polled.status().message(), Catch::Contains("forbidden") && Catch::Contains("team-b"));
  Run list = Kubectl({"get", "pods", "-n", "kube-system"}, "", true);
  CHECK(list.code != 0);
  CHECK_THAT(list.err, Catch::Contains("Forbidden"));
}

TEST_CASE("SidecarMode: the driver's log comes from the head pod's submitter container",
          "[kuberay]") {
  // The submitter lives in the head pod: its log goes with the RayCluster after the TTL.
  auto launcher = MakeLauncher(Options({{"submission_mode", "SidecarMode"},
                                        {"ttl_seconds_after_finished", 10}}));
  JobSpec spec = ShellJob(UniqueName("sidecar"), "echo from-the-sidecar");
  SubmitOk(*launcher, spec);
  REQUIRE(WaitTerminal(*launcher, spec.name).state == JobState::kSucceeded);
  auto log = launcher->ReadLog(spec.name);
  REQUIRE(log.ok());
  CHECK_THAT(*log, Catch::Contains("from-the-sidecar"));
}

TEST_CASE("layout workers: a CPU head and one GPU worker pod per recipe node", "[kuberay]") {
  auto launcher = MakeLauncher(Options({{"layout", "workers"}, {"gpus_per_worker", 4}}));
  JobSpec spec = ShellJob(UniqueName("workers"), "echo ray-native; sleep 3");
  spec.recipe.topology = Topology{2, 4, "H100"};
  spec.nodes = 2;
  spec.devices = 8;
  JobStatus first = SubmitOk(*launcher, spec);
  CHECK(first.devices == 8);
  int workers = 0;
  for (int i = 0; i < 50 && workers < 2; ++i) {
    workers = 0;
    const Json state = Double::Get().State();
    for (const auto& p : state["pods"]) {
      std::string pod = p["metadata"]["name"];
      if (pod.rfind(K8s(*launcher, spec.name) + "-", 0) == 0 && pod.find("-gpu-workers-worker-") != std::string::npos) {
        ++workers;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(workers == 2);
  CHECK(WaitTerminal(*launcher, spec.name).state == JobState::kSucceeded);
}

TEST_CASE("the API server double refuses an invalid RayJob with a 422 naming the field",
          "[kuberay][double]") {
  std::string bad = R"({"apiVersion": "ray.io/v1", "kind": "RayJob",
    "metadata": {"name": "bad-ttl"},
    "spec": {"entrypoint": "true", "ttlSecondsAfterFinished": "soon",
             "rayClusterSpec": {"headGroupSpec": {"template": {"spec": {"containers": [
               {"name": "ray-head", "image": "x"}]}}}}}})";
  Run r = Kubectl({"create", "-n", kNamespace, "-f", "-"}, bad, true);
  CHECK(r.code != 0);
  CHECK_THAT(r.err, Catch::Contains("is invalid") && Catch::Contains("spec.ttlSecondsAfterFinished"));
  std::string missing = R"({"apiVersion": "ray.io/v1", "kind": "RayJob",
    "metadata": {"name": "bad-workers"},
    "spec": {"rayClusterSpec": {"headGroupSpec": {"template": {}},
             "workerGroupSpecs": [{"groupName": "g", "template": {}}]}}})";
  r = Kubectl({"create", "-n", kNamespace, "-f", "-"}, missing, true);
  CHECK(r.code != 0);
  CHECK_THAT(r.err, Catch::Contains("maxReplicas"));
}

TEST_CASE("every rendered RayJob passes the API server's strict validation against the CRD",
          "[kuberay][double]") {
  Json volumes = Json::array({{{"name", "data"}, {"mount_path", "/data"}, {"pvc", "datasets"}, {"read_only", true}},
                              {{"name", "ckpt"}, {"mount_path", "/ckpt"}, {"host_path", "/mnt/ckpt"}},
                              {{"name", "cache"}, {"mount_path", "/cache"}, {"empty_dir", true}}});
  Json tolerations = Json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  std::vector<Json> variants{
      Json::object(),
      {{"volumes", volumes}, {"tolerations", tolerations}, {"node_selector", {{"gpu", "h100"}}},
       {"service_account", "trainer"}, {"image_pull_secrets", {"regcred"}}, {"shm_size", "16Gi"},
       {"image_pull_policy", "IfNotPresent"}, {"ray_start_params", {{"num-cpus", "8"}}},
       {"labels", {{"team", "llm"}}}, {"annotations", {{"example.com/owner", "me"}}},
       {"env", {{"NCCL_DEBUG", "INFO"}}}, {"working_dir", "/workspace"}},
      {{"layout", "workers"}, {"submission_mode", "SidecarMode"}, {"head_gpus", 0}}};
  int index = 0;
  for (const Json& extra : variants) {
    auto options = kuberay::ParseKubeRayOptions(Options(extra));
    REQUIRE(options.ok());
    JobSpec spec = ShellJob("render-check-" + std::to_string(index++), "python3 train.py --x 1");
    spec.launch.env = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
    auto rendered = kuberay::RenderRayJob(spec, *options,
                                          kuberay::IdentifyJob(spec.name, "render", "0123456789ab"));
    REQUIRE(rendered.ok());
    Run r = ServerValidates(rendered->manifest, kNamespace);
    INFO(extra.dump() << "\n" << r.err);
    CHECK(r.code == 0);
  }
}

}  // namespace attune::kuberay_test

namespace attune::kuberay_test {

TEST_CASE("`attune kuberay render` of the example workflow passes the API server's validation",
          "[kuberay][double]") {
  auto rendered = kuberay::RunCommand({testing::AttuneBinaryPath(), "kuberay", "render",
                                       std::string(ATTUNE_SOURCE_DIR) +
                                           "/workflows/examples/kuberay.yaml"},
                                      "", 120);
  REQUIRE(rendered.ok());
  INFO(rendered->err);
  REQUIRE(rendered->exit_code == 0);
  CHECK_THAT(rendered->out, Catch::Contains("kind: \"RayJob\""));
  auto manifest = YamlToJsonValue(rendered->out, "render");
  REQUIRE(manifest.ok());
  Run r = ServerValidates(*manifest, "ml-team");
  INFO(r.err);
  CHECK(r.code == 0);
  // The slime starting point (workflows/examples/slime-kuberay.yaml) renders and validates too.
  auto slime = kuberay::RunCommand({testing::AttuneBinaryPath(), "kuberay", "render",
                                    std::string(ATTUNE_SOURCE_DIR) +
                                        "/workflows/examples/slime-kuberay.yaml"},
                                   "", 120);
  REQUIRE(slime.ok());
  INFO(slime->err);
  REQUIRE(slime->exit_code == 0);
  CHECK_THAT(slime->out, Catch::Contains("python3 train.py --num-layers 36"));
  auto slime_manifest = YamlToJsonValue(slime->out, "render");
  REQUIRE(slime_manifest.ok());
  Run slime_run = ServerValidates(*slime_manifest, "rl-team");
  INFO(slime_run.err);
  CHECK(slime_run.code == 0);
  auto rbac = kuberay::RunCommand({testing::AttuneBinaryPath(), "kuberay", "rbac"}, "", 60);
  REQUIRE(rbac.ok());
  CHECK(rbac->exit_code == 2);
  CHECK_THAT(rbac->err, Catch::Contains("--namespace NS"));
}

TEST_CASE("the kuberay launcher keeps the launcher contract against the double (attune launcher check)",
          "[kuberay][conformance]") {
  // The CLI users run against their own cluster, here against the API server double: every clause
  // with real RayJobs (the double runs their entrypoints as local processes).
  auto r = kuberay::RunCommand({testing::AttuneBinaryPath(), "launcher", "check", "kuberay", "--with",
                                Options().dump(), "--json", "--time-limit", "5", "--job-timeout", "120"},
                               "", 600);
  REQUIRE(r.ok());
  testing::CheckSuitePassed(r->exit_code, r->out, r->err, 10);
}

}  // namespace attune::kuberay_test
