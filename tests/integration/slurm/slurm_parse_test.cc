// Tests of the Slurm launcher's pure parts: what Slurm prints → attune's states, times and
// devices; the batch script; the options. No cluster needed.
#include "slurm_parse.h"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "job_script.h"
#include "process.h"
#include "slurm_options.h"

using attune::JobState;
using namespace attune::slurm;

namespace {

// A real `scontrol show job -o` line of a finished job on the test cluster (abridged).
const char* kFailedJob =
    "JobId=1 JobName=probe1 UserId=root(0) GroupId=root(0) JobState=FAILED "
    "Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 ExitCode=3:0 "
    "RunTime=00:00:03 TimeLimit=00:01:00 SubmitTime=2026-12-02T12:33:41 "
    "StartTime=2026-12-02T12:33:41 EndTime=2026-12-02T12:33:44 Partition=debug NodeList=vm "
    "NumNodes=1 NumCPUs=1 TRES=cpu=1,node=1,billing=1 StdOut=/tmp/probe1.log";

attune::JobSpec TinySpec() {
  attune::JobSpec spec;
  spec.name = "camp-c1-0";
  spec.job_dir = "/shared/jobs/camp-c1-0";
  spec.log_path = "/shared/jobs/camp-c1-0/log.txt";
  spec.nodes = 2;
  spec.devices = 16;
  spec.time_limit_s = 61;
  spec.launch.argv = {"torchrun", "--nproc-per-node", "8", "train.py", "--name", "it's"};
  spec.launch.env = {{"NCCL_DEBUG", "INFO"}};
  return spec;
}

}  // namespace

TEST_CASE("scontrol's one-line job record gives state, exit code, times and log", "[slurm]") {
  auto job = ParseScontrolJob(kFailedJob);
  REQUIRE(job.ok());
  CHECK(job->job_id == "1");
  CHECK(job->state == "FAILED");
  CHECK(job->exit_code == 3);
  CHECK(job->std_out == "/tmp/probe1.log");
  REQUIRE(job->start_time);
  REQUIRE(job->end_time);
  CHECK(*job->end_time - *job->start_time == 3);
}

TEST_CASE("a pending job's forecast start time is never charged", "[slurm]") {
  auto job = ParseScontrolJob(
      "JobId=7 JobName=x JobState=PENDING Reason=Resources StartTime=2026-12-02T13:00:00 "
      "EndTime=2026-12-02T14:00:00 TRES=cpu=1,node=1");
  REQUIRE(job.ok());
  auto status = ToJobStatus(*job, "x", 4);
  CHECK(status.state == JobState::kPending);
  CHECK_FALSE(status.start_time);
  CHECK_FALSE(status.end_time);
  CHECK(status.DeviceHours() == 0);
  CHECK(status.reason.find("Resources") != std::string::npos);
}

TEST_CASE("a running job has a start but its forecast end is not an end", "[slurm]") {
  auto job = ParseScontrolJob(
      "JobId=8 JobName=x JobState=RUNNING Reason=None StartTime=2026-12-02T13:00:00 "
      "EndTime=2026-12-02T14:00:00 TRES=cpu=16,node=2,billing=16,gres/gpu=16");
  REQUIRE(job.ok());
  auto status = ToJobStatus(*job, "x", 1);
  CHECK(status.state == JobState::kRunning);
  CHECK(status.start_time);
  CHECK_FALSE(status.end_time);
  CHECK(status.devices == 16);  // from the allocation, not the fallback
}

TEST_CASE("every Slurm job state maps to an attune state", "[slurm]") {
  CHECK(MapSlurmState("PENDING") == JobState::kPending);
  CHECK(MapSlurmState("REQUEUED") == JobState::kPending);
  CHECK(MapSlurmState("CONFIGURING") == JobState::kRunning);
  CHECK(MapSlurmState("RUNNING") == JobState::kRunning);
  CHECK(MapSlurmState("COMPLETING") == JobState::kRunning);
  CHECK(MapSlurmState("COMPLETED") == JobState::kSucceeded);
  CHECK(MapSlurmState("FAILED") == JobState::kFailed);
  CHECK(MapSlurmState("TIMEOUT") == JobState::kTimedOut);
  CHECK(MapSlurmState("CANCELLED by 0") == JobState::kCancelled);
  CHECK(MapSlurmState("NODE_FAIL") == JobState::kNodeFailure);
  CHECK(MapSlurmState("BOOT_FAIL") == JobState::kNodeFailure);
  CHECK(MapSlurmState("OUT_OF_MEMORY") == JobState::kOutOfMemory);
  CHECK(MapSlurmState("PREEMPTED") == JobState::kPreempted);
  CHECK(MapSlurmState("DEADLINE") == JobState::kTimedOut);
  CHECK(MapSlurmState("SOMETHING_NEW") == JobState::kFailed);
}

TEST_CASE("a preempted, requeued job says so in its reason", "[slurm]") {
  auto job = ParseScontrolJob(
      "JobId=9 JobName=x JobState=PREEMPTED Reason=None Restarts=2 ExitCode=0:15 "
      "StartTime=2026-12-02T13:00:00 EndTime=2026-12-02T13:10:00 TRES=cpu=1,gres/gpu=8");
  REQUIRE(job.ok());
  auto status = ToJobStatus(*job, "x", 1);
  CHECK(status.state == JobState::kPreempted);
  CHECK(status.requeues == 2);
  CHECK(status.reason.find("PREEMPTED") != std::string::npos);
  CHECK(status.reason.find("signal 15") != std::string::npos);
  CHECK(status.DeviceHours() == Approx(8 * 600 / 3600.0));
}

TEST_CASE("sacct's parsable line reads like scontrol's record", "[slurm]") {
  auto job = ParseSacctLine(
      "42|camp-c1-0|CANCELLED by 0|0:15|2026-12-02T13:00:00|2026-12-02T13:00:30|"
      "billing=8,cpu=8,gres/gpu=8,node=1|1|None");
  REQUIRE(job.ok());
  CHECK(job->state == "CANCELLED");
  CHECK(MapSlurmState(job->state) == JobState::kCancelled);
  CHECK(job->gpus == 8);
  CHECK(*job->end_time - *job->start_time == 30);
}

TEST_CASE("Slurm's placeholder times read as absent", "[slurm]") {
  CHECK_FALSE(ParseSlurmTime("Unknown"));
  CHECK_FALSE(ParseSlurmTime("None"));
  CHECK(ParseSlurmTime("2026-12-02T12:33:41"));
}

TEST_CASE("sbatch --parsable's answer gives the job id, with or without a cluster", "[slurm]") {
  CHECK(*ParseSbatchJobId("123\n") == "123");
  CHECK(*ParseSbatchJobId("123;cluster\n") == "123");
  CHECK_FALSE(ParseSbatchJobId("sbatch: error").ok());
}

TEST_CASE("the controller being unreachable is recognised in Slurm's words", "[slurm]") {
  CHECK(SaysControllerUnreachable(
      "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect "
      "failure)"));
  CHECK_FALSE(SaysControllerUnreachable(
      "sbatch: error: Batch job submission failed: Invalid partition name specified"));
}

TEST_CASE("the batch script carries the job's #SBATCH lines and quotes every argument", "[slurm]") {
  SlurmOptions o;
  o.partition = "gpu";
  o.account = "proj1";
  o.qos = "high";
  o.gpus_per_node = 8;
  o.extra_sbatch = {"--exclusive"};
  o.env = {{"NCCL_IB_HCA", "mlx5"}};
  auto script =
      RenderJobScript(TinySpec(), o, {"/shared/log.txt", "/shared/m", "attune:0123456789ab"});
  REQUIRE(script.ok());
  for (const char* line :
       {"#SBATCH --job-name=camp-c1-0\n", "#SBATCH --nodes=2\n", "#SBATCH --gpus-per-node=8\n",
        "#SBATCH --time=2\n", "#SBATCH --partition=gpu\n", "#SBATCH --account=proj1\n",
        "#SBATCH --qos=high\n", "#SBATCH --output=/shared/log.txt\n", "#SBATCH --exclusive\n",
        "#SBATCH --no-requeue\n", "#SBATCH --comment=attune:0123456789ab\n",
        "export NCCL_IB_HCA=mlx5\n", "export NCCL_DEBUG=INFO\n", "export WORLD_SIZE=16\n",
        "scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1",
        "MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))"}) {
    INFO(line);
    CHECK(script->find(line) != std::string::npos);
  }
  CHECK(script->find(" 'it'\\''s'") != std::string::npos);  // the quote is quoted
  CHECK(script->find("--cpus-per-task") == std::string::npos);
}

TEST_CASE("a CPU cluster's script asks for CPUs and no GPUs", "[slurm]") {
  SlurmOptions o;
  o.cpus_per_task = 2;
  auto script =
      RenderJobScript(TinySpec(), o, {"/shared/log.txt", "/shared/m", "attune:0123456789ab"});
  REQUIRE(script.ok());
  CHECK(script->find("#SBATCH --cpus-per-task=2\n") != std::string::npos);
  CHECK(script->find("--gpus-per-node") == std::string::npos);
  CHECK(script->find("SRUN_CPUS_PER_TASK") != std::string::npos);
}

TEST_CASE("a value that cannot be an #SBATCH word is refused before anything runs", "[slurm]") {
  SlurmOptions o;
  o.partition = "gpu\n#SBATCH --account=someone-else";
  auto script =
      RenderJobScript(TinySpec(), o, {"/shared/log.txt", "/shared/m", "attune:0123456789ab"});
  REQUIRE_FALSE(script.ok());
  CHECK(script.status().code() == attune::StatusCode::kInvalidArgument);
  CHECK(script.status().message().find("partition") != std::string::npos);
}

TEST_CASE("time limits round up to whole minutes", "[slurm]") {
  CHECK(TimeLimitMinutes(0) == 0);
  CHECK(TimeLimitMinutes(1) == 1);
  CHECK(TimeLimitMinutes(60) == 1);
  CHECK(TimeLimitMinutes(61) == 2);
}

TEST_CASE("a misspelt launcher option is refused with the nearest name", "[slurm]") {
  auto o = ParseSlurmOptions(nlohmann::json{{"partiton", "gpu"}});
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().message().find("did you mean 'partition'?") != std::string::npos);
  auto typed = ParseSlurmOptions(nlohmann::json{{"gpus_per_node", "eight"}});
  REQUIRE_FALSE(typed.ok());
  CHECK(typed.status().message().find("gpus_per_node") != std::string::npos);
}

TEST_CASE("options from the workflow are read into the launcher's settings", "[slurm]") {
  auto o = ParseSlurmOptions(nlohmann::json{{"partition", "gpu"},
                                            {"gpus_per_node", 8},
                                            {"extra_sbatch", {"--exclusive"}},
                                            {"env", {{"A", "1"}, {"B", 2}}},
                                            {"poll_interval_s", 0.5}});
  REQUIRE(o.ok());
  CHECK(o->partition == "gpu");
  CHECK(o->gpus_per_node == 8);
  CHECK(o->extra_sbatch == std::vector<std::string>{"--exclusive"});
  CHECK(o->env.size() == 2);
  CHECK(o->poll_interval_s == 0.5);
}

TEST_CASE("a command's output is captured without a shell and a hung one is killed",
          "[slurm][process]") {
  auto ok = RunProcess({"printf", "%s|", "a b", "$HOME"});
  REQUIRE(ok.ok());
  CHECK(ok->exit_code == 0);
  CHECK(ok->out == "a b|$HOME|");
  auto failed = RunProcess({"sh", "-c", "echo oops >&2; exit 4"});
  REQUIRE(failed.ok());
  CHECK(failed->exit_code == 4);
  CHECK(failed->err == "oops\n");
  ProcessOptions quick;
  quick.timeout_s = 0.3;
  auto hung = RunProcess({"sleep", "30"}, quick);
  REQUIRE(hung.ok());
  CHECK(hung->timed_out);
  CHECK(hung->seconds < 5);
  auto missing = RunProcess({"no-such-program-attune"});
  CHECK(missing.status().code() == attune::StatusCode::kNotFound);
}
